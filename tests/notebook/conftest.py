"""Fixtures for the notebook tests: a real IPython shell with podbook loaded, pointed at the
session emulator, and a recording comm that keeps every widget message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import CommRecorder, podbook_loaded, point_at
from traitlets.config import Config


@pytest.fixture(scope="session")
def shell() -> InteractiveShell:
    """The one real InteractiveShell of the test session (history off)."""
    config = Config()
    config.HistoryManager.enabled = False
    return InteractiveShell.instance(config=config)


@pytest.fixture
def nb_env(emulator: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    """Environment that points podbook at the session emulator (never the real service)."""
    point_at(monkeypatch, emulator, tmp_path / "podbook-home")
    return emulator


@pytest.fixture
def ip(shell: InteractiveShell, nb_env: Any) -> Iterator[InteractiveShell]:
    """The shell with ``%load_ext podbook`` done (fast refreshes), unloaded afterwards."""
    with podbook_loaded(shell, "PodMagics.refresh_interval = 0.1"):
        try:
            yield shell
        finally:
            for name in [n for n in shell.user_ns if n.startswith("nbtest_")]:
                del shell.user_ns[name]


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> CommRecorder:
    """Patch ``comm.create_comm`` so that widgets talk to a recorder."""
    import comm

    recorder = CommRecorder()
    monkeypatch.setattr(comm, "create_comm", recorder.create_comm)
    return recorder
