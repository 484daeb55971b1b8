"""The streaming notebook, as a user meets it: opened in JupyterLab and run top to bottom.

The job panel shows every chunk of the streamed reply, in order, and the final status; the
long job is cancelled with the panel's Cancel button (the notebook's ``%job cancel`` cells,
tagged ``cancel-by-command``, and its clean-up are left out, so the button does the work).
The endpoint that scales from zero gets a worker timeline in its health panel: a lane per
worker, each ending gone, with its cold start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from playwright.sync_api import expect

from .jupyterlab import LabServer, on_a_fresh_node, open_and_run_all

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "streaming_inference.ipynb"
LEFT_OUT_TAGS = {"cancel-by-command", "cleanup"}

ALL_CELLS_DONE_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.filter((cell) => cell.model.type === 'code');
  return !!kernel && kernel.status === 'idle'
    && cells.every((cell) => cell.model.executionCount !== null);
}"""


def write_button_variant(root: Path) -> tuple[str, list[str]]:
    """The notebook without its cancel-by-command and clean-up cells, saved under ``root``;
    its name and the sources of its code cells."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells = [c for c in nb.cells if not LEFT_OUT_TAGS & set(c.metadata.get("tags", []))]
    nbformat.write(nb, root / NOTEBOOK.name)
    return NOTEBOOK.name, [c.source for c in nb.cells if c.cell_type == "code"]


# Every lane of the health panel's worker timeline ends gone, and a cold start was measured.
# (Found again at each poll from the cell's index: a display sent again replaces the node.)
SCALED_TO_ZERO_JS = """(index) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[index];
  const lanes = cell ? [...cell.querySelectorAll('svg.podbook-timeline .podbook-tl-lane')] : [];
  return lanes.length > 0 && lanes.every((lane) => lane.dataset.state === 'GONE')
    && lanes.some((lane) => lane.dataset.coldStart !== '');
}"""


def cell_index(code_sources: list[str], starts_with: str) -> int:
    """The index of the first code cell whose source starts so."""
    return next(i for i, s in enumerate(code_sources) if s.startswith(starts_with))


def panel_of(page: Any, code_sources: list[str], starts_with: str, kind: str = "job") -> Any:
    """The panel (``.podbook-KIND``) in the output of the first code cell whose source starts
    so."""
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(cell_index(code_sources, starts_with))
    return cell.locator(f".podbook-{kind}")


def printed_by(page: Any, code_sources: list[str], starts_with: str) -> str:
    """What the first code cell whose source starts so printed."""
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(cell_index(code_sources, starts_with))
    stdout = cell.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]')
    expect(stdout).to_have_count(1, timeout=60_000)
    return str(stdout.inner_text())


def test_streaming_notebook_shows_every_chunk_and_cancels_from_the_button(
    page: Any,
    jupyter_lab: LabServer,
    artifacts_dir: Path,
    docs_images: Path,
    console_messages: list[str],
) -> None:
    name, sources = write_button_variant(jupyter_lab.root_dir)
    open_and_run_all(page, jupyter_lab, name)
    reply = panel_of(page, sources, "%%runjob demo -o reply")
    attempt = panel_of(page, sources, "%%runjob flaky")
    long_job = panel_of(page, sources, "%%runjob demo -o long_job")
    scaling_cell = cell_index(sources, "%config PodMagics.refresh_interval")
    scaling = panel_of(page, sources, "%config PodMagics.refresh_interval", "health")
    try:
        # The streamed reply: every chunk, in order, then COMPLETED.
        expect(reply).to_have_attribute("data-status", "COMPLETED", timeout=90_000)
        full_text = printed_by(page, sources, 'print("".join(reply.output')
        words = full_text.split()
        assert len(words) > 5, full_text
        expect(reply).to_have_attribute("data-chunks", str(len(words)))
        shown = reply.locator(".podbook-stream").inner_text()
        assert shown.split() == words, (shown, full_text)
        expect(reply.locator("[data-metric=tokensPerSecond]")).to_be_attached()
        # the panel's displays are sent once more after the cell ends, replacing its node:
        # an element taken just before is detached, so a locator action is tried again
        on_a_fresh_node(lambda: reply.screenshot(path=str(docs_images / "job_panel_completed.png")))
        page.screenshot(path=str(artifacts_dir / "streaming_1_reply_completed.png"))

        # The failed job was retried by %job retry and completed.
        expect(attempt).to_have_attribute("data-status", "COMPLETED", timeout=60_000)

        # Scale from zero: workers come (their lanes), serve the 20 jobs and go again.
        expect(scaling.locator("svg.podbook-timeline")).to_be_attached(timeout=120_000)
        page.wait_for_function(SCALED_TO_ZERO_JS, arg=scaling_cell, timeout=240_000, polling=250)
        lanes = scaling.locator(".podbook-tl-lane")
        assert lanes.count() >= 1
        for index in range(lanes.count()):
            drawn = lanes.nth(index).locator("rect.podbook-tl-segment")
            states = [drawn.nth(i).get_attribute("data-state") for i in range(drawn.count())]
            assert states[0] == "INITIALIZING" and "RUNNING" in states, states
        assert int(scaling.locator("path.podbook-tl-queue").get_attribute("data-peak") or 0) > 0
        expect(scaling.locator(".podbook-tl-cold").first).to_contain_text("cold ")
        on_a_fresh_node(scaling.scroll_into_view_if_needed)
        page.screenshot(path=str(artifacts_dir / "streaming_scaled_to_zero.png"))
        scaling.screenshot(path=str(docs_images / "health_timeline.png"))

        # The long job streams; Cancel on its panel stops it.
        expect(long_job).to_have_attribute("data-status", "IN_PROGRESS", timeout=120_000)
        page.wait_for_function(
            "(el) => Number(el.getAttribute('data-chunks')) >= 3",
            arg=long_job.element_handle(),
            timeout=30_000,
        )
        on_a_fresh_node(long_job.scroll_into_view_if_needed)
        page.screenshot(path=str(artifacts_dir / "streaming_2_long_job_running.png"))
        long_job.screenshot(path=str(docs_images / "job_panel_streaming.png"))
        long_job.locator("button[data-action=cancel]").click()
        expect(long_job).to_have_attribute("data-status", "CANCELLED", timeout=30_000)
        expect(long_job.locator("button[data-action=cancel]")).to_have_count(0)
        stopped_at = int(long_job.get_attribute("data-chunks") or "0")
        assert 3 <= stopped_at < 400, stopped_at
        page.wait_for_timeout(1000)
        assert int(long_job.get_attribute("data-chunks") or "0") == stopped_at
        page.screenshot(path=str(artifacts_dir / "streaming_3_long_job_cancelled.png"))

        page.wait_for_function(ALL_CELLS_DONE_JS, timeout=60_000, polling=250)
        errors = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
        )
        expect(errors).to_have_count(0)
    except AssertionError:
        print("\n".join(console_messages[-30:]))
        stderr = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
        )
        print("stderr outputs:", stderr.all_inner_texts())
        for label, panel in [("reply", reply), ("long_job", long_job), ("scaling", scaling)]:
            if panel.count():
                on_a_fresh_node(panel.scroll_into_view_if_needed)
                page.screenshot(path=str(artifacts_dir / f"streaming_failure_{label}.png"))
        raise
