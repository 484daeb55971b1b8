"""A notebook with ``%%runjob`` run headless in a real kernel (nbclient): the saved notebook
shows the end of the stream in its widget state *and* in the static text/HTML forms (updated
once the job ended), and holds no API key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbhelpers import SETTLE_PANELS, run_headless

CELLS = [
    "%load_ext podbook",
    '%%runjob stream-demo -o job\n{"prompt": "saved", "max_tokens": 40, "delay_ms": 5}',
    "import time\ntime.sleep(0.5)  # this cell blocks: the stream goes on\njob.output(timeout=30)[-1]",
    SETTLE_PANELS,  # the panels' final updates land before the kernel stops
]


def test_saved_notebook_shows_the_end_of_the_stream(
    emulator: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nb = run_headless(CELLS, emulator, tmp_path, monkeypatch)

    panel_output = next(o for o in nb.cells[1].outputs if o.output_type == "display_data")
    text = panel_output.data["text/plain"]
    assert text.startswith("Job ") and "— COMPLETED" in text and "40 chunk(s)" in text
    assert 'data-status="COMPLETED"' in panel_output.data["text/html"]
    last = nb.cells[2].outputs[-1].data["text/plain"]
    assert "'output_tokens': 40" in last

    states = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    job_state = next(s["state"] for s in states.values() if "tail" in s["state"])
    assert job_state["status"] == "COMPLETED" and job_state["chunks"] == 40
    assert [entry["i"] for entry in job_state["tail"]] == list(range(40))
    assert job_state["rate"]["tokensPerSecond"] > 0
    assert emulator.api_key not in nbformat.writes(nb)
