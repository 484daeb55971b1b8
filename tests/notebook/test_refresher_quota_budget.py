"""200 live panels in one notebook never meet a 429 at the default quotas.

The refresher reads what every live panel needs once per tick, and spreads its ticks so that
each tick spends at most a share of what the ``RateLimit`` header says is left in every
window (:func:`podbook.notebook.refresher.interval_for_quota`). Here the emulator's own rate
limiter (its default quotas: per minute, hour and day) answers every call of three hours of
ticks, on a simulated clock, for the worst case: each panel a job or health panel of its own
(one call each per tick, nothing shared), plus the pod list.
"""

from __future__ import annotations

import pytest

from podbook.api.ratelimit import parse_rate_limit_headers
from podbook.emulator.problems import Problem
from podbook.emulator.ratelimit import RateLimiter
from podbook.emulator.settings import DEFAULT_QUOTAS
from podbook.notebook.refresher import interval_for_quota

BASE_SECONDS = 1.0  # PodMagics.refresh_interval's default
CEILING_SECONDS = 60.0  # PodMagics.max_refresh_interval's default
SIMULATED_SECONDS = 3 * 3600


@pytest.mark.parametrize("panels", [1, 50, 200])
def test_panels_poll_for_hours_without_a_429(panels: int) -> None:
    now = [1_000_000.0]
    limiter = RateLimiter(dict(DEFAULT_QUOTAS), clock=lambda: now[0])
    calls_per_tick = panels + 1
    end = now[0] + SIMULATED_SECONDS
    ticks = 0
    while now[0] < end:
        try:
            for _ in range(calls_per_tick):
                headers = limiter.hit("account")
        except Problem as refused:
            pytest.fail(f"tick {ticks}, {panels} panels: {refused.detail}")
        state = parse_rate_limit_headers(headers["RateLimit"], headers["RateLimit-Policy"])
        now[0] += interval_for_quota(state, calls_per_tick, BASE_SECONDS, CEILING_SECONDS)
        ticks += 1
    per_minute = ticks / (SIMULATED_SECONDS / 60)
    if panels == 1:
        assert per_minute == pytest.approx(60, rel=0.05)  # plenty of quota: the base pace
    assert per_minute >= 1  # and never starved: panels stay live
