"""The durations the guard options take (``90s``, ``30m``, ``4h``, ``1h30m``, seconds), how
they are shown back, and what arming a create body keeps of its ``env``."""

from __future__ import annotations

import pytest

from podbook.guard import (
    GUARD_ARGS,
    GuardSettings,
    arm,
    format_duration,
    parse_duration,
    settings_of,
)
from podbook.guard.settings import fold


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("30m", 1800),
        ("4h", 14400),
        ("1h30m", 5400),
        ("2d", 172800),
        ("1H 30M", 5400),
        (" 45s ", 45),
        ("120", 120),
        (120, 120),
        (7.0, 7),
        ("1.5s", 2),  # fractions are rounded up to whole seconds
        ("0.2", 1),
        (0.2, 1),
        ("1.5m", 90),
        ("365d", 365 * 86400),
    ],
)
def test_parse_duration_reads_whole_seconds(text: str | float, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "", "5x", "m", "1h30", "30 minutes", "-5s", True])
def test_parse_duration_refuses_what_is_not_a_duration(text: str | bool) -> None:
    with pytest.raises(ValueError, match=r"idle_stop .* is not a duration; write it like 90s"):
        parse_duration(text, "idle_stop")


@pytest.mark.parametrize("text", ["0s", "0", 0, "400d", "366d", -3])
def test_parse_duration_refuses_nothing_and_more_than_a_year(text: str | int) -> None:
    with pytest.raises(ValueError, match=r"must be more than 0 s and less than a year"):
        parse_duration(text, "max_runtime")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (5, "5s"), (90, "1m30s"), (1800, "30m"), (14400, "4h"), (5400, "1h30m"),
     (90061, "1d1h1m1s"), (4.6, "5s"), (-2, "0s")],
)  # fmt: skip
def test_format_duration_writes_what_parse_duration_reads(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
    if seconds >= 1:
        assert parse_duration(text) == round(seconds)


def test_arm_keeps_the_gpu_threshold_the_user_set_in_env() -> None:
    # docs/cost-control.md: PODBOOK_GPU_IDLE_UTIL in the pod's env changes the threshold
    body = {"image": "runpod/base:latest", "args": "python train.py",
            "env": {"PODBOOK_GPU_IDLE_UTIL": "60", "PODBOOK_IDLE_STOP": "999"}}  # fmt: skip
    armed = arm(body, GuardSettings.build(idle_stop="4s"))
    assert armed["args"] == GUARD_ARGS
    assert armed["env"]["PODBOOK_GPU_IDLE_UTIL"] == "60"
    assert armed["env"]["PODBOOK_IDLE_STOP"] == "4"  # the settings' own, not the old one
    assert armed["env"]["PODBOOK_ARGS"] == "python train.py"
    assert settings_of(armed) == GuardSettings(idle_stop=4, gpu_idle_util=60)
    # armed again (a stop/start, a template): the threshold stays, the settings are the new
    again = arm(armed, GuardSettings.build(max_runtime="1h"))
    assert again["env"]["PODBOOK_GPU_IDLE_UTIL"] == "60"
    assert settings_of(again) == GuardSettings(max_runtime=3600, gpu_idle_util=60)
    assert again["env"]["PODBOOK_ARGS"] == "python train.py"


def test_a_threshold_the_user_set_is_shown_where_the_settings_are() -> None:
    body = {"image": "runpod/base:latest", "args": "python train.py",
            "env": {"PODBOOK_GPU_IDLE_UTIL": "60"}}  # fmt: skip
    shown = fold(arm(body, GuardSettings.build(idle_stop="30m")))
    assert shown["guardSettings"]["summary"] == "idle stop 30m, GPU busy from 60%, then stop"
    assert shown["guardSettings"]["gpu_idle_util"] == 60
    default = fold(arm({**body, "env": {}}, GuardSettings.build(idle_stop="30m")))
    assert default["guardSettings"]["summary"] == "idle stop 30m, then stop"
