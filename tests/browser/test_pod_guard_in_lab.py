"""The pod guard in a real JupyterLab: a pod created with ``--idle-stop`` shows its countdown
in the panel, **Extend** is clicked, and the panel shows the new deadline the guard in the pod
reports (on an emulator whose pods really run: the guard is the real script in the pod)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .jupyterlab import LabServer, open_and_run_all, pod_under_test, write_notebook

NOTEBOOK = "pod_guard.ipynb"
CELLS = [
    "%load_ext podbook",
    'pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/pytorch '
    "--ports 22/tcp --ssh --idle-stop 10m --name browser-guard",
]
TIMEOUT_MS = 60_000


def test_the_countdown_shows_and_extend_moves_the_deadline(
    page: Any,
    local_lab: LabServer,
    local_emulator: Any,
    artifacts_dir: Path,
    docs_images: Path,
    console_messages: list[str],
) -> None:
    write_notebook(local_lab.root_dir, NOTEBOOK, CELLS)
    open_and_run_all(page, local_lab, NOTEBOOK)

    panel = page.locator(".podbook-pod")
    expect(panel).to_have_count(1, timeout=TIMEOUT_MS)
    pod_id = panel.get_attribute("data-pod-id")
    assert pod_id, "the panel does not name its pod"
    guard = panel.locator('[data-field="guard"]')
    countdown = guard.locator('[data-guard="summary"]')
    with pod_under_test(
        page, local_emulator, pod_id, artifacts_dir / "pod_guard_failure.png", console_messages
    ):
        expect(panel).to_have_attribute("data-status", "RUNNING", timeout=TIMEOUT_MS)
        expect(guard).to_have_attribute("data-state", "idle", timeout=TIMEOUT_MS)
        expect(countdown).to_have_text(re.compile(r"^idle stop in (9|10) min$"))
        panel.screenshot(path=str(docs_images / "pod_guard.png"))

        guard.locator('button[data-guard-op="extend"]').click()
        # the guard takes the command at its next tick and reports the deadline 30 min later
        expect(countdown).to_have_text(
            re.compile(r"^idle stop in (39|40) min$"), timeout=TIMEOUT_MS
        )
        expect(guard).to_have_attribute("data-state", "idle")
        page.screenshot(path=str(artifacts_dir / "pod_guard_extended.png"))
        assert local_emulator.api_key not in page.content(), "the API key reached the page"
        assert "rpa_pod_" not in page.content(), "the pod-scoped key reached the page"
