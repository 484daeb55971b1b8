"""Pod logs (``GET /v2/pods/{id}/logs``): the Server-Sent Events wire contract.

Each event carries an ``id:`` line and a JSON ``data:`` line::

    id: 2026-06-01T12:02:03.000Z/000000000001
    data: {"ts":"2026-06-01T12:02:03.000Z","source":"container","line":"Model loaded."}

The event id is the line's timestamp, a slash and the line's sequence number within the pod
(12 digits), so ids sort like the lines and a ``Last-Event-ID`` names one line exactly.
Query ``source`` (``container`` | ``system``; both when omitted), ``tail`` (0..5000, default
100: lines backfilled before the live stream) and ``since`` (RFC 3339: resume from that time,
``tail`` ignored); the ``Last-Event-ID`` header takes precedence over both.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Literal, get_args

from pydantic import Field

from podbook.api.base import ResponseModel

__all__ = [
    "LOG_SOURCES",
    "TAIL_DEFAULT",
    "TAIL_MAX",
    "EventCursor",
    "LogLine",
    "LogSource",
    "format_event_id",
    "parse_event_id",
    "parse_rfc3339",
]

LogSource = Literal["container", "system"]
LOG_SOURCES: tuple[str, ...] = get_args(LogSource)
TAIL_DEFAULT = 100
TAIL_MAX = 5000
_SEQ_DIGITS = 12
_ID = re.compile(r"^(?P<ts>[^/\s]+)/(?P<seq>\d{1,18})$")


class LogLine(ResponseModel):
    """One log line: when, from which source, the text, and its event id (``ts/seq``)."""

    ts: str
    source: str = "container"
    line: str = ""
    id: str | None = Field(default=None, description="the SSE event id (not in the data)")

    @property
    def seq(self) -> int | None:
        """The line's sequence number within its pod, when the id carries one."""
        cursor = parse_event_id(self.id) if self.id else None
        return cursor.seq if cursor else None

    def __str__(self) -> str:
        return f"{self.ts} [{self.source}] {self.line}"


class EventCursor(ResponseModel):
    """A parsed ``Last-Event-ID``: a timestamp (epoch seconds) and, when given, a sequence."""

    ts: float
    seq: int | None = None


def format_event_id(ts: str, seq: int) -> str:
    """The event id of the ``seq``-th line of a pod, stamped ``ts``."""
    return f"{ts}/{seq:0{_SEQ_DIGITS}d}"


def parse_rfc3339(value: str) -> float | None:
    """Epoch seconds of an RFC 3339 timestamp (``Z`` or an offset), or None if it is not one."""
    text = value.strip()
    if not text or "t" not in text.lower():
        return None
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def parse_event_id(value: str) -> EventCursor | None:
    """``ts/seq`` (this endpoint's ids) or a bare RFC 3339 timestamp; None if neither."""
    match = _ID.match(value.strip())
    if match:
        ts = parse_rfc3339(match["ts"])
        return None if ts is None else EventCursor(ts=ts, seq=int(match["seq"]))
    ts = parse_rfc3339(value)
    return None if ts is None else EventCursor(ts=ts)
