"""``startJupyter`` pods of ``podbook emulator --runtime local``: the Jupyter server behind the
record's ``8888/http`` mapping, its kernels, and no process left when the pod stops, is
terminated, or the emulator is killed with ``kill -9``."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Any

import httpx
import psutil
import pytest
from runtime_helpers import LOCAL, create_pod, wait_for, wait_status

from podbook.notebook.panels.data import http_links

pytestmark = pytest.mark.timeout(120)


def jupyter_link(http: httpx.Client, pod_id: str) -> str:
    """The pod's ``8888/http`` link once its record maps the port (RUNNING)."""
    pod = wait_for(
        lambda: (p := http.get(f"/v2/pods/{pod_id}").json()).get("runtime", {}).get("ports") and p,
        what="runtime ports",
    )
    link = http_links(pod)["8888/http"]
    assert link.startswith("http://127."), link
    return link


def jupyter_pod(http: httpx.Client) -> tuple[str, str, str]:
    """A running ``startJupyter`` pod: its id, its Jupyter link and its password."""
    pod = create_pod(http, ports=["8888/http"], startJupyter=True, args="exec sleep 600")
    pod = wait_status(http, pod["id"], "RUNNING")
    return pod["id"], jupyter_link(http, pod["id"]), pod["env"]["JUPYTER_PASSWORD"]


def log_in_and_start_a_kernel(link: str, password: str, timeout: float = 60.0) -> None:
    """Wait for the server, log in with the pod's password, start a python3 kernel."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=link, timeout=10, trust_env=False) as client:
        while True:
            with contextlib.suppress(httpx.TransportError):
                if client.get("/login").status_code == 200:
                    break
            assert time.monotonic() < deadline, f"{link} never answered"
            time.sleep(0.2)
        xsrf = client.cookies.get("_xsrf") or ""
        assert client.post("/login", data={"password": "wrong", "_xsrf": xsrf}).status_code == 401
        assert client.post("/login", data={"password": password, "_xsrf": xsrf}).status_code == 302
        kernel = client.post(
            "/api/kernels", json={"name": "python3"}, headers={"X-XSRFToken": xsrf}
        )
        assert kernel.status_code == 201, kernel.text


def server_tree(link: str) -> list[psutil.Process]:
    """The process listening on the link's port and all its descendants (kernels)."""
    port = int(link.rsplit(":", 1)[1].strip("/"))
    for conn in psutil.net_connections("tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr[1] == port:
            assert conn.pid, conn
            root = psutil.Process(conn.pid)
            return [root, *root.children(recursive=True)]
    raise AssertionError(f"nothing listens on {port}")


def assert_all_gone(tree: list[psutil.Process], timeout: float = 15.0) -> None:
    """Every process of ``tree`` has ended (zombies reaped or not: not running code)."""
    _, alive = psutil.wait_procs(tree, timeout=timeout)
    alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"left: {[(p.pid, p.cmdline()) for p in alive]}"


def test_stop_and_terminate_end_the_server_and_its_kernels(http: httpx.Client) -> None:
    pod_id, link, password = jupyter_pod(http)
    log_in_and_start_a_kernel(link, password)
    tree = server_tree(link)
    assert len(tree) >= 2, "server and kernel"
    assert http.post(f"/v2/pods/{pod_id}/action", json={"action": "stop"}).status_code == 200
    wait_status(http, pod_id, "EXITED")
    assert_all_gone(tree)

    assert http.post(f"/v2/pods/{pod_id}/action", json={"action": "start"}).status_code == 200
    wait_status(http, pod_id, "RUNNING")
    link = jupyter_link(http, pod_id)  # the public port may change, the password does not
    log_in_and_start_a_kernel(link, password)
    tree = server_tree(link)
    assert http.delete(f"/v2/pods/{pod_id}").status_code in (200, 204)
    assert_all_gone(tree)


def test_kill_9_of_the_emulator_leaves_no_jupyter_process_and_a_restart_brings_it_back(
    start_emulator: Any,
) -> None:
    emu = start_emulator(extra_args=LOCAL)
    with emu.http() as http:
        pod_id, link, password = jupyter_pod(http)
    log_in_and_start_a_kernel(link, password)
    tree = server_tree(link)
    os.kill(emu.proc.pid, signal.SIGKILL)
    emu.proc.wait(10)
    assert_all_gone(tree)

    emu.start()  # as a host reboot: the RUNNING pod comes back with its Jupyter
    with emu.http() as http:
        wait_status(http, pod_id, "RUNNING")
        link = jupyter_link(http, pod_id)
        log_in_and_start_a_kernel(link, password)
        tree = server_tree(link)
        assert http.delete(f"/v2/pods/{pod_id}").status_code in (200, 204)
    assert_all_gone(tree)
