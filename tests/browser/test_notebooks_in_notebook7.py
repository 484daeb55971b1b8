"""The quickstart and the streaming notebook in Jupyter Notebook 7, as a user meets them there:
opened on Notebook 7's notebook page (``/notebooks/...``) and run top to bottom, the kernel on
an emulator whose pods really run (the quickstart SSHes into its pod).

The steps and checks are the JupyterLab tests' own (one test serves both front ends): the
quickstart's live pod and cluster panels and the pods' real output; every chunk of the
streamed reply in order, the retried job, the long job cancelled from its panel's button.
Then every output that carries a widget must show its live podbook view, not a fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from inspect import signature
from pathlib import Path
from typing import Any

import pytest

from . import test_quickstart_in_lab, test_streaming_in_lab
from .jupyterlab import NotebookServer, every_view_rendered

# notebook → (the JupyterLab test that runs it, the views it must show, what to screenshot)
NOTEBOOKS: dict[str, tuple[Callable[..., None], set[str], str]] = {
    "quickstart": (
        test_quickstart_in_lab.test_quickstart_runs_in_jupyterlab_with_live_panels,
        {"podbook-catalog", "podbook-pod", "podbook-podlist", "podbook-cluster", "podbook-job"},
        ".podbook-pod",
    ),
    "streaming": (
        test_streaming_in_lab.test_streaming_notebook_shows_every_chunk_and_cancels_from_the_button,
        {"podbook-job", "podbook-health", "podbook-chat"},
        ".podbook-job",
    ),
}


@pytest.mark.parametrize("notebook", list(NOTEBOOKS))
def test_notebook_runs_in_notebook7_with_every_panel_rendered(
    notebook: str,
    page: Any,
    notebook7: NotebookServer,
    artifacts_dir: Path,
    console_messages: list[str],
    tmp_path: Path,
) -> None:
    run_as_in_lab, views, shown = NOTEBOOKS[notebook]
    # The lab test's fixtures, by name: this server for the lab, and tmp_path for where it
    # saves screenshots (artifacts/ and docs/images/ keep the lab's).
    fixtures = {"page": page, "console_messages": console_messages}
    fixtures |= dict.fromkeys(("jupyter_lab", "local_lab"), notebook7)
    fixtures |= dict.fromkeys(("artifacts_dir", "docs_images"), tmp_path)
    try:
        run_as_in_lab(**{name: fixtures[name] for name in signature(run_as_in_lab).parameters})
        kinds = every_view_rendered(page)
        assert views <= set(kinds), kinds
    finally:
        target = page.locator(shown).first
        if target.count():
            target.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / f"{notebook}_in_notebook7.png"))
