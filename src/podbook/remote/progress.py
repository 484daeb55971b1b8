"""Progress of a transfer, the summary it returns, and a plain-text progress printer.

A transfer (push, pull, sync) calls its ``progress`` callback with a :class:`Progress`
snapshot at most :data:`PROGRESS_INTERVAL` apart (about ten a second) and once more at the
end (``final``). Callbacks run on the thread that called the transfer, never on the loop's.
Every transfer returns a :class:`TransferSummary`.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TextIO

__all__ = [
    "PROGRESS_INTERVAL",
    "Progress",
    "ProgressCallback",
    "ProgressPrinter",
    "TransferSummary",
    "format_bytes",
]

PROGRESS_INTERVAL = 0.1
"""Least seconds between two progress snapshots (the final one is always sent)."""

_RATE_WINDOW = 3.0
"""Seconds of recent history the rate is measured over."""

Direction = Literal["push", "pull", "sync"]


def format_bytes(count: float) -> str:
    """``1.5 MB``: decimal units, as network rates are usually shown."""
    for unit in ("B", "kB", "MB", "GB"):
        if abs(count) < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} TB"  # pragma: no cover - the loop returns at GB


def _format_seconds(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running transfer.

    Bytes a resumed file did not need to move again count as done (and in the total), so
    ``fraction`` is the share of the job that is complete; ``rate`` counts moved bytes only.
    """

    direction: Direction
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    rate: float
    """Bytes per second over the last few seconds."""
    eta: float | None
    """Seconds left at the current rate (``None`` before there is a rate)."""
    elapsed: float
    current: str = ""
    """The file last started (a path as given, relative in a folder)."""
    final: bool = False
    """True for the snapshot sent when the transfer ended."""

    @property
    def fraction(self) -> float:
        """Share done, 0.0..1.0 (by bytes; by files when there are no bytes)."""
        if self.bytes_total:
            return min(1.0, self.bytes_done / self.bytes_total)
        if self.files_total:
            return min(1.0, self.files_done / self.files_total)
        return 1.0

    def line(self) -> str:
        """One line: ``push  3/10 files  120.0/200.0 MB  95.3 MB/s  ETA 1s``."""
        parts = [
            f"{self.direction:<4}",
            f"{self.files_done}/{self.files_total} files",
            f"{format_bytes(self.bytes_done)}/{format_bytes(self.bytes_total)}",
            f"{format_bytes(self.rate)}/s",
        ]
        if self.final:
            parts.append(f"in {_format_seconds(self.elapsed)}")
        elif self.eta is not None:
            parts.append(f"ETA {_format_seconds(self.eta)}")
        return "  ".join(parts)


ProgressCallback = Callable[[Progress], None]
"""What a transfer's ``progress=`` takes."""


@dataclass(frozen=True)
class TransferSummary:
    """What a push, pull or sync did; ``str()`` is one line."""

    direction: Direction
    files: int
    """Files moved (written under their final name)."""
    bytes: int
    """Bytes moved over the connection (resumed bytes not included)."""
    seconds: float
    skipped: int = 0
    """Files left alone: unchanged (sync)."""
    resumed_bytes: int = 0
    """Bytes a partial file from an earlier, interrupted run already held (not moved again)."""
    deleted: int = 0
    """Remote files and folders removed (sync with ``delete``)."""
    folders: int = 0
    """Folders created on the receiving side."""
    paths: tuple[str, ...] = field(default=(), repr=False)
    """The files moved (relative to the folder of a folder transfer), in order of completion."""

    @property
    def rate(self) -> float:
        """Moved bytes per second."""
        return self.bytes / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        verb = {"push": "pushed", "pull": "pulled", "sync": "synced"}[self.direction]
        noun = "file" if self.files == 1 else "files"
        text = (
            f"{verb} {self.files} {noun}, {format_bytes(self.bytes)} in {self.seconds:.1f} s "
            f"({format_bytes(self.rate)}/s)"
        )
        extras = []
        if self.skipped:
            extras.append(f"{self.skipped} unchanged")
        if self.deleted:
            extras.append(f"{self.deleted} deleted")
        if self.resumed_bytes:
            extras.append(f"{format_bytes(self.resumed_bytes)} resumed")
        return text + (f"; {', '.join(extras)}" if extras else "")


class ProgressPrinter:
    """A progress callback that prints plain text, for terminals and headless runs.

    On a terminal it rewrites one line (``\\r``) at every snapshot; elsewhere (a log, a
    notebook run by a tool) it prints a line at most every ``every`` seconds, and the last
    line always.
    """

    def __init__(self, stream: TextIO | None = None, *, every: float = 2.0) -> None:
        self._stream = stream
        self.every = every
        self._last = float("-inf")
        self._width = 0

    @property
    def stream(self) -> TextIO:
        """Where lines go (``sys.stderr`` unless given)."""
        return self._stream if self._stream is not None else sys.stderr

    def __call__(self, progress: Progress) -> None:
        """Print ``progress`` (see the class)."""
        line = progress.line()
        stream = self.stream
        interactive = bool(getattr(stream, "isatty", lambda: False)())
        if interactive:
            pad = " " * max(0, self._width - len(line))
            stream.write("\r" + line + pad + ("\n" if progress.final else ""))
            self._width = 0 if progress.final else len(line)
            stream.flush()
            return
        now = time.monotonic()
        if progress.final or now - self._last >= self.every:
            self._last = now
            stream.write(line + "\n")
            stream.flush()


class Meter:
    """Counts a transfer's files and bytes and makes throttled :class:`Progress` snapshots.

    Used on the loop's thread; ``publish`` receives each snapshot to hand over."""

    def __init__(
        self,
        direction: Direction,
        publish: Callable[[Progress], None] | None,
        *,
        files_total: int = 0,
        bytes_total: int = 0,
    ) -> None:
        self.direction: Direction = direction
        self._publish = publish
        self.files_total = files_total
        self.bytes_total = bytes_total
        self.files_done = 0
        self.bytes_done = 0
        self.moved = 0
        self.resumed = 0
        self.current = ""
        self.start = time.monotonic()
        self._last = float("-inf")
        self._samples: deque[tuple[float, int]] = deque([(self.start, 0)])

    def add_bytes(self, count: int) -> None:
        """``count`` bytes moved."""
        self.bytes_done += count
        self.moved += count
        self.tick()

    def add_resumed(self, count: int) -> None:
        """``count`` bytes a partial file already held (done without moving)."""
        self.bytes_done += count
        self.resumed += count
        self.tick()

    def file_started(self, name: str) -> None:
        """The file ``name`` starts moving."""
        self.current = name
        self.tick()

    def file_done(self) -> None:
        """One more file is complete."""
        self.files_done += 1
        self.tick()

    def elapsed(self) -> float:
        """Seconds since the meter started."""
        return time.monotonic() - self.start

    def rate(self, now: float) -> float:
        """Moved bytes per second over the last :data:`_RATE_WINDOW` seconds."""
        samples = self._samples
        samples.append((now, self.moved))
        while len(samples) > 2 and now - samples[1][0] >= _RATE_WINDOW:
            samples.popleft()
        first_time, first_bytes = samples[0]
        span = now - first_time
        return (self.moved - first_bytes) / span if span > 0 else 0.0

    def snapshot(self, *, final: bool = False) -> Progress:
        """The current state as a :class:`Progress`."""
        now = time.monotonic()
        rate = self.rate(now)
        if final:
            elapsed = now - self.start
            rate = self.moved / elapsed if elapsed > 0 else 0.0
        left = max(0, self.bytes_total - self.bytes_done)
        eta = left / rate if rate > 0 else None
        return Progress(
            direction=self.direction,
            files_done=self.files_done,
            files_total=self.files_total,
            bytes_done=self.bytes_done,
            bytes_total=self.bytes_total,
            rate=rate,
            eta=0.0 if final else eta,
            elapsed=now - self.start,
            current=self.current,
            final=final,
        )

    def tick(self) -> None:
        """Publish a snapshot if the last one is at least :data:`PROGRESS_INTERVAL` old."""
        if self._publish is None:
            return
        now = time.monotonic()
        if now - self._last >= PROGRESS_INTERVAL:
            self._last = now
            self._publish(self.snapshot())

    def finish(self) -> None:
        """Publish the final snapshot."""
        if self._publish is not None:
            self._publish(self.snapshot(final=True))
