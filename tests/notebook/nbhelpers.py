"""Helpers of the notebook tests: run a cell as a user would, wait, record comms."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output


def point_at(monkeypatch: Any, emulator: Any, home: Any) -> None:
    """Point podbook at ``emulator`` through the environment only (no other target, no key in
    a cell), with its files in ``home``."""
    for name in ("PODBOOK_REST_URL", "PODBOOK_QUEUE_URL", "PODBOOK_V1_URL", "PODBOOK_LOCAL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PODBOOK_URL", emulator.url)
    monkeypatch.setenv("RUNPOD_API_KEY", emulator.api_key)
    monkeypatch.setenv("PODBOOK_HOME", str(home))


@contextmanager
def podbook_loaded(shell: InteractiveShell, *settings: str) -> Iterator[InteractiveShell]:
    """``shell`` with ``%load_ext podbook`` and these ``%config`` lines done for the block,
    unloaded and its ``PodMagics`` settings forgotten afterwards."""
    shell.config.pop("PodMagics", None)
    with capture_output():
        shell.run_line_magic("load_ext", "podbook")
        for line in settings:
            shell.run_line_magic("config", line)
    try:
        yield shell
    finally:
        with capture_output():
            shell.run_line_magic("unload_ext", "podbook")
        shell.config.pop("PodMagics", None)


def magics_of(shell: InteractiveShell) -> Any:
    """The loaded PodMagics instance."""
    return shell.magics_manager.registry["PodMagics"]


@dataclass
class CellRun:
    """What a user sees after running a cell."""

    stdout: str
    stderr: str
    outputs: list[Any]
    success: bool
    error: BaseException | None

    @property
    def text(self) -> str:
        return self.stdout + self.stderr


def run_cell(shell: InteractiveShell, source: str) -> CellRun:
    """Run ``source`` like a notebook cell and capture what it printed and displayed."""
    with capture_output() as captured:
        result = shell.run_cell(source, store_history=False)
    return CellRun(
        captured.stdout,
        captured.stderr,
        list(captured.outputs),
        result.success,
        result.error_in_exec or result.error_before_exec,
    )


def assert_one_line_error(run: CellRun, *needles: str) -> str:
    """The cell failed with a short message, no traceback, containing ``needles``."""
    assert not run.success, run.text
    assert "Traceback" not in run.text, run.text
    lines = [line for line in run.text.splitlines() if line.strip()]
    assert lines, "no error message shown"
    assert lines[0].startswith(("UsageError:", "ServiceError:")), run.text
    # one line; only the service's errors[] items may follow, one per line
    assert all(line.startswith("  - ") for line in lines[1:]), run.text
    for needle in needles:
        assert needle in run.text, (needle, run.text)
    return run.text


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, every: float = 0.02) -> Any:
    """Poll ``predicate`` until it returns something truthy (or fail after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"condition not met within {timeout} s")


@dataclass
class RecordingComm:
    """A comm that records what the kernel would send to the front end."""

    target_name: str = ""
    data: Any = None
    kernel: str = "recording"
    comm_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    messages: list[dict[str, Any]] = field(default_factory=list)
    closed: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.messages.append({"kind": "open", "data": self.data})

    def open(self, *args: Any, **kwargs: Any) -> None:
        pass

    def on_msg(self, callback: Any) -> None:
        self.callback = callback

    def on_close(self, callback: Any) -> None:
        pass

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        with self._lock:
            self.messages.append({"kind": "msg", "data": data})

    def close(self, *args: Any, **kwargs: Any) -> None:
        self.closed = True


@dataclass
class CommRecorder:
    """Every comm created while recording, with every message it carried."""

    comms: list[RecordingComm] = field(default_factory=list)

    def create_comm(self, target_name: str = "", data: Any = None, **kwargs: Any) -> RecordingComm:
        comm = RecordingComm(target_name=target_name, data=data)
        self.comms.append(comm)
        return comm

    def all_text(self) -> str:
        """Every message of every comm, serialized as the kernel would send it."""
        return "\n".join(
            json.dumps(message, default=str) for comm in self.comms for message in comm.messages
        )


def ranked(client: Any, cluster_id: str) -> bool:
    """True once every member of the cluster exists and has its rank (assigned while provisioning)."""
    cluster = client.clusters.get(cluster_id)
    members = client.clusters.pods(cluster_id)
    return len(members) == cluster.compute.pod_count and all(
        p.cluster.rank is not None for p in members
    )


SETTLE_PANELS = """import time
from ipywidgets.widgets.widget import _instances
from podbook.notebook.panels.base import Panel

_until = time.monotonic() + 30
while time.monotonic() < _until and not all(
    w.settled for w in list(_instances.values()) if isinstance(w, Panel)
):
    time.sleep(0.02)"""
"""A last cell for :func:`run_headless`: waits until every podbook panel has settled (a job or
chat panel ended and its displays re-sent, a pod panel's pod ended), instead of a fixed sleep
that a loaded machine outruns. As the cell ends, podbook sends every settled panel's final
state and displays once more (``resend_settled_panels``), which nbclient keeps: what a
panel's thread sent as the previous cell ended, it may have dropped."""


def run_headless(cells: list[str], emulator: Any, tmp_path: Any, monkeypatch: Any) -> Any:
    """Run a notebook of code ``cells`` in a real kernel (nbclient) pointed at ``emulator``
    through its environment only (no key in the notebook); returns the executed notebook."""
    import nbformat
    from kernels import ipc_kernel_manager
    from nbclient import NotebookClient

    point_at(monkeypatch, emulator, tmp_path / "home")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    NotebookClient(
        nb,
        km=ipc_kernel_manager(),
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    return nb
