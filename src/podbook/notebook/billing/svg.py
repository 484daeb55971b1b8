"""The static form of a billing chart: an SVG stacked bar chart and a table, as HTML.

Shown where no widget renders (a saved notebook without a kernel, nbconvert). Colors of
text and axes follow JupyterLab's theme variables (with light fallbacks); bars carry
``<title>`` tooltips. The drawing mirrors ``views/billing.js``.
"""

from __future__ import annotations

from html import escape
from typing import Any

from podbook.notebook.billing.chart import money, nice_max

WIDTH, HEIGHT = 560, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 12, 48
TICKS = 4
_TEXT = "fill:var(--jp-ui-font-color1,#24292f)"
_AXIS = "stroke:var(--jp-border-color1,#8c959f)"
_GRID = "stroke:var(--jp-border-color2,#d0d7de)"
_FONT = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:11px"


def bar_layout(chart: dict[str, Any]) -> list[dict[str, Any]]:
    """Every bar segment: bucket index, series key, x, y, width, height, amount."""
    buckets = chart["buckets"]
    top = nice_max(max((sum(b["values"].values()) for b in buckets), default=0.0))
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    slot = plot_w / max(1, len(buckets))
    width = max(1.0, slot * 0.7)
    segments = []
    for index, bucket in enumerate(buckets):
        base = 0.0
        for series in chart["series"]:
            amount = bucket["values"].get(series["key"], 0.0)
            if amount <= 0:
                continue
            y_top = TOP + plot_h * (1 - (base + amount) / top)
            y_base = TOP + plot_h * (1 - base / top)
            segments.append(
                {
                    "bucket": index,
                    "key": series["key"],
                    "color": series["color"],
                    "label": series["label"],
                    "x": LEFT + slot * index + (slot - width) / 2,
                    "y": y_top,
                    "width": width,
                    "height": max(0.5, y_base - y_top),
                    "amount": amount,
                }
            )
            base += amount
    return segments


def render_svg(chart: dict[str, Any]) -> str:
    """The chart as one ``<svg>`` element."""
    buckets = chart["buckets"]
    top = nice_max(max((sum(b["values"].values()) for b in buckets), default=0.0))
    plot_h = HEIGHT - TOP - BOTTOM
    parts = [
        f'<svg class="podbook-billing-svg" xmlns="http://www.w3.org/2000/svg" '
        f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(chart["title"])}" style="{_FONT}">'
    ]
    for tick in range(TICKS + 1):
        value = top * tick / TICKS
        y = TOP + plot_h * (1 - tick / TICKS)
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" style="{_GRID}"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" style="{_TEXT}">'
            f"{escape(money(value))}</text>"
        )
    parts.append(
        f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + plot_h}" style="{_AXIS}"/>'
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" '
        f'style="{_AXIS}"/>'
    )
    for seg in bar_layout(chart):
        bucket = buckets[seg["bucket"]]
        tip = f"{bucket['label']} · {seg['label']}: {money(seg['amount'])}"
        parts.append(
            f'<rect class="podbook-billing-bar" data-key="{escape(seg["key"])}" x="{seg["x"]:.1f}" '
            f'y="{seg["y"]:.1f}" width="{seg["width"]:.1f}" height="{seg["height"]:.1f}" '
            f'fill="{seg["color"]}"><title>{escape(tip)}</title></rect>'
        )
    slot = (WIDTH - LEFT - RIGHT) / max(1, len(buckets))
    every = max(1, round(len(buckets) / 8))
    for index, bucket in enumerate(buckets):
        if index % every:
            continue
        x = LEFT + slot * (index + 0.5)
        parts.append(
            f'<text x="{x:.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" '
            f'style="{_TEXT}">{escape(bucket["label"])}</text>'
        )
    x = LEFT
    for series in chart["series"]:
        parts.append(
            f'<rect x="{x}" y="{HEIGHT - 16}" width="10" height="10" fill="{series["color"]}"/>'
            f'<text x="{x + 14}" y="{HEIGHT - 7}" style="{_TEXT}">{escape(series["label"])}</text>'
        )
        x += 24 + 7 * len(series["label"])
    parts.append("</svg>")
    return "".join(parts)


def render_table(chart: dict[str, Any]) -> str:
    """Totals per series and the grand total, as an HTML table."""
    cell = "padding:2px 8px;text-align:left;border-bottom:1px solid var(--jp-border-color2,#eaeef2)"
    rows = "".join(
        f'<tr><td style="{cell}"><span style="color:{s["color"]}">■</span> '
        f'{escape(s["label"])}</td><td style="{cell};text-align:right">'
        f"{escape(money(chart['totals'].get(s['key'], 0.0)))}</td></tr>"
        for s in chart["series"]
    )
    rows += (
        f'<tr><th style="{cell}">Total</th><th style="{cell};text-align:right">'
        f"{escape(money(chart['total']))}</th></tr>"
    )
    return f'<table class="podbook-billing-table" style="border-collapse:collapse;font-size:13px">{rows}</table>'


def render_html(chart: dict[str, Any]) -> str:
    """The static panel: title, window, the SVG chart and the table beside it."""
    window = chart["window"]
    head = (
        f"<div><b>{escape(chart['title'])}</b> · per {escape(chart['bucketSize'])} · "
        f"{escape(window['start'])} → {escape(window['end'])}</div>"
    )
    return (
        '<div class="podbook-billing" style="font-family:system-ui,sans-serif;'
        f'color:var(--jp-ui-font-color1,#24292f)">{head}'
        '<div style="display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap">'
        f"{render_svg(chart)}{render_table(chart)}</div></div>"
    )


def render_text(chart: dict[str, Any]) -> str:
    """The text/plain form: one line per series, then the total."""
    lines = [f"{chart['title']} per {chart['bucketSize']} ({len(chart['buckets'])} buckets)"]
    for series in chart["series"]:
        lines.append(f"  {series['label']}: {money(chart['totals'].get(series['key'], 0.0))}")
    lines.append(f"  total: {money(chart['total'])}")
    return "\n".join(lines)
