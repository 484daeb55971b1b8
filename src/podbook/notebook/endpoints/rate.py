"""Throughput of a job's stream: tokens/s, chunks/s and the latest seed ``metrics``.

Tokens of a chunk: from its ``output_tokens`` when it reports one (the seed's sample shape),
read as the count so far while it grows from chunk to chunk (as the seed's sample and the
built-in ``stream-demo`` report it) and as the chunk's own count otherwise; else an estimate
from its text (about 4 characters a token, at least one token for a non-empty text chunk);
other chunks count no tokens. While the stream runs
the rates are over the last :data:`WINDOW_SECONDS`; once it ended, over the whole stream.
Memory is bounded: the window keeps one entry per chunk for a few seconds only.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import Any

WINDOW_SECONDS = 2.0
CHARS_PER_TOKEN = 4
_MAX_WINDOW_ENTRIES = 100_000


def chunk_text(output: Any) -> str | None:
    """The text of a text chunk (a string, or ``{"text": str | [str, ...]}``), else None."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        text = output.get("text")
        if isinstance(text, str):
            return text
        if isinstance(text, list) and all(isinstance(t, str) for t in text):
            return "".join(text)
    return None


def reported_tokens(output: Any) -> int | None:
    """The chunk's ``output_tokens`` when it has a usable one."""
    if isinstance(output, dict):
        reported = output.get("output_tokens")
        if isinstance(reported, int) and not isinstance(reported, bool) and reported >= 0:
            return reported
    return None


def chunk_tokens(output: Any, previous_reported: int | None = None) -> int:
    """Tokens in one chunk; ``previous_reported`` is the last chunk's ``output_tokens``
    (see the module docstring)."""
    reported = reported_tokens(output)
    if reported is not None:
        if previous_reported is not None and reported > previous_reported:
            return reported - previous_reported
        return reported
    text = chunk_text(output)
    if not text:
        return 0
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


class RateMeter:
    """Counts a stream's chunks and tokens and reports its rates (thread-safe)."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._window: deque[tuple[float, int]] = deque(maxlen=_MAX_WINDOW_ENTRIES)
        self.chunks = 0
        self.tokens = 0
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.metrics: dict[str, Any] | None = None
        self._first_tokens = 0
        self._last_reported: int | None = None
        self._lock = threading.Lock()

    def add(self, output: Any, metrics: dict[str, Any] | None = None) -> None:
        """Count one chunk (its ``metrics`` become the latest ones)."""
        now = self._clock()
        with self._lock:
            tokens = chunk_tokens(output, self._last_reported)
            self._last_reported = reported_tokens(output)
            if self.first_at is None:
                self.first_at = now
                self._first_tokens = tokens
            self.last_at = now
            self.chunks += 1
            self.tokens += tokens
            self._window.append((now, tokens))
            if metrics:
                self.metrics = dict(metrics)

    def snapshot(self, finished: bool = False) -> dict[str, Any]:
        """``{"tokensPerSecond", "chunksPerSecond", "metrics"}`` (metrics only when seen)."""
        with self._lock:
            tokens_rate, chunks_rate = self._overall() if finished else self._windowed()
        rate: dict[str, Any] = {
            "tokensPerSecond": round(tokens_rate, 2),
            "chunksPerSecond": round(chunks_rate, 2),
        }
        if self.metrics is not None:
            rate["metrics"] = self.metrics
        return rate

    def _overall(self) -> tuple[float, float]:
        if self.first_at is None or self.last_at is None:
            return 0.0, 0.0
        span = self.last_at - self.first_at
        if span <= 0:
            return 0.0, 0.0
        # n chunks over the span between the first and the last: n - 1 intervals
        return (self.tokens - self._first_tokens) / span, (self.chunks - 1) / span

    def _windowed(self) -> tuple[float, float]:
        now = self._clock()
        while self._window and now - self._window[0][0] > WINDOW_SECONDS:
            self._window.popleft()
        if not self._window or self.first_at is None:
            return 0.0, 0.0
        span = min(now - self.first_at, WINDOW_SECONDS)
        if span <= 0.05:
            return 0.0, 0.0
        tokens = sum(t for _, t in self._window)
        return tokens / span, len(self._window) / span
