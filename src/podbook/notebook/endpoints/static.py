"""Static text/plain and text/html forms of the job and health panels.

Shown where no live view renders (terminal IPython, ``nbconvert``, a saved notebook opened
without a kernel). They show the end of the stream (the tail), the final status and
timings, the rate, and the handler's error with its traceback folded in a ``<details>``.
Every value is HTML-escaped.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

from podbook.notebook.endpoints.rate import chunk_text
from podbook.notebook.panels.snapshot import BOX_STYLE, status_badge

if TYPE_CHECKING:
    from podbook.notebook.panels.data import JsonDict

TEXT_TAIL_CHARS = 2_000
JSON_PREVIEW_CHARS = 200
_STATUS_COLORS = {
    "COMPLETED": "#1a7f37",
    "IN_PROGRESS": "#9a6700",
    "IN_QUEUE": "#57606a",
    "FAILED": "#cf222e",
    "TIMED_OUT": "#cf222e",
    "CANCELLED": "#6e7781",
}
HEALTH_COUNTS = (
    ("jobs", "completed"),
    ("jobs", "failed"),
    ("jobs", "inProgress"),
    ("jobs", "inQueue"),
    ("jobs", "retried"),
    ("workers", "idle"),
    ("workers", "running"),
)


def duration_text(ms: Any) -> str:
    """``340 ms``, ``1.25 s`` or ``-``."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms < 0:
        return "-"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def _json_preview(value: Any, limit: int = JSON_PREVIEW_CHARS) -> str:
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stream_text(tail: list[JsonDict], chunks: int) -> str:
    """The end of the stream as text: text chunks joined, other chunks as one JSON line."""
    parts = []
    for entry in tail:
        text = chunk_text(entry.get("output"))
        parts.append(text if text is not None else "\n" + _json_preview(entry.get("output")) + "\n")
    text = "".join(parts)
    hidden = chunks - len(tail)
    if len(text) > TEXT_TAIL_CHARS:
        text = "…" + text[-TEXT_TAIL_CHARS:]
    elif hidden > 0:
        text = f"… ({hidden} earlier chunks)\n" + text
    return text


def rate_text(rate: JsonDict) -> str:
    """``12.3 tok/s · 4.0 chunks/s`` plus the latest metrics, or ``""``."""
    if not rate:
        return ""
    parts = []
    if isinstance(rate.get("tokensPerSecond"), (int, float)):
        parts.append(f"{rate['tokensPerSecond']:.1f} tok/s")
    if isinstance(rate.get("chunksPerSecond"), (int, float)):
        parts.append(f"{rate['chunksPerSecond']:.1f} chunks/s")
    metrics = rate.get("metrics") or {}
    parts += [f"{k}={v}" for k, v in metrics.items() if isinstance(v, (int, float, str))]
    return " · ".join(parts)


def _error_lines(job: JsonDict) -> tuple[str, str]:
    error = job.get("error") or {}
    if not error:
        return "", ""
    line = ": ".join(p for p in (error.get("type"), error.get("message")) if p) or "failed"
    return line, str(error.get("traceback") or "")


def job_text(
    job: JsonDict, tail: list[JsonDict], chunks: int, rate: JsonDict, error: str = ""
) -> str:
    """A few readable lines: status, timings, rate, the end of the stream, the error."""
    lines = [
        f"Job {job.get('id', '?')} on {job.get('endpointId', '?')} — {job.get('status', '?')}",
        f"  delay {duration_text(job.get('delayTime'))} · "
        f"execution {duration_text(job.get('executionTime'))} · {chunks} chunk(s)",
    ]
    if rate_line := rate_text(rate):
        lines.append(f"  {rate_line}")
    if tail:
        lines += ["  " + line for line in stream_text(tail, chunks).splitlines()]
    elif job.get("output") is not None:
        output = job["output"]
        text = chunk_text(output)
        lines.append(f"  output: {text if text is not None else _json_preview(output, 2000)}")
    failure, traceback = _error_lines(job)
    if failure:
        lines.append(f"  failed: {failure}")
        lines += ["    " + line for line in traceback.splitlines()[-6:]]
    if error:
        lines.append(f"  error: {error}")
    return "\n".join(lines)


def _stream_html(tail: list[JsonDict], chunks: int) -> str:
    hidden = chunks - len(tail)
    parts = [f"<div><i>… {hidden} earlier chunk(s)</i></div>"] if hidden > 0 else []
    text_run: list[str] = []

    def close_run() -> None:
        if text_run:
            parts.append(f'<pre class="podbook-text">{escape("".join(text_run))}</pre>')
            text_run.clear()

    for entry in tail:
        output = entry.get("output")
        text = chunk_text(output)
        if text is not None:
            text_run.append(text)
            continue
        close_run()
        parts.append(
            f'<details class="podbook-json"><summary><code>{escape(_json_preview(output))}'
            f"</code></summary><pre>{escape(json.dumps(output, indent=2, default=str))}</pre>"
            "</details>"
        )
    close_run()
    return f'<div class="podbook-stream">{"".join(parts)}</div>'


def job_html(
    job: JsonDict, tail: list[JsonDict], chunks: int, rate: JsonDict, error: str = ""
) -> str:
    """A static HTML card of one job."""
    status = str(job.get("status") or "?")
    body = ""
    if tail:
        body = _stream_html(tail, chunks)
    elif job.get("output") is not None:
        body = f"<pre>{escape(_json_preview(job['output'], 4000))}</pre>"
    failure, traceback = _error_lines(job)
    failure_html = ""
    if failure:
        folded = (
            f"<details><summary>Traceback</summary><pre>{escape(traceback)}</pre></details>"
            if traceback
            else ""
        )
        failure_html = (
            f'<div class="podbook-error" style="color:#cf222e">{escape(failure)}{folded}</div>'
        )
    notice = (
        f'<div class="podbook-error" style="color:#cf222e">{escape(error)}</div>' if error else ""
    )
    rate_line = rate_text(rate)
    badge = status_badge(status, _STATUS_COLORS)
    return (
        f'<div class="podbook-job" data-status="{escape(status)}" data-chunks="{chunks}" '
        f'style="{BOX_STYLE}"><div><b>Job</b> <code>{escape(str(job.get("id", "?")))}</code> '
        f"on <code>{escape(str(job.get('endpointId', '?')))}</code> {badge}</div>"
        f"<div>delay {escape(duration_text(job.get('delayTime')))} · execution "
        f"{escape(duration_text(job.get('executionTime')))} · {chunks} chunk(s)</div>"
        + (f'<div data-metric="tokensPerSecond">{escape(rate_line)}</div>' if rate_line else "")
        + f"{body}{failure_html}{notice}</div>"
    )


def health_counts(health: JsonDict) -> list[tuple[str, Any]]:
    """``[(name, count), ...]`` in the panel's order (``-`` where the body lacks one)."""
    return [(name, (health.get(group) or {}).get(name, "-")) for group, name in HEALTH_COUNTS]


def health_text(endpoint_id: str, health: JsonDict, error: str = "", timeline: str = "") -> str:
    """One endpoint's health: job and worker counts (and the worker timeline's summary)."""
    counts = health_counts(health)
    lines = [
        f"Endpoint {endpoint_id} — jobs: "
        + ", ".join(f"{n} {v}" for n, v in counts[:5])
        + " · workers: "
        + ", ".join(f"{n} {v}" for n, v in counts[5:])
    ]
    if timeline:
        lines.append(f"  {timeline}")
    if error:
        lines.append(f"  error: {error}")
    return "\n".join(lines)


def health_html(endpoint_id: str, health: JsonDict, error: str = "", timeline: str = "") -> str:
    """A static HTML card of one endpoint's health (and the worker timeline's summary)."""
    cells = "".join(
        f'<td data-count="{escape(name)}" style="padding:2px 8px">'
        f"<b>{escape(str(value))}</b> {escape(name)}</td>"
        for name, value in health_counts(health)
    )
    notice = (
        f'<div class="podbook-error" style="color:#cf222e">{escape(error)}</div>' if error else ""
    )
    return (
        f'<div class="podbook-health" data-endpoint-id="{escape(endpoint_id)}" '
        f'style="{BOX_STYLE}"><div><b>Endpoint</b> <code>{escape(endpoint_id)}</code></div>'
        f"<table><tr>{cells}</tr></table>"
        + (f'<div class="podbook-timeline-summary">{escape(timeline)}</div>' if timeline else "")
        + f"{notice}</div>"
    )
