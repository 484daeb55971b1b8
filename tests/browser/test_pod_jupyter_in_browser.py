"""A pod's Jupyter link opened in Chromium: the password page, a wrong password refused, the
pod's generated password accepted and JupyterLab shown with the pod's files."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from processes import BackgroundLoop

from podbook.emulator.podruntime.jupyter import PodJupyterServer
from podbook.emulator.podruntime.sandbox import Sandbox

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
