"""Worker logs: what the broker saw of one worker, as ``/workers/{workerId}/logs`` serves it.

Each worker keeps its last :data:`MAX_LINES` lines in memory (workers are ephemeral: one
that is gone, or whose endpoint is deleted, takes its log with it). Lines are ``system``
lines written by the broker: the worker connected, a job started on it, it was told to stop
a job, a job of it ended. The wire format is the pod logs' (:mod:`podbook.api.logs`): event
id ``ts/seq``, JSON ``data`` with ``ts``, ``source`` and ``line``.

Lines are kept in blocks of :data:`BLOCK_LINES`, each block one JSON string, not as a record
a line: a worker of a long drain writes two lines a job, and what it keeps lies spread over
the heap that the drain's jobs freed; every object kept holds a page of that heap after the
drain. With four objects a line the thousand lines held about 11 MB after 30,000 jobs, with
one string a line 4 MB (``bench/scale.py``); a block holds one or two pages for fifty lines.
The records are built when read (a ``/logs`` call), which is rare beside writing.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass, field

from podbook.emulator.podlogs import StoredLine

MAX_LINES = 1000
BLOCK_LINES = 50
"""Lines a block holds; the log keeps whole blocks, at most one more than it must."""


@dataclass
class WorkerLog:
    """The recent lines of one worker, numbered from 1."""

    blocks: deque[str] = field(default_factory=deque)
    """Full blocks, oldest first: each the JSON list of :data:`BLOCK_LINES` lines."""
    recent: list[list[object]] = field(default_factory=list)
    """The lines after the last block, each ``[seq, ts, source, text]``."""
    seq: int = 0

    def note(self, text: str, source: str = "system") -> None:
        """Append a line stamped now."""
        self.seq += 1
        self.recent.append([self.seq, time.time(), source, text])
        if len(self.recent) < BLOCK_LINES:
            return
        self.blocks.append(json.dumps(self.recent))
        self.recent = []
        while (len(self.blocks) - 1) * BLOCK_LINES >= MAX_LINES:
            self.blocks.popleft()

    def _pick(self, source: str | None) -> list[StoredLine]:
        rows = [row for block in self.blocks for row in json.loads(block)] + self.recent
        return [
            StoredLine(*row)  # type: ignore[arg-type]
            for row in rows[-MAX_LINES:]
            if source is None or row[2] == source
        ]

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
