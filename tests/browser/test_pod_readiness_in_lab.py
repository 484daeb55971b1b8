"""Readiness in the pod panel, in a real JupyterLab: a new pod with Jupyter reads RUNNING while
its Jupyter server still starts: the panel says "starting…" beside its 8888/http link, then
"ready" once the server answers (on an emulator whose pods really run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect

from .jupyterlab import LabServer, open_and_run_all, pod_under_test, write_notebook

NOTEBOOK = "pod_readiness.ipynb"


def cells(slow: Path) -> list[str]:
    return [
        "%load_ext podbook",
        'pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/pytorch '
        "--ports 8888/http --jupyter --args 'exec sleep 600' --name browser-ready "
        f"--env JUPYTER_CONFIG_PATH={slow}",
    ]


TIMEOUT_MS = 60_000


def test_jupyter_reads_starting_then_ready(
    page: Any,
    local_lab: LabServer,
    local_emulator: Any,
    artifacts_dir: Path,
    console_messages: list[str],
) -> None:
    # An image whose Jupyter takes a while to come up, as the service's do: a config file on
    # the server's search path that sleeps while it loads, in a folder every pod sees (the
    # panel must be seen saying so, in the sandbox too)
    write_notebook(local_lab.root_dir, NOTEBOOK, cells(local_emulator.slow_jupyter))
    open_and_run_all(page, local_lab, NOTEBOOK)
    panel = page.locator(".podbook-pod")
    expect(panel).to_have_count(1, timeout=TIMEOUT_MS)
    pod_id = panel.get_attribute("data-pod-id")
    jupyter = panel.locator('[data-service="jupyter"]')
    with pod_under_test(
        page, local_emulator, pod_id, artifacts_dir / "pod_readiness_failure.png", console_messages
    ):
        expect(panel).to_have_attribute("data-status", "RUNNING", timeout=TIMEOUT_MS)
        expect(jupyter).to_have_attribute("data-state", "waiting", timeout=TIMEOUT_MS)
        expect(jupyter).to_have_text("starting…")
        expect(jupyter).to_have_attribute("data-state", "ready", timeout=TIMEOUT_MS)
        expect(jupyter).to_have_text("ready")
        link = panel.locator('a[data-port="8888/http"]').get_attribute("href")
        assert httpx.get(f"{link}login", timeout=10).status_code == 200  # it really answers
        page.screenshot(path=str(artifacts_dir / "pod_readiness_ready.png"))
