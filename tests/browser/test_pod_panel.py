"""The pod panel in a real JupyterLab: create a pod, watch it run, stop and start it by buttons
(on an emulator whose pods really run, as the embedded one: the panel shows loopback
addresses that connect, and so does the screenshot in docs/images)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from .jupyterlab import LabServer, open_and_run_all, write_notebook

NOTEBOOK = "pod_panel.ipynb"
CELLS = [
    "%load_ext podbook",
    'pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/pytorch '
    "--ports 8888/http,22/tcp --ssh --name browser-panel",
]
# Lifecycle moves take 0.2 s in the test emulator; the rest is the refresher's period.
STATUS_TIMEOUT_MS = 30_000


@pytest.fixture
def emulator_http(local_emulator: Any) -> Iterator[httpx.Client]:
    """Plain HTTP to the emulator as the test's account, to check what the panel claims."""
    with local_emulator.http() as http:
        yield http


def test_pod_panel_follows_lifecycle_and_buttons(
    page: Any,
    local_lab: LabServer,
    local_emulator: Any,
    emulator_http: httpx.Client,
    artifacts_dir: Path,
    docs_images: Path,
    console_messages: list[str],
) -> None:
    write_notebook(local_lab.root_dir, NOTEBOOK, CELLS)
    open_and_run_all(page, local_lab, NOTEBOOK)

    panel = page.locator(".podbook-pod")
    expect(panel).to_have_count(1, timeout=STATUS_TIMEOUT_MS)
    pod_id = panel.get_attribute("data-pod-id")
    assert pod_id, "the panel does not name its pod"
    try:
        expect(panel).to_have_attribute("data-status", "RUNNING", timeout=STATUS_TIMEOUT_MS)
        ssh = panel.locator("[data-ssh] code").first
        expect(ssh).to_contain_text("ssh ", timeout=STATUS_TIMEOUT_MS)
        expect(panel.locator("[data-ssh] button.podbook-copy").first).to_be_visible()
        page.screenshot(path=str(artifacts_dir / "pod_panel_1_running.png"))
        panel.screenshot(path=str(docs_images / "pod_panel.png"))

        # The copy button puts the exact command on the clipboard and says so.
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        proxy = panel.locator('[data-ssh="proxy"]')
        command = proxy.locator("code").inner_text()
        proxy.locator("button.podbook-copy").click()
        expect(proxy.locator("button.podbook-copy")).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == command

        panel.locator('button[data-action="stop"]').click()
        expect(panel).to_have_attribute("data-status", "EXITED", timeout=STATUS_TIMEOUT_MS)
        expect(panel.locator('button[data-action="start"]')).to_be_visible()
        assert emulator_http.get(f"/v2/pods/{pod_id}").json()["status"] == "EXITED"
        page.screenshot(path=str(artifacts_dir / "pod_panel_2_exited.png"))

        panel.locator('button[data-action="start"]').click()
        expect(panel).to_have_attribute("data-status", "RUNNING", timeout=STATUS_TIMEOUT_MS)
        assert emulator_http.get(f"/v2/pods/{pod_id}").json()["status"] == "RUNNING"
        page.screenshot(path=str(artifacts_dir / "pod_panel_3_running_again.png"))
        assert local_emulator.api_key not in page.content(), "the API key reached the page"
    except AssertionError:
        page.screenshot(path=str(artifacts_dir / "pod_panel_failure.png"))
        print("\n".join(console_messages[-30:]))
        raise
    finally:
        emulator_http.delete(f"/v2/pods/{pod_id}")
