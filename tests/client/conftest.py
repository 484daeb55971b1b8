"""Fixtures of the client tests (the shared ``emulator`` and ``client`` are in tests/conftest.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

CONFIG_VARS = (
    "RUNPOD_API_KEY",
    "RUNPOD_PROFILE",
    "PODBOOK_URL",
    "PODBOOK_REST_URL",
    "PODBOOK_QUEUE_URL",
    "PODBOOK_V1_URL",
    "PODBOOK_LOCAL",
    "PODBOOK_HOME",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No podbook/runpod configuration at all, and a fresh empty HOME; returns that HOME."""
    for name in CONFIG_VARS:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PODBOOK_HOME", str(home / ".podbook"))
    return home


def _stop_recorded_emulator(podbook_home: Path) -> None:
    try:
        pid = json.loads((podbook_home / "emulator.json").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(int(pid), signal.SIGTERM)


@pytest.fixture
def podbook_home(clean_env: Path) -> Iterator[Path]:
    """A temporary ``PODBOOK_HOME``; an emulator the test started there is stopped after."""
    home = clean_env / ".podbook"
    yield home
    _stop_recorded_emulator(home)


@pytest.fixture
def anyio_backend() -> str:
    """Run the async tests on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session")
def paced_emulator(start_emulator):
    """An emulator whose lifecycle steps take 0.6 s each: slow enough that a poll every
    50 ms sees every status even on a busy 2-core machine."""
    return start_emulator(timings=("--provision-seconds", "0.6", "--start-seconds", "0.6"))
