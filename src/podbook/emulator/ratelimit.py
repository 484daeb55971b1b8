"""Per-account request quotas over fixed minute/hour/day windows.

Every authenticated response carries ``RateLimit`` (remaining ``r`` and seconds to reset
``t`` per window) and ``RateLimit-Policy`` (quota ``q`` and window length ``w``), as
structured-field lists in the reference document's form
(``"minute";r=0;t=12, "hour";r=2800;t=1812, ...``). The live header is formatted here
directly (it is on every response's hot path); the policy header, which never changes, with
:mod:`podbook.api.ratelimit`, whose parser the tests use on both. A request over any quota answers 429
with ``Retry-After`` and a detail naming the window. Rejected requests do not count.
Counters live in memory: a restarted emulator starts with fresh windows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from podbook.api.ratelimit import format_ratelimit_policy
from podbook.emulator.problems import Problem
from podbook.emulator.settings import WINDOWS


@dataclass
class _Window:
    name: str
    length: int
    quota: int
    start: float = 0.0
    used: int = 0


@dataclass
class _AccountWindows:
    windows: list[_Window] = field(default_factory=list)


class RateLimiter:
    """Counts requests per account and renders the rate-limit headers."""

    def __init__(self, quotas: dict[str, int], clock: Callable[[], float] = time.time) -> None:
        self._quotas = {name: quotas[name] for name in WINDOWS if name in quotas}
        self._clock = clock
        self._accounts: dict[str, _AccountWindows] = {}
        self.policy_header = format_ratelimit_policy(
            (name, quota, WINDOWS[name]) for name, quota in self._quotas.items()
        )

    def _windows(self, account_id: str, now: float) -> list[_Window]:
        state = self._accounts.get(account_id)
        if state is None:
            state = _AccountWindows(
                [_Window(name, WINDOWS[name], quota) for name, quota in self._quotas.items()]
            )
            self._accounts[account_id] = state
        for window in state.windows:
            if now >= window.start + window.length:
                window.start = now - (now % window.length)
                window.used = 0
        return state.windows

    def peek(self, account_id: str) -> dict[str, str]:
        """The headers for ``account_id`` without counting a request (never raises)."""
        return self.hit(account_id, count=False)

    def hit(self, account_id: str, *, count: bool = True) -> dict[str, str]:
        """Count one request; return the headers, or raise a 429 :class:`Problem`."""
        now = self._clock()
        windows = self._windows(account_id, now)
        if not count:
            return self._headers(windows, now)
        exhausted = [w for w in windows if w.used >= w.quota]
        if not exhausted:
            for window in windows:
                window.used += 1
        headers = self._headers(windows, now)
        if exhausted:
            window = max(exhausted, key=lambda w: self._reset_in(w, now))
            retry_after = self._reset_in(window, now)
            raise Problem(
                429,
                f"rate limit exceeded for the {window.name} window "
                f"({window.quota} requests per {window.length} s); retry after {retry_after} s",
                headers={**headers, "Retry-After": str(retry_after)},
            )
        return headers

    def _headers(self, windows: list[_Window], now: float) -> dict[str, str]:
        return {
            "RateLimit": ", ".join(
                f'"{w.name}";r={max(0, w.quota - w.used)};t={self._reset_in(w, now)}'
                for w in windows
            ),
            "RateLimit-Policy": self.policy_header,
        }

    @staticmethod
    def _reset_in(window: _Window, now: float) -> int:
        return max(1, math.ceil(window.start + window.length - now))
