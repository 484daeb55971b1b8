"""The pod guard seen from a notebook: a busy ``%%pod exec`` cell keeps a guarded pod
running, and the guard outlives the kernel that created its pod (``kill -9``)."""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from kernels import ipc_kernel_manager
from nbhelpers import podbook_loaded, point_at, run_cell
from processes import wait_for

for helpers in ("guard", "remote", "runtime"):  # guard_helpers and what it uses
    sys.path.insert(0, str(Path(__file__).parent.parent / helpers))

from guard_helpers import guarded_pod, status_of, wait_guard, wait_status  # noqa: E402

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def local(start_emulator: Any) -> Any:
    """An emulator of the module whose pods really run (Jupyter, SSH)."""
    return start_emulator(extra_args=("--runtime", "local"))


@pytest.fixture(scope="module")
def client(local: Any) -> Iterator[Any]:
    from podbook import Client

    with Client(api_key=local.api_key, url=local.url) as typed:
        yield typed


@pytest.fixture
def gip(
    shell: InteractiveShell, local: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InteractiveShell]:
    """The shell with podbook loaded, pointed at the module's local-runtime emulator."""
    point_at(monkeypatch, local, tmp_path / "home")
    with podbook_loaded(shell, "PodMagics.show_panels = False"):
        yield shell


def test_a_busy_pod_exec_cell_keeps_the_pod_running(gip: InteractiveShell, client: Any) -> None:
    # Jupyter answers first (a loaded machine can take longer than a short idle stop to start
    # it and the cell's kernel), so the stop is 15 s and the cell runs twice as long.
    pod = guarded_pod(client, jupyter=True, idle_stop="15s")
    client.pods.wait_for(pod.id, "RUNNING", ready=("jupyter",), timeout=60)
    statuses: list[str] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            statuses.append(status_of(client, pod.id))
            time.sleep(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        cell = run_cell(gip, f"%%pod exec {pod.id}\nimport time\ntime.sleep(30)\nprint('done')")
    finally:
        done.set()
        watcher.join(5)
    assert cell.success and cell.stdout.strip() == "done", cell.text
    assert set(statuses) == {"RUNNING"}  # 30 s of a busy cell, far past the 15 s idle stop
    busy = wait_guard(client, pod.id, "busy", timeout=5)
    assert "kernel" in busy.busy
    t_done = time.monotonic()
    assert wait_status(client, pod.id, "EXITED", timeout=35) - t_done <= 15 + 5
    client.pods.terminate(pod.id)


def test_the_guard_outlives_the_kernel_that_created_the_pod(local: Any, client: Any) -> None:
    manager = ipc_kernel_manager()
    manager.start_kernel()
    kernel = manager.client()
    kernel.start_channels()
    try:
        kernel.wait_for_ready(timeout=60)
        code = (
            "from podbook import Client\n"
            f"c = Client(api_key={local.api_key!r}, url={local.url!r})\n"
            "pod = c.pods.create(name='orphan', image='runpod/base', "
            "gpu={'id': 'NVIDIA GeForce RTX 4090'}, args='exec sleep 600', idle_stop='6s')\n"
            "print(pod.id)"
        )
        collect = _Collect()
        reply = kernel.execute_interactive(code, timeout=60, output_hook=collect)
        assert reply["content"]["status"] == "ok", reply
        pod_id = collect.text.strip()
        wait_status(client, pod_id, "RUNNING", timeout=30)
        os.kill(manager.provisioner.process.pid, signal.SIGKILL)  # no atexit, no goodbye
        wait_for(lambda: not manager.is_alive(), timeout=10)
    finally:
        kernel.stop_channels()
        manager.cleanup_resources()
    wait_status(client, pod_id, "EXITED", timeout=25)
    assert status_of(client, pod_id) == "EXITED"
    client.pods.terminate(pod_id)


class _Collect:
    """An ``output_hook`` that keeps the kernel's stdout."""

    def __init__(self) -> None:
        self.text = ""

    def __call__(self, msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            self.text += msg["content"]["text"]


def test_create_warns_of_a_bare_image_and_show_prints_the_guard(
    gip: InteractiveShell, client: Any
) -> None:
    made = run_cell(
        gip,
        'gd_pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image ubuntu:22.04 '
        "--args 'exec sleep 600' --idle-stop 30m --name guard-show",
    )
    assert made.success, made.text
    assert made.stdout.startswith("note: image 'ubuntu:22.04' usually has neither curl nor")
    pod = gip.user_ns.pop("gd_pod")
    try:
        assert pod.args == __import__("podbook.guard").guard.GUARD_ARGS
        wait_guard(client, pod.id, "idle")
        shown = run_cell(gip, f"%pod show {pod.id}")
        assert shown.success, shown.text
        bundle = shown.outputs[0].data
        assert re.search(r"guard: idle stop in (29|30) min", bundle["text/plain"]), bundle
        assert 'data-field="guard"' in bundle["text/html"]
        for text in bundle.values():
            assert "PODBOOK_GUARD" not in text and "rpa_pod_" not in text
    finally:
        client.pods.terminate(pod.id)
    plain = run_cell(
        gip, '%pod create --gpu "NVIDIA GeForce RTX 4090" --image ubuntu:22.04 -o gd_plain'
    )
    assert plain.success and "note:" not in plain.stdout  # no guard, nothing to say
    client.pods.terminate(gip.user_ns.pop("gd_plain").id)


def test_create_wait_returns_once_the_services_answer(gip: InteractiveShell, client: Any) -> None:
    import socket

    import httpx

    made = run_cell(
        gip,
        'gd_ready = %pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/pytorch '
        "--ports 8888/http,22/tcp --jupyter --ssh --args 'exec sleep 600' --wait ssh,jupyter",
    )
    assert made.success, made.text
    pod = gip.user_ns.pop("gd_ready")
    try:
        assert pod.status == "RUNNING"
        public = next(p.public for p in pod.runtime.ports if p.private == 8888)
        assert httpx.get(f"http://127.0.0.1:{public}/login").status_code == 200
        direct = pod.ssh.direct
        with socket.create_connection((direct.host, direct.port), timeout=5) as sock:
            assert sock.recv(8).startswith(b"SSH-")  # the SSH server took it, not a relay
    finally:
        client.pods.terminate(pod.id)
    bad = run_cell(gip, '%pod create --gpu "NVIDIA GeForce RTX 4090" --image x --wait sshd')
    assert not bad.success and "'sshd' is not a service" in bad.text
    assert "Traceback" not in bad.text


def test_the_panel_feed_tells_starting_then_ready(client: Any) -> None:
    from podbook.notebook.panels.data import pod_state
    from podbook.notebook.pods.readyfeed import ReadyFeed

    pod = client.pods.create(
        name="ready-feed",
        image="runpod/pytorch",
        gpu={"id": "NVIDIA GeForce RTX 4090"},
        args="exec sleep 600",
        ports=["8888/http", "8000/http"],
        start_jupyter=True,
    )
    feed, seen = ReadyFeed(), []
    try:
        client.pods.wait_for(pod, "RUNNING", timeout=30, poll_interval=0.05)

        def jupyter_ready() -> bool:
            feed.request(pod_state(client.pods.get(pod.id)), seen.append)
            return bool(seen) and seen[-1].get("jupyter", {}).get("state") == "ready"

        wait_for(jupyter_ready, timeout=60, interval=0.2, what="Jupyter ready in the feed")
        assert seen[0]["jupyter"]["state"] == "waiting"  # RUNNING before Jupyter answers
        assert (
            seen[-1]["8000/http"]
            == {
                "state": "waiting",
                "note": seen[-1]["8000/http"]["note"],
            }
            and "nothing answers" in seen[-1]["8000/http"]["note"]
        )
    finally:
        client.pods.terminate(pod.id)
