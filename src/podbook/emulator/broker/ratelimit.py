"""Per-operation queue limits of the seed: per account, per endpoint, per 10 s and at once.

Fixed 10-second windows count requests; a concurrency counter holds the requests in flight
(a long-poll counts for its whole wait). Beyond either: 429 ``{"error": ...}`` with
``Retry-After``. Rejected requests do not count. The rate is the higher of the base and the
endpoint's connected workers times the per-worker rate (``limits.PER_WORKER_RATE``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from podbook.emulator.broker.errors import QueueRefusal
from podbook.emulator.broker.limits import (
    OPERATION_LIMITS,
    PER_WORKER_RATE,
    RATE_WINDOW_SECONDS,
    OperationLimit,
)


@dataclass
class Counted:
    """One operation's counts on one endpoint: its 10 s window and the requests in flight."""

    window_start: float = 0.0
    used: int = 0
    in_flight: int = 0


class QueueRateLimiter:
    """Counts queue operations per ``(account, endpoint, operation)``."""

    def __init__(
        self,
        overrides: dict[str, tuple[int, int | None]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = dict(OPERATION_LIMITS)
        for op, (rate, concurrent) in (overrides or {}).items():
            self._limits[op] = OperationLimit(rate, concurrent)
        self._clock = clock
        self._counters: dict[tuple[str, str, str], Counted] = {}

    def acquire(
        self, account_id: str, endpoint_id: str, op: str, workers: int = 0
    ) -> Counted | None:
        """Count one request (429 :class:`QueueRefusal` beyond); release it when it ends.

        ``workers`` is the number of workers connected to the endpoint: the rate per 10 s is
        the higher of the base and ``workers`` times the operation's per-worker rate.
        """
        limit = self._limits.get(op)
        if limit is None:
            return None
        rate = max(limit.rate, workers * PER_WORKER_RATE.get(op, 0))
        key = (account_id, endpoint_id, op)
        counter = self._counters.get(key)
        if counter is None:
            counter = self._counters[key] = Counted()
        now = self._clock()
        if now >= counter.window_start + RATE_WINDOW_SECONDS:
            counter.window_start = now - (now % RATE_WINDOW_SECONDS)
            counter.used = 0
        if counter.used >= rate:
            wait = max(1, math.ceil(counter.window_start + RATE_WINDOW_SECONDS - now))
            raise QueueRefusal(
                429,
                f"rate limit for /{op} exceeded ({rate} requests per 10 s on this "
                f"endpoint); retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )
        if limit.concurrent is not None and counter.in_flight >= limit.concurrent:
            raise QueueRefusal(
                429,
                f"too many concurrent /{op} requests ({limit.concurrent} at once on this "
                "endpoint); retry after 1 s",
                headers={"Retry-After": "1"},
            )
        counter.used += 1
        counter.in_flight += 1
        return counter

    @staticmethod
    def release(counter: Counted | None) -> None:
        """End a request counted by :meth:`acquire`."""
        if counter is not None:
            counter.in_flight -= 1
