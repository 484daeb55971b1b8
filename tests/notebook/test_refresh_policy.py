"""The refresher's pacing and the masking rule, as pure functions."""

from __future__ import annotations

import pytest

from podbook.api.ratelimit import RateLimitState, RateLimitWindow
from podbook.notebook.panels.masking import MASK, mask_env
from podbook.notebook.refresher import interval_for_quota


def state(*windows: tuple[str, int, int]) -> RateLimitState:
    return RateLimitState(
        windows=tuple(RateLimitWindow(name=n, remaining=r, reset=t) for n, r, t in windows)
    )


def test_plenty_of_quota_keeps_the_base_interval() -> None:
    plenty = state(("minute", 5990, 30), ("hour", 199_000, 1800))
    assert interval_for_quota(plenty, 1, 2.0, 60.0) == 2.0


def test_low_quota_spreads_the_remaining_requests() -> None:
    low = state(("minute", 10, 30))
    # 1 call per tick, half of 10 requests over 30 s → one tick every 6 s
    assert interval_for_quota(low, 1, 1.0, 60.0) == pytest.approx(6.0)
    assert interval_for_quota(low, 2, 1.0, 60.0) == pytest.approx(12.0)


def test_exhausted_quota_waits_for_the_reset_bounded_by_the_ceiling() -> None:
    assert interval_for_quota(state(("minute", 0, 20)), 1, 1.0, 60.0) == pytest.approx(20.5)
    assert interval_for_quota(state(("day", 0, 40_000)), 1, 1.0, 60.0) == 60.0


def test_no_rate_limit_information_keeps_the_base() -> None:
    assert interval_for_quota(None, 3, 1.5, 60.0) == 1.5


@pytest.mark.parametrize(
    "name",
    ["JUPYTER_PASSWORD", "PUBLIC_KEY", "HF_TOKEN", "aws_secret", "OPENAI_API_KEY", "db_password"],
)
def test_secret_names_are_masked(name: str) -> None:
    assert mask_env({name: "value", "PLAIN": "shown"}) == {name: MASK, "PLAIN": "shown"}
