"""What a job panel keeps of a stream: a bounded tail, the chunks not yet sent, the count.

Kernel memory stays bounded however long the stream: the tail holds the last
:data:`TAIL_MAX` chunks, and the chunks waiting for the next batch are at most
:data:`PENDING_MAX`: the stream's reader waits for the flusher to take them
(:meth:`StreamBuffer.wait_for_room`) rather than lose any (:meth:`StreamBuffer.add` drops the
oldest only for a caller that does not wait).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

TAIL_MAX = 200
PENDING_MAX = 5_000
TAIL_ENTRY_OVERHEAD = 26
"""Bytes a tail entry adds to its chunk: ``{"i": 123, "output": ...}``."""
TAIL_RESEND_FACTOR = 4
UNANSWERED_TAIL_INTERVAL = 0.5
"""Seconds between two sends of the ``tail`` trait while no view has said ``ready``.

A view asks for the batches it missed with a ``ready`` message, but comm messages from the
front end are handled on the kernel's shell thread: while a cell runs (the next cell of a
Run All, say), the question waits, and batches sent before the view rendered are lost to
it. Trait updates go out on IOPub from the flusher thread, so until a ``ready`` has been
answered the bounded tail is resent this often (and always at the end): the view fills its
gaps from it."""
BATCH_MAX_BYTES = 2_000_000
"""A custom message carries at most about this many bytes of chunks; more go in the next."""


def json_size(value: Any) -> int:
    """Bytes of ``value`` as JSON (what the comm carries), roughly."""
    try:
        return len(json.dumps(value, default=str, ensure_ascii=False))
    except (TypeError, ValueError):
        return len(repr(value))


@dataclass(frozen=True)
class Batch:
    """Consecutive chunks ``start, start+1, ...`` for one ``{"type": "chunks"}`` message."""

    start: int
    items: list[Any]

    def message(self) -> dict[str, Any]:
        """The custom message the view ingests."""
        return {"type": "chunks", "start": self.start, "items": self.items}


class StreamBuffer:
    """Chunks of one panel's stream, numbered from 0 in arrival order (thread-safe).

    The stream pump :meth:`add`\\ s; the flusher :meth:`take` s the next batch; a view that
    renders late gets :meth:`backlog`. :meth:`tail_due` says when the ``tail`` trait is
    worth resending: once the bytes streamed since it was last sent reach
    :data:`TAIL_RESEND_FACTOR` times its size, so that keeping it current costs at most a
    quarter of the stream's own traffic (the custom messages carry the stream itself).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken = threading.Condition(self._lock)
        self._tail: deque[tuple[int, Any, int]] = deque()
        self._tail_bytes = 0
        self._pending: deque[tuple[int, Any, int]] = deque()
        self.total = 0
        self.dropped = 0
        self._bytes_since_tail = 0
        self._tail_sent_total = 0
        self._tail_sent_at = 0.0

    def add(self, output: Any) -> int:
        """Keep one chunk; returns its index."""
        size = json_size(output)
        with self._lock:
            index = self.total
            self.total += 1
            entry = (index, output, size)
            self._tail.append(entry)
            self._tail_bytes += size + TAIL_ENTRY_OVERHEAD
            if len(self._tail) > TAIL_MAX:
                self._tail_bytes -= self._tail.popleft()[2] + TAIL_ENTRY_OVERHEAD
            self._pending.append(entry)
            if len(self._pending) > PENDING_MAX:
                self._pending.popleft()
                self.dropped += 1
            self._bytes_since_tail += size
            return index

    @property
    def has_pending(self) -> bool:
        """True when chunks wait for the next batch."""
        return bool(self._pending)

    @property
    def full(self) -> bool:
        """True when :data:`PENDING_MAX` chunks wait for a batch: the next :meth:`add` would
        drop the oldest."""
        return len(self._pending) >= PENDING_MAX

    def wait_for_room(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until a :meth:`take` leaves fewer than
        :data:`PENDING_MAX` chunks waiting; True when there is room."""
        with self._taken:
            return self._taken.wait_for(lambda: len(self._pending) < PENDING_MAX, timeout)

    def take(self) -> Batch | None:
        """The next batch of consecutive pending chunks (None when nothing waits)."""
        with self._lock:
            if not self._pending:
                return None
            start = self._pending[0][0]
            items: list[Any] = []
            size = 0
            while self._pending and (not items or size < BATCH_MAX_BYTES):
                index, output, chunk_size = self._pending[0]
                if index != start + len(items):
                    break  # a gap (dropped chunks): the next batch starts after it
                self._pending.popleft()
                items.append(output)
                size += chunk_size
            self._taken.notify_all()
            return Batch(start, items)

    def backlog(self, have: int) -> Batch | None:
        """The chunks after index ``have`` still in the tail (None when there are none)."""
        with self._lock:
            entries = [(i, o) for i, o, _ in self._tail if i >= have]
        if not entries:
            return None
        return Batch(entries[0][0], [output for _, output in entries])

    def backlog_after(self, have: Any) -> Batch | None:
        """What a view that said ``{"type": "ready", "have": have}`` lacks: :meth:`backlog`
        from ``have`` (a count of chunks; anything else counts as 0)."""
        start = have if isinstance(have, int) and not isinstance(have, bool) and have > 0 else 0
        return self.backlog(start)

    def tail_to_send(self, now: float, *, final: bool, view_ready: bool) -> list[Any] | None:
        """The ``tail`` trait to send now (see :meth:`tail`), or None: always at the end of the
        stream, while no view has said ``ready`` and the tail changed (every
        :data:`UNANSWERED_TAIL_INTERVAL` seconds), and when :meth:`tail_due`."""
        unanswered = (
            not view_ready
            and self.tail_changed()
            and now - self._tail_sent_at >= UNANSWERED_TAIL_INTERVAL
        )
        if final or unanswered or self.tail_due():
            self._tail_sent_at = now
            return self.tail()
        return None

    def tail(self) -> list[dict[str, Any]]:
        """The ``tail`` trait, to be sent now: the last chunks as ``{"i": index, "output": ...}``."""
        with self._lock:
            self._bytes_since_tail = 0
            self._tail_sent_total = self.total
            return [{"i": i, "output": o} for i, o, _ in self._tail]

    def peek_tail(self) -> list[dict[str, Any]]:
        """The same list as :meth:`tail`, for a static form (not counted as sent)."""
        with self._lock:
            return [{"i": i, "output": o} for i, o, _ in self._tail]

    def tail_changed(self) -> bool:
        """True when chunks arrived since the ``tail`` trait was last sent."""
        with self._lock:
            return self._tail_sent_total != self.total

    def tail_due(self) -> bool:
        """True when the ``tail`` trait should be resent (see the class docstring)."""
        with self._lock:
            if self._tail_sent_total == self.total:
                return False
            return self._bytes_since_tail >= TAIL_RESEND_FACTOR * self._tail_bytes
