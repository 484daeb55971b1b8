"""Fixtures of the local pod runtime tests: an emulator with ``--runtime local``.

``local_emu`` (session) is a real emulator process whose pods run for real (fast lifecycle);
``emu`` is it, so ``http`` (tests/conftest.py) is account A's raw client of it. Helpers live in ``runtime_helpers.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from runtime_helpers import LOCAL


@pytest.fixture(scope="session")
def local_emu(start_emulator: Any) -> Any:
    """An emulator whose pods run for real (``--runtime local``), shared by the session."""
    return start_emulator(extra_args=LOCAL)


@pytest.fixture
def emu(local_emu: Any) -> Any:
    """The emulator of these tests (``http`` is account A's raw client of it)."""
    return local_emu
