"""Fixtures of the local pod runtime tests: an emulator with ``--runtime local``.

``local_emu`` (session) is a real emulator process whose pods run for real (fast lifecycle),
in the process runtime; ``either_emu`` is one in each mode (process runtime, sandbox);
``emu`` is it, so ``http`` (tests/conftest.py) is account A's raw client of it. Helpers live in ``runtime_helpers.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from runtime_helpers import BOXED, LOCAL


@pytest.fixture(scope="session")
def local_emu(start_emulator: Any) -> Any:
    """An emulator whose pods run for real (``--runtime local``), shared by the session."""
    return start_emulator(extra_args=LOCAL)


@pytest.fixture(scope="session", params=["process", "sandbox"])
def either_emu(request: pytest.FixtureRequest, start_emulator: Any) -> Any:
    """An emulator in each mode in turn: the process runtime, then the bubblewrap sandbox
    (for what must hold in both)."""
    return start_emulator(extra_args=LOCAL if request.param == "process" else BOXED)


@pytest.fixture
def emu(local_emu: Any) -> Any:
    """The emulator of these tests (``http`` is account A's raw client of it)."""
    return local_emu
