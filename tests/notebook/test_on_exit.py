"""When a kernel ends, podbook does what ``on_exit`` says with the pods that kernel created
(issue 18 §2): real ipykernel kernels started and shut down through jupyter_client, pointed
at a real emulator (``--runtime none``: the pods need not run), their stderr captured.

A kernel that a Jupyter server starts carries ``JPY_SESSION_NAME`` (jupyter_server's
``SessionManager.get_kernel_env``); one without it (nbclient, papermill) is headless.
"""

from __future__ import annotations

import queue
import re
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernels import ipc_kernel_manager
from nbhelpers import assert_one_line_error, magics_of, run_cell
from test_notebooks import kernel_env as notebook_kernel_env

from podbook import Client
from podbook.emulator.podruntime.ports import free_ports
from podbook.errors import NotFound
from podbook.guard import GuardSettings, settings_of
from podbook.notebook.kernel_exit.ledger import Ledger
from podbook.notebook.kernel_exit.report import report
from podbook.notebook.kernel_exit.settle import settle

RTX4090 = "NVIDIA GeForce RTX 4090"
EXTRA_ENV = ("PODBOOK_ON_EXIT", "JPY_SESSION_NAME", "PYTEST_CURRENT_TEST")
"""Also cleared from a kernel's environment (ipykernel pipes fd 1 and 2 into the notebook
unless it runs under pytest: these kernels must behave as a user's)."""


class Kernel:
    """A real kernel with podbook loaded, pointed at ``emulator``; its stderr in a file."""

    def __init__(
        self, emulator: Any, folder: Path, *, interactive: bool, env: dict[str, str] | None = None
    ) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        kernel_env = {
            k: v for k, v in notebook_kernel_env(emulator, folder).items() if k not in EXTRA_ENV
        }
        kernel_env.update(env or {})
        if interactive:
            kernel_env["JPY_SESSION_NAME"] = str(folder / "notebook.ipynb")
        self.stderr_path = folder / "kernel.stderr"
        self.km = ipc_kernel_manager()
        # kept open: a restart starts the new kernel with the same arguments
        self._stderr = self.stderr_path.open("ab")
        self.km.start_kernel(env=kernel_env, stderr=self._stderr, cwd=str(folder))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.run("%load_ext podbook")

    def run(self, code: str) -> str:
        """Run ``code`` as a cell; its printed text (the cell must succeed)."""
        texts: list[str] = []

        def collect(msg: dict[str, Any]) -> None:
            content = msg["content"]
            if msg["msg_type"] == "stream":
                texts.append(content["text"])
            elif msg["msg_type"] == "error":
                texts.append("\n".join(content["traceback"]))

        reply = self.kc.execute_interactive(code, timeout=60, output_hook=collect)
        text = "".join(texts)
        assert reply["content"]["status"] == "ok", text
        return text

    def create(self, flags: str = "") -> str:
        """``%pod create`` in the kernel; the new pod's ID."""
        name = f"exit-{uuid.uuid4().hex[:8]}"
        text = self.run(
            f'_pod = %pod create --gpu "{RTX4090}" --image x --name {name} {flags}\n'
            'print("id=" + _pod.id)'
        )
        return re.findall(r"id=(\S+)", text)[-1]

    def output_until_gone(self, timeout: float = 10) -> str:
        """The stdout the kernel sends until its process is gone."""
        texts = []
        deadline = time.monotonic() + timeout
        while self.km.is_alive() or self.kc.iopub_channel.msg_ready():
            assert time.monotonic() < deadline, "the kernel did not end"
            try:
                msg = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
                texts.append(msg["content"]["text"])
        return "".join(texts)

    def shut_down(self) -> float:
        """Shut the kernel down as Jupyter does (a shutdown request); seconds it took."""
        started = time.monotonic()
        self.kc.stop_channels()
        self.km.shutdown_kernel()
        return time.monotonic() - started

    def podbook_lines(self) -> list[str]:
        """What podbook wrote on the kernel's stderr."""
        text = self.stderr_path.read_text(errors="replace")
        assert "Traceback" not in text, text
        return [line for line in text.splitlines() if line.startswith("podbook: ")]

    def close(self) -> None:
        if self.km.is_alive():
            self.kc.stop_channels()
            self.km.shutdown_kernel(now=True)
        self._stderr.close()


@pytest.fixture
def kernels(emulator: Any, tmp_path: Path) -> Iterator[Any]:
    """Factory of kernels; every one still alive at the end is killed."""
    started: list[Kernel] = []

    def start(
        *, interactive: bool = True, env: dict[str, str] | None = None, on: Any = None
    ) -> Kernel:
        kernel = Kernel(
            on or emulator, tmp_path / f"k{len(started)}", interactive=interactive, env=env
        )
        started.append(kernel)
        return kernel

    yield start
    for kernel in started:
        kernel.close()


def status(client: Any, pod_id: str) -> str:
    """The pod's status now, ``GONE`` once terminated."""
    try:
        return str(client.pods.get(pod_id).status)
    except NotFound:
        return "GONE"


def running(client: Any, *pod_ids: str) -> None:
    for pod_id in pod_ids:
        client.pods.wait_for(pod_id, "RUNNING", timeout=30, poll_interval=0.05)


def test_on_exit_stop_stops_this_kernels_pods_and_no_other(kernels: Any, client: Any) -> None:
    stopping, other = kernels(), kernels()
    stopping.run('%config PodMagics.on_exit = "stop"')
    mine = [stopping.create(), stopping.create()]
    theirs = other.create()
    running(client, *mine, theirs)

    took = stopping.shut_down()

    assert [status(client, pod_id) for pod_id in mine] == ["EXITED", "EXITED"]
    assert status(client, theirs) == "RUNNING"
    (line,) = stopping.podbook_lines()
    assert line.startswith("podbook: stopped 2 pods this kernel created ($")
    assert all(pod_id in line for pod_id in mine) and theirs not in line
    assert took < 5, "the kernel was killed instead of ending by itself"


def test_the_default_warning_names_exactly_this_kernels_running_pods(
    kernels: Any, client: Any
) -> None:
    kernel, other = kernels(), kernels()
    left, stopped, gone = kernel.create(), kernel.create(), kernel.create()
    elsewhere = other.create()
    outside = client.pods.create(name="exit-outside", gpu={"id": RTX4090}, image="x").id
    running(client, left, stopped, gone, elsewhere, outside)
    kernel.run(f"%pod stop {stopped}")
    kernel.run(f"%pod terminate {gone}")
    cost = client.pods.get(left).cost

    kernel.shut_down()

    (line,) = kernel.podbook_lines()
    assert line.startswith(f"podbook: 1 pod this kernel created is still running (${cost:.2f}/h): ")
    assert f"{left} (exit-" in line and f"${cost:.2f}/h)" in line
    assert 'PodMagics.on_exit = "stop"' in line and "%pod stop ID" in line
    for pod_id in (stopped, gone, elsewhere, outside):
        assert pod_id not in line
    assert status(client, left) == "RUNNING", "warn leaves the pods as they are"
    assert status(client, elsewhere) == "RUNNING"


def test_a_headless_kernel_stops_its_pods_unless_a_pod_says_otherwise(
    kernels: Any, client: Any
) -> None:
    kernel = kernels(interactive=False)
    assert kernel.run("print(get_ipython().find_magic('pod').__self__.on_exit)").strip() == "stop"
    plain = kernel.create()
    kept = kernel.create("--on-exit keep")
    removed = kernel.create("--on-exit terminate")
    warned = kernel.create("--on-exit warn")
    running(client, plain, kept, removed, warned)

    kernel.shut_down()

    assert status(client, plain) == "EXITED"
    assert status(client, kept) == "RUNNING"
    assert status(client, removed) == "GONE"
    assert status(client, warned) == "RUNNING"
    lines = kernel.podbook_lines()
    assert len(lines) == 3, lines
    assert (
        lines[0].startswith("podbook: 1 pod this kernel created is still running")
        and warned in lines[0]
    )
    assert lines[1].startswith("podbook: stopped 1 pod") and plain in lines[1]
    assert lines[2].startswith("podbook: terminated 1 pod") and removed in lines[2]
    assert kept not in "\n".join(lines)


def test_pods_a_cell_creates_with_the_client_end_with_the_kernel(kernels: Any, client: Any) -> None:
    kernel = kernels(interactive=False)
    text = kernel.run(
        "import podbook\n"
        f'_made = podbook.Client().pods.create(name="exit-script", gpu="{RTX4090}", image="x")\n'
        'print("ids=" + _made.id)'
    )
    (made,) = re.findall(r"ids=(\S+)", text)
    running(client, made)

    kernel.shut_down()

    assert status(client, made) == "EXITED"
    (line,) = kernel.podbook_lines()
    assert line.startswith("podbook: stopped 1 pod this kernel created") and made in line


def test_podbook_on_exit_sets_the_default_and_the_setting_wins(kernels: Any, client: Any) -> None:
    quiet = kernels(interactive=False, env={"PODBOOK_ON_EXIT": "keep"})
    configured = kernels(interactive=False, env={"PODBOOK_ON_EXIT": "keep"})
    configured.run('%config PodMagics.on_exit = "terminate"')
    kept, removed = quiet.create(), configured.create()
    running(client, kept, removed)

    quiet.shut_down()
    configured.shut_down()

    assert status(client, kept) == "RUNNING" and quiet.podbook_lines() == []
    assert status(client, removed) == "GONE"
    assert configured.podbook_lines()[0].startswith("podbook: terminated 1 pod")


def test_a_restart_and_exit_in_a_cell_end_the_kernel_the_same_way(
    kernels: Any, client: Any
) -> None:
    kernel = kernels(env={"PODBOOK_ON_EXIT": "stop"})
    before_restart = kernel.create()
    running(client, before_restart)

    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=60)

    assert status(client, before_restart) == "EXITED"
    kernel.run("%load_ext podbook")
    before_exit = kernel.create()
    running(client, before_exit)
    kernel.kc.execute("exit")
    shown = kernel.output_until_gone()
    assert status(client, before_exit) == "EXITED"
    lines = kernel.podbook_lines()
    assert [before_restart in lines[0], before_exit in lines[1]] == [True, True], lines
    assert f"{lines[1]}\n" in shown, "the notebook, still connected, sees the line too"


def test_a_service_that_does_not_answer_costs_the_kernel_a_bounded_wait(
    kernels: Any, start_emulator: Any
) -> None:
    own = start_emulator()
    kernel = kernels(on=own)
    pod_id = kernel.create()
    assert own.proc is not None
    own.proc.send_signal(signal.SIGSTOP)  # connections are accepted, never answered
    try:
        took = kernel.shut_down()
    finally:
        own.proc.send_signal(signal.SIGCONT)
        own.stop()
    (line,) = kernel.podbook_lines()
    assert line == (
        f"podbook: no answer within 1.5 s about {pod_id} (this kernel created them); "
        "check them with %pod list"
    )
    assert took < 5, "the kernel was killed instead of ending by itself"


# ---------------------------------------------------------------- in this process


def test_create_flags_arm_the_guard_and_set_the_pods_on_exit(ip: Any, client: Any) -> None:
    run = run_cell(
        ip,
        f'nbtest_pod = %pod create --gpu "{RTX4090}" --image x --idle-stop 1h30m '
        "--max-runtime 90s --idle-action Terminate --on-exit STOP",
    )
    assert run.success, run.text
    pod = client.pods.get(ip.user_ns["nbtest_pod"].id)
    assert settings_of(pod) == GuardSettings(
        idle_stop=5400, max_runtime=90, idle_action="terminate"
    )
    (created,) = magics_of(ip).session.exit_watch.ledger.pods()
    assert (created.id, created.on_exit) == (pod.id, "stop")
    run = run_cell(ip, f'nbtest_plain = %pod create --gpu "{RTX4090}" --image x')
    assert settings_of(client.pods.get(ip.user_ns["nbtest_plain"].id)) is None
    assert magics_of(ip).session.exit_watch.ledger.pods()[-1].on_exit is None


@pytest.mark.parametrize(
    ("flags", "needles"),
    [
        ("--idle-stop soon", ["--idle-stop", "'soon'", "90s, 30m, 4h or 1h30m"]),
        ("--max-runtime 0s", ["--max-runtime", "'0s'", "duration"]),
        ("--max-runtime 400d", ["--max-runtime", "under a year"]),
        ("--idle-action pause --idle-stop 5m", ["--idle-action", "'pause'", "'terminate'"]),
        ("--idle-action stop", ["--idle-action needs --idle-stop or --max-runtime"]),
        ("--on-exit later", ["--on-exit", "'later'", "'warn', 'stop', 'terminate', 'keep'"]),
    ],
)
def test_bad_cost_flags_are_one_line(ip: Any, flags: str, needles: list[str]) -> None:
    run = run_cell(ip, f'%pod create --gpu "{RTX4090}" --image x {flags}')
    assert_one_line_error(run, *needles)
    assert len(magics_of(ip).session.exit_watch.ledger) == 0


def test_a_bad_podbook_on_exit_is_one_line_when_podbook_loads(
    ip: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PODBOOK_ON_EXIT", "later")
    run = run_cell(ip, "%reload_ext podbook")
    assert run.success, run.text
    assert run.stderr.strip() == (
        "podbook: PODBOOK_ON_EXIT='later' is not one of warn, stop, terminate, keep; "
        "using 'warn' until you fix the variable"
    )
    assert magics_of(ip).on_exit == "warn"  # a terminal IPython: its user sees the warning
    monkeypatch.setenv("PODBOOK_ON_EXIT", "Terminate")
    run_cell(ip, "%reload_ext podbook")
    assert magics_of(ip).on_exit == "terminate"


def test_an_unreachable_service_at_exit_is_one_line_per_error() -> None:

    closed = f"http://127.0.0.1:{free_ports('127.0.0.1', 1)[0]}"
    nowhere = Client(api_key="pbk_a_" + "1" * 32, url=closed)
    ledger = Ledger()
    for name in ("a", "b"):
        ledger.add({"id": f"pod-{name}", "name": name}, nowhere.settings, "stop")
    ledger.add({"id": "pod-c", "name": "c"}, nowhere.settings)
    started = time.monotonic()
    finished, unfinished = settle(ledger.pods(), "warn")
    assert time.monotonic() - started < 1.5 and unfinished == []
    lines = report(finished, unfinished, 1.5)
    assert len(lines) == 2, lines
    assert lines[0].startswith("podbook: could not stop pod-a, pod-b: ")
    assert lines[0].endswith("; stop them with %pod stop ID") and closed in lines[0]
    assert lines[1].startswith("podbook: could not check pod-c: ")
    assert "pbk_a_" not in "\n".join(lines)
