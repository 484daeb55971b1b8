"""Fixtures for the notebook tests: a real IPython shell with podbook loaded, pointed at the
session emulator, and a recording comm that keeps every widget message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from nbhelpers import CommRecorder
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
    for name in ("PODBOOK_REST_URL", "PODBOOK_QUEUE_URL", "PODBOOK_V1_URL", "PODBOOK_LOCAL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PODBOOK_URL", emulator.url)
    monkeypatch.setenv("RUNPOD_API_KEY", emulator.api_key)
    monkeypatch.setenv("PODBOOK_HOME", str(tmp_path / "podbook-home"))
    return emulator


@pytest.fixture
def ip(shell: InteractiveShell, nb_env: Any) -> Iterator[InteractiveShell]:
    """The shell with ``%load_ext podbook`` done (fast refreshes), unloaded afterwards."""
    shell.config.pop("PodMagics", None)
    with capture_output():
        shell.run_line_magic("load_ext", "podbook")
        shell.run_line_magic("config", "PodMagics.refresh_interval = 0.1")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "podbook")
        shell.config.pop("PodMagics", None)
        for name in [n for n in shell.user_ns if n.startswith("nbtest_")]:
            del shell.user_ns[name]


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> CommRecorder:
    """Patch ``comm.create_comm`` so that widgets talk to a recorder."""
    import comm

    recorder = CommRecorder()
    monkeypatch.setattr(comm, "create_comm", recorder.create_comm)
    return recorder
