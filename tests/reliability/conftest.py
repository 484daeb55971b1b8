"""Fixtures shared by the fault tests: one fast emulator per module and a raw client of it."""

from __future__ import annotations

from typing import Any

import pytest
from faults_helpers import FAST_BROKER, QUEUE_TIME_SCALE


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """An emulator whose queue durations (webhook pause included) run ten times faster."""
    return start_emulator(extra_args=(*FAST_BROKER, "--queue-time-scale", str(QUEUE_TIME_SCALE)))
