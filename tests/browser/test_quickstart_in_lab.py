"""The quickstart, as a user meets it: opened in JupyterLab and run top to bottom, its kernel
on an emulator whose pods really run (the quickstart SSHes into one), as the embedded one."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .jupyterlab import LabServer, open_and_run_all

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"

ALL_CELLS_DONE_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.filter((cell) => cell.model.type === 'code');
  return !!kernel && kernel.status === 'idle'
    && cells.every((cell) => cell.model.executionCount !== null);
}"""


def test_quickstart_runs_in_jupyterlab_with_live_panels(
    page: Any, local_lab: LabServer, artifacts_dir: Path, console_messages: list[str]
) -> None:
    shutil.copy(QUICKSTART, local_lab.root_dir / QUICKSTART.name)
    open_and_run_all(page, local_lab, QUICKSTART.name)
    try:
        page.wait_for_function(ALL_CELLS_DONE_JS, timeout=240_000, polling=250)
        errors = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
        )
        expect(errors).to_have_count(0)
        # The panels rendered as live views, not as their static fallbacks.
        expect(page.locator(".podbook-pod").first).to_be_attached()
        expect(page.locator('.podbook-pod[data-status="TERMINATED"]').first).to_be_attached(
            timeout=30_000
        )
        expect(page.locator('.podbook-cluster[data-type="RAY"]').first).to_be_attached()
        # The pods really ran: the second pod read the file the first wrote to the volume.
        outputs = page.locator(".jp-OutputArea-output")
        expect(outputs.filter(has_text="/hello.txt: ").first).to_be_attached()
        expect(outputs.filter(has_text="hello from the main process").first).to_be_attached()
    except AssertionError:
        print("\n".join(console_messages[-30:]))
        raise
    finally:
        for name, selector in [("pod", ".podbook-pod"), ("cluster", ".podbook-cluster")]:
            target = page.locator(selector).first
            if target.count():
                target.scroll_into_view_if_needed()
                page.screenshot(path=str(artifacts_dir / f"quickstart_in_lab_{name}.png"))
