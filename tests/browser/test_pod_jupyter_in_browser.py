"""A pod's Jupyter link opened in Chromium: the password page, a wrong password refused, the
pod's generated password accepted and JupyterLab shown with the pod's files. Once with the
server on its own (a temporary sandbox), once with a pod of ``podbook emulator --runtime
local`` (its record's link, its generated password, nothing left after terminate)."""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from processes import BackgroundLoop

from podbook.emulator.podruntime.jupyter import PodJupyterServer
from podbook.emulator.podruntime.sandbox import Sandbox
from podbook.notebook.panels.data import http_links

LAB_SHOWN = "#jp-main-dock-panel"


@pytest.fixture
def pod_jupyter(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A pod Jupyter server on its own (a temporary sandbox): its URL and password."""
    password = secrets.token_urlsafe(12)  # as the emulator makes a JUPYTER_PASSWORD
    workdir = tmp_path / "workspace"
    workdir.mkdir()
    (workdir / "from-the-pod.txt").write_text("hello\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir)}
    sandbox = Sandbox(root=tmp_path, workdir=workdir, env={**env, "JUPYTER_PASSWORD": password})
    loop = BackgroundLoop()
    server = loop.run(
        PodJupyterServer.start(host="127.0.0.1", port=0, sandbox=sandbox, password=password)
    )
    try:
        yield server.url, password
    finally:
        loop.run(server.stop())
        loop.close()


def log_in_at_the_link(page: Any, url: str, password: str, artifacts_dir: Path, shot: str) -> None:
    """Open the link, be refused with a wrong password, get in with the right one."""
    page.goto(url)
    page.wait_for_selector("input[name=password]", timeout=30_000)
    assert "/login" in page.url
    assert page.locator(LAB_SHOWN).count() == 0

    page.fill("input[name=password]", "not-" + password)
    page.click("#login_submit")
    page.wait_for_selector("text=Invalid credentials", timeout=15_000)
    assert "/login" in page.url and page.locator(LAB_SHOWN).count() == 0
    page.screenshot(path=str(artifacts_dir / shot.replace(".png", "_refused.png")))

    page.fill("input[name=password]", password)
    page.click("#login_submit")
    page.wait_for_selector(LAB_SHOWN, timeout=60_000)
    page.wait_for_selector("text=from-the-pod.txt", timeout=30_000)
    assert "/lab" in page.url
    page.screenshot(path=str(artifacts_dir / shot))


def test_the_pod_jupyter_link_asks_for_the_password(
    page: Any, pod_jupyter: tuple[str, str], artifacts_dir: Path
) -> None:
    url, password = pod_jupyter
    log_in_at_the_link(page, url, password, artifacts_dir, "pod_jupyter_standalone.png")


@pytest.fixture(scope="module")
def local_emulator(start_emulator: Any) -> Any:
    """An emulator whose pods run for real (``--runtime local``)."""
    return start_emulator(extra_args=("--runtime", "local"))


def _wait_answering(url: str, timeout: float = 60.0) -> None:
    """The pod is RUNNING before its Jupyter server answers (as on the service)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}login", timeout=2, trust_env=False).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer within {timeout} s")
        time.sleep(0.2)


def _listeners(port: int) -> list[psutil.Process]:
    """Processes listening on the loopback ``port``."""
    found = []
    for conn in psutil.net_connections("tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr[1] == port and conn.pid:
            with contextlib.suppress(psutil.Error):
                found.append(psutil.Process(conn.pid))
    return found


def test_the_pod_panel_link_of_a_local_pod_opens_its_jupyter(
    page: Any, local_emulator: Any, artifacts_dir: Path
) -> None:
    """``podbook emulator --runtime local``: the ``8888/http`` link as the panel computes it
    from the pod record, and the pod's generated ``JUPYTER_PASSWORD`` as the API returns it."""
    with local_emulator.http() as http:
        created = http.post(
            "/v2/pods",
            json={
                "name": "jupyter-pod",
                "image": "runpod/pytorch:latest",
                "gpu": {"id": "NVIDIA GeForce RTX 4090"},
                "ports": ["8888/http"],
                "startJupyter": True,
                "args": "echo hello > from-the-pod.txt; exec sleep 600",
            },
        )
        assert created.status_code == 201, created.text
        pod_id = created.json()["id"]
        deadline = time.monotonic() + 30
        pod = http.get(f"/v2/pods/{pod_id}").json()
        while not (pod["status"] == "RUNNING" and (pod.get("runtime") or {}).get("ports")):
            assert time.monotonic() < deadline, pod
            time.sleep(0.1)
            pod = http.get(f"/v2/pods/{pod_id}").json()
        password = pod["env"]["JUPYTER_PASSWORD"]  # the owner reads it; the panel masks it
        link = http_links(pod)["8888/http"]
        assert link.startswith("http://127.") and link.endswith("/"), link
        port = int(link.rsplit(":", 1)[1].strip("/"))
        try:
            _wait_answering(link)
            servers = _listeners(port)
            assert servers, "a process of this machine serves the link"
            log_in_at_the_link(page, link, password, artifacts_dir, "pod_jupyter.png")
        finally:
            assert http.delete(f"/v2/pods/{pod_id}").status_code in (200, 204)
        tree = [p for s in servers for p in [s, *s.children(recursive=True)]]
        _, alive = psutil.wait_procs(tree, timeout=15)
        assert not alive, f"left after terminate: {alive}"
    for path in (local_emulator.log_path, local_emulator.stdout_path):
        assert password not in path.read_text(errors="replace"), path
