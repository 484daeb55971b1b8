"""Worker logs: what the broker saw of one worker, as ``/workers/{workerId}/logs`` serves it.

Each worker keeps its last :data:`MAX_LINES` lines in memory (workers are ephemeral: one
that is gone, or whose endpoint is deleted, takes its log with it). Lines are ``system``
lines written by the broker: the worker connected, a job started on it, it was told to stop
a job, a job of it ended. The wire format is the pod logs' (:mod:`podbook.api.logs`): event
id ``ts/seq``, JSON ``data`` with ``ts``, ``source`` and ``line``.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from podbook.emulator.podlogs import StoredLine

MAX_LINES = 1000


@dataclass
class WorkerLog:
    """The recent lines of one worker, numbered from 1."""

    lines: deque[StoredLine] = field(default_factory=lambda: deque(maxlen=MAX_LINES))
    seq: int = 0

    def note(self, text: str, source: str = "system") -> None:
        """Append a line stamped now."""
        self.seq += 1
        self.lines.append(StoredLine(self.seq, time.time(), source, text))

    def _pick(self, source: str | None) -> list[StoredLine]:
        return [line for line in self.lines if source is None or line.source == source]

    def tail(self, count: int, source: str | None) -> list[StoredLine]:
        """The last ``count`` lines (of ``source``)."""
        return self._pick(source)[-count:] if count else []

    def after_seq(self, seq: int, source: str | None) -> list[StoredLine]:
        """The lines after line number ``seq``."""
        return [line for line in self._pick(source) if line.seq > seq]

    def from_time(self, ts: float, *, inclusive: bool, source: str | None) -> list[StoredLine]:
        """The lines stamped at (``inclusive``) or after ``ts``."""
        return [
            line for line in self._pick(source) if line.ts > ts or (inclusive and line.ts == ts)
        ]
