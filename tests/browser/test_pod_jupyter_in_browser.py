"""A pod's Jupyter link opened in Chromium: the password page, a wrong password refused, the
pod's generated password accepted and JupyterLab shown with the pod's files. Once with the
server on its own (a temporary sandbox), once from the pod panel of a pod of
``podbook emulator --runtime local`` in JupyterLab (the panel's link, the pod's generated
password, nothing left after terminate)."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from playwright.sync_api import expect
from processes import BackgroundLoop

from podbook.emulator.podruntime.jupyter import PodJupyterServer
from podbook.emulator.podruntime.sandbox import Sandbox
from podbook.notebook.panels.data import http_links

from .jupyterlab import LabServer, open_and_run_all, write_notebook

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


def log_in_at_the_link(
    page: Any, url: str | None, password: str, artifacts_dir: Path, shot: str
) -> None:
    """Open the link (``None``: the page already has), be refused with a wrong password, get
    in with the right one."""
    if url is not None:
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


def _server_tree(port: int) -> list[psutil.Process]:
    """The process listening on the loopback ``port`` and its descendants."""
    for conn in psutil.net_connections("tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr[1] == port:
            root = psutil.Process(conn.pid)
            return [root, *root.children(recursive=True)]
    raise AssertionError(f"nothing listens on {port}")


NOTEBOOK = "pod_jupyter.ipynb"
CELLS = [
    "%load_ext podbook",
    'pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/pytorch '
    "--ports 8888/http --jupyter --name jupyter-pod "
    "--args 'echo hello > from-the-pod.txt; exec sleep 600'",
]


def test_the_pod_panel_link_of_a_local_pod_opens_its_jupyter(
    page: Any,
    local_lab: LabServer,
    local_emulator: Any,
    artifacts_dir: Path,
    console_messages: list[str],
) -> None:
    """``podbook emulator --runtime local``: the panel's ``8888/http`` link opens the pod's
    Jupyter in a new tab; the pod's generated ``JUPYTER_PASSWORD`` (masked in the panel, read
    from the API as the owner) opens it, a wrong one does not."""
    write_notebook(local_lab.root_dir, NOTEBOOK, CELLS)
    open_and_run_all(page, local_lab, NOTEBOOK)
    panel = page.locator(".podbook-pod")
    expect(panel).to_have_count(1, timeout=60_000)
    pod_id = panel.get_attribute("data-pod-id")
    assert pod_id, console_messages
    with local_emulator.http() as http:
        try:
            expect(panel).to_have_attribute("data-status", "RUNNING", timeout=60_000)
            link = panel.locator('a[data-port="8888/http"]')
            expect(link).to_have_attribute("href", re.compile(r"^http://127\."), timeout=30_000)
            url = link.get_attribute("href")
            pod = http.get(f"/v2/pods/{pod_id}").json()
            assert url == http_links(pod)["8888/http"], "the JS panel and the record agree"
            password = pod["env"]["JUPYTER_PASSWORD"]  # the owner reads it; the panel masks it
            assert password not in panel.inner_text()
            _wait_answering(url)
            tree = _server_tree(int(url.rsplit(":", 1)[1].strip("/")))
            page.screenshot(path=str(artifacts_dir / "pod_jupyter_panel.png"))

            with page.context.expect_page() as opened:
                link.click()
            jupyter = opened.value
            log_in_at_the_link(jupyter, None, password, artifacts_dir, "pod_jupyter.png")
            jupyter.close()
        finally:
            assert http.delete(f"/v2/pods/{pod_id}").status_code in (200, 204)
        _, alive = psutil.wait_procs(tree, timeout=15)
        assert not alive, f"left after terminate: {alive}"
    for path in (local_emulator.log_path, local_emulator.stdout_path):
        assert password not in path.read_text(errors="replace"), path
