"""Server-Sent Events, read incrementally: shared by the pod log stream and the chat stream.

:class:`SseParser` takes the lines of a ``text/event-stream`` body (without their line
endings) and returns each :class:`SseEvent` a blank line completes, as the HTML standard's
event-stream interpretation says: ``data`` lines joined with newlines, ``id``, ``event``,
``retry``, comments (``:``) ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SseEvent", "SseParser"]


@dataclass
class SseEvent:
    """One dispatched Server-Sent Event."""

    data: str
    id: str | None
    event: str = "message"


@dataclass
class SseParser:
    """Incremental SSE parser: feed it lines (without their line ending), get events."""

    last_id: str | None = None
    retry_ms: int | None = None
    _data: list[str] = field(default_factory=list)
    _event: str = ""
    _pending_id: str | None = None

    def feed(self, line: str) -> SseEvent | None:
        """Take one line; return the event a blank line completes, else None."""
        if line == "":
            if not self._data:
                self._event = ""
                return None
            self.last_id = self._pending_id
            event = SseEvent("\n".join(self._data), self.last_id, self._event or "message")
            self._data, self._event = [], ""
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._pending_id = value  # the event's id once it is complete
        elif name == "event":
            self._event = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def reset_event(self) -> None:
        """Forget a half-received event (its connection dropped)."""
        self._data, self._event, self._pending_id = [], "", self.last_id
