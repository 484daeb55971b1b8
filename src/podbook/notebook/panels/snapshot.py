"""Static text/plain and text/html pieces the panels of several families share: the box and
table styles, the error line, plain and HTML tables of rows (the pods' own forms are in
:mod:`podbook.notebook.pods.static`).

Used where no live kernel renders the widget view: terminal IPython, ``nbconvert``, a saved
notebook opened without a kernel. Every value is HTML-escaped; env values are already masked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

BOX_STYLE = "font-family:system-ui,sans-serif;border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;max-width:760px"
TABLE_STYLE = "border-collapse:collapse;font-size:13px"
CELL_STYLE = "padding:2px 8px;text-align:left;border-bottom:1px solid #eaeef2"


def status_badge(status: str, colors: Mapping[str, str]) -> str:
    """A status as a coloured pill (``colors``: status → background; grey for the others)."""
    color = colors.get(status, "#57606a")
    return (
        f'<span class="podbook-status" style="background:{color};color:#fff;border-radius:10px;'
        f'padding:1px 8px;font-size:12px">{escape(status)}</span>'
    )


def error_html(error: str) -> str:
    """The red error line of a static form; "" without an error."""
    if not error:
        return ""
    return f'<div class="podbook-error" style="color:#cf222e;white-space:pre-wrap">{escape(error)}</div>'


def table_text(rows: Sequence[Mapping[str, object]], columns: list[str]) -> str:
    """A plain-text table of catalog rows."""
    cells = [columns] + [[_flat(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells)


def table_html(rows: Sequence[Mapping[str, object]], columns: list[str], title: str) -> str:
    """A static HTML table of catalog rows."""
    head = "".join(f'<th style="{CELL_STYLE}">{escape(c)}</th>' for c in columns)
    body = "".join(
        "<tr>"
        + "".join(f'<td style="{CELL_STYLE}">{escape(_flat(r.get(c)))}</td>' for c in columns)
        + "</tr>"
        for r in rows
    )
    return (
        f'<div class="podbook-catalog" style="{BOX_STYLE}"><div><b>{escape(title)}</b></div>'
        f'<table style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )


def _flat(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_flat(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value)
    return str(value)
