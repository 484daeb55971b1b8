"""Fixtures of the local pod runtime tests: an emulator with ``--runtime local``.

``local_emu`` (session) is a real emulator process whose pods run for real (fast lifecycle);
``http`` is account A's raw client of it. Helpers live in ``runtime_helpers.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from runtime_helpers import LOCAL


@pytest.fixture(scope="session")
def local_emu(start_emulator: Any) -> Any:
    """An emulator whose pods run for real (``--runtime local``), shared by the session."""
    return start_emulator(extra_args=LOCAL)


@pytest.fixture
def http(local_emu: Any) -> Iterator[httpx.Client]:
    """Account A's raw client of ``local_emu``."""
    with local_emu.http() as client:
        yield client
