"""The pod panel's Logs tab in a real JupyterLab: it shows the log and new lines arrive live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .jupyterlab import LabServer, open_and_run_all, write_notebook

NOTEBOOK = "pod_logs.ipynb"
CELLS = [
    "%load_ext podbook",
    'pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/pytorch '
    "--ports 8888/http --jupyter --name browser-logs",
    "%pod logs {pod.id} --follow --tail 3",
]
TIMEOUT_MS = 45_000  # the session emulator writes a heartbeat line every 5 s


def test_logs_tab_shows_new_lines_as_they_arrive(
    page: Any,
    jupyter_lab: LabServer,
    emulator: Any,
    artifacts_dir: Path,
    docs_images: Path,
    console_messages: list[str],
) -> None:
    write_notebook(jupyter_lab.root_dir, NOTEBOOK, CELLS)
    open_and_run_all(page, jupyter_lab, NOTEBOOK)

    panels = page.locator(".podbook-pod")
    expect(panels).to_have_count(2, timeout=TIMEOUT_MS)
    panel = panels.first
    followed = panels.nth(1)  # %pod logs --follow: the panel opened on its Logs tab
    pod_id = panel.get_attribute("data-pod-id")
    assert pod_id, "the panel does not name its pod"
    with emulator.http() as http:
        try:
            expect(followed).to_have_attribute("data-tab", "logs")
            expect(followed.locator(".podbook-logs")).to_contain_text(
                "pod is RUNNING", timeout=TIMEOUT_MS
            )
            expect(panel).to_have_attribute("data-status", "RUNNING", timeout=TIMEOUT_MS)
            panel.locator('button[data-tab="logs"]').click()
            expect(panel).to_have_attribute("data-tab", "logs")
            logs = panel.locator(".podbook-logs")
            expect(logs.locator(".podbook-log-line").first).to_be_visible(timeout=TIMEOUT_MS)
            expect(logs).to_contain_text("Jupyter Server listening", timeout=TIMEOUT_MS)
            expect(logs).to_contain_text("pod is RUNNING")
            first = int(logs.get_attribute("data-lines") or "0")

            # a periodic line arrives while the tab is open
            expect(logs.locator(".podbook-log-line").nth(first)).to_be_attached(timeout=TIMEOUT_MS)
            expect(logs).to_contain_text("heartbeat: uptime")
            # and so does what an action writes
            assert http.post(f"/v2/pods/{pod_id}/action", json={"action": "stop"}).is_success
            expect(logs).to_contain_text("container stopped", timeout=TIMEOUT_MS)
            expect(followed.locator(".podbook-logs")).to_contain_text("container stopped")
            page.screenshot(path=str(artifacts_dir / "pod_logs_tab.png"))
            followed.screenshot(path=str(docs_images / "pod_logs_tab.png"))

            password = http.get(f"/v2/pods/{pod_id}").json()["env"]["JUPYTER_PASSWORD"]
            assert password not in page.content(), "a secret reached the page"
            assert emulator.api_key not in page.content(), "the API key reached the page"

            # back on Overview the panel is as before; Logs again still holds the lines
            panel.locator('button[data-tab="overview"]').click()
            expect(panel.locator('button[data-action="start"]')).to_be_visible()
            panel.locator('button[data-tab="logs"]').click()
            expect(logs).to_contain_text("container stopped")
        except AssertionError:
            page.screenshot(path=str(artifacts_dir / "pod_logs_failure.png"))
            print("\n".join(console_messages[-30:]))
            raise
        finally:
            http.delete(f"/v2/pods/{pod_id}")
