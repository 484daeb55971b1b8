"""Static text/plain and text/html forms of a chat turn and of a conversation.

Shown where no live view renders (terminal IPython, ``nbconvert``, a saved notebook opened
without a kernel): the question, the whole reply (as text: every value is HTML-escaped and
the reply keeps its line breaks), the timings and the error line.
"""

from __future__ import annotations

from html import escape
from typing import Any

from podbook.notebook.panels.snapshot import BOX_STYLE

_STATUS_COLORS = {
    "WAITING": "#57606a",
    "STREAMING": "#9a6700",
    "DONE": "#1a7f37",
    "STOPPED": "#6e7781",
    "FAILED": "#cf222e",
}
_TEXT = "white-space:pre-wrap;margin:4px 0 0 0;font-family:inherit"
_ROLE = "font-size:12px;color:#57606a;margin-top:6px"


def stats_text(stats: dict[str, Any]) -> str:
    """``TTFT 0.25 s · 46.9 tok/s · 10 tokens · stop``, the parts that are known."""
    parts = []
    if stats.get("ttft") is not None:
        parts.append(f"TTFT {stats['ttft']:.2f} s")
    if stats.get("tokensPerSecond") is not None:
        parts.append(f"{stats['tokensPerSecond']:.1f} tok/s")
    if stats.get("tokens") is not None:
        parts.append(f"{stats['tokens']} tokens")
    if stats.get("finishReason"):
        parts.append(str(stats["finishReason"]))
    return " · ".join(parts)


def _title(endpoint_id: str, status: str, stats: dict[str, Any]) -> str:
    model = stats.get("model")
    head = f"Chat with {endpoint_id}" + (f" ({model})" if model else "")
    return f"{head} · {status}"


def turn_text(
    endpoint_id: str, prompt: str, reply: str, status: str, stats: dict[str, Any], error: str = ""
) -> str:
    """A turn as plain text: title, timings, the question, the reply, the error."""
    lines = [_title(endpoint_id, status, stats)]
    if timing := stats_text(stats):
        lines.append(timing)
    lines.append(f"You: {prompt}")
    lines.append(f"Assistant: {reply}" if reply else "Assistant: …")
    if error:
        lines.append(f"Error: {error}")
    return "\n".join(lines)


def _message_html(role: str, content: str) -> str:
    return (
        f'<div class="podbook-chat-message" data-role="{escape(role)}">'
        f'<div style="{_ROLE}">{escape(role)}</div>'
        f'<div style="{_TEXT}">{escape(content)}</div></div>'
    )


def turn_html(
    endpoint_id: str, prompt: str, reply: str, status: str, stats: dict[str, Any], error: str = ""
) -> str:
    """A turn as HTML (escaped), the same facts as :func:`turn_text`."""
    color = _STATUS_COLORS.get(status, "#57606a")
    badge = (
        f'<span style="background:{color};color:#fff;border-radius:10px;padding:1px 8px;'
        f'font-size:12px">{escape(status)}</span>'
    )
    model = stats.get("model")
    title = f"<b>Chat with {escape(endpoint_id)}</b>" + (f" ({escape(model)})" if model else "")
    timing = stats_text(stats)
    parts = [
        f"<div>{title} {badge}</div>",
        f'<div style="{_ROLE}">{escape(timing)}</div>' if timing else "",
        _message_html("user", prompt),
        _message_html("assistant", reply or "…"),
        f'<div style="color:#cf222e">{escape(error)}</div>' if error else "",
    ]
    return (
        f'<div class="podbook-chat" data-status="{escape(status)}" style="{BOX_STYLE}">'
        + "".join(parts)
        + "</div>"
    )


def history_text(endpoint_id: str, messages: list[Any]) -> str:
    """A conversation as plain text, one ``role: content`` block per message."""
    if not messages:
        return f"No conversation with {endpoint_id} yet; start one with `%%chat {endpoint_id}`."
    lines = [f"Conversation with {endpoint_id} ({len(messages)} messages)"]
    lines.extend(f"{m.role}: {m.content}" for m in messages)
    return "\n".join(lines)


def history_html(endpoint_id: str, messages: list[Any]) -> str:
    """A conversation as HTML (escaped)."""
    if not messages:
        body = f"<div>{escape(history_text(endpoint_id, messages))}</div>"
    else:
        head = (
            f"<div><b>Conversation with {escape(endpoint_id)}</b> ({len(messages)} messages)</div>"
        )
        body = head + "".join(_message_html(m.role, str(m.content)) for m in messages)
    return f'<div class="podbook-chat-history" style="{BOX_STYLE}">{body}</div>'
