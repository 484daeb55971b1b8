"""The billing chart in a real JupyterLab: bars, axes, legend, the totals table, a tooltip on
hover, and a Refresh that picks up new spend (screenshots in artifacts/browser/)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from .jupyterlab import LabServer, open_and_run_all, write_notebook

NOTEBOOK = "billing_chart.ipynb"
CELLS = ["%load_ext podbook", "bill = %billing --last 6h --by hour"]
TIMEOUT_MS = 60_000


@pytest.fixture
def running_pod(emulator: Any) -> Iterator[str]:
    """A GPU pod that has been RUNNING for a moment, so the chart has spend to show."""
    with emulator.http() as http:
        pod = http.post(
            "/v2/pods",
            json={
                "name": "billed",
                "image": "runpod/pytorch",
                "gpu": {"id": "NVIDIA GeForce RTX 4090"},
            },
        )
        assert pod.status_code == 201, pod.text
        pod = pod.json()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if http.get(f"/v2/pods/{pod['id']}").json()["status"] == "RUNNING":
                break
            time.sleep(0.1)
        time.sleep(1.0)
        try:
            yield pod["id"]
        finally:
            http.delete(f"/v2/pods/{pod['id']}")


def test_billing_chart_renders_in_lab(
    page: Any,
    jupyter_lab: LabServer,
    emulator: Any,
    running_pod: str,
    artifacts_dir: Path,
    docs_images: Path,
    console_messages: list[str],
) -> None:
    write_notebook(jupyter_lab.root_dir, NOTEBOOK, CELLS)
    open_and_run_all(page, jupyter_lab, NOTEBOOK)
    panel = page.locator(".podbook-billing").first
    try:
        expect(panel.locator("svg.podbook-billing-svg")).to_be_visible(timeout=TIMEOUT_MS)
        bars = panel.locator('rect.podbook-billing-bar[data-key="pods"]')
        expect(bars.first).to_be_visible(timeout=TIMEOUT_MS)
        expect(panel.locator(".podbook-axis")).to_have_count(2)
        expect(panel.locator(".podbook-x-label").first).to_be_visible()
        expect(panel.locator(".podbook-legend-item")).to_have_count(5)
        expect(panel.locator('.podbook-billing-table tr[data-key="total"]')).to_contain_text("$")
        bars.last.hover()
        tooltip = panel.locator(".podbook-billing-tooltip")
        expect(tooltip).to_be_visible()
        expect(tooltip).to_contain_text("Pods: $")
        total = panel.locator('.podbook-billing-table tr[data-key="pods"] [data-field="amount"]')
        before = total.inner_text()
        page.screenshot(path=str(artifacts_dir / "billing_chart.png"))
        panel.screenshot(path=str(docs_images / "billing_chart.png"))
        time.sleep(1.5)  # the pod keeps running, so a refresh shows more spend
        panel.locator('button[data-action="refresh"]').click()
        expect(total).not_to_have_text(before, timeout=TIMEOUT_MS)
        assert emulator.api_key not in page.content(), "the API key reached the page"
    except AssertionError:
        page.screenshot(path=str(artifacts_dir / "billing_chart_failure.png"))
        print("\n".join(console_messages[-30:]))
        raise
