"""A notebook with ``%%chat`` run headless in a real kernel (nbclient): the cell returns while
the reply streams, and the saved notebook shows the whole reply in the chat panel's widget
state (the final ``reply`` trait) and in its static text/HTML forms (updated once the reply
ended), with no API key anywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbhelpers import SETTLE_PANELS, run_headless

CELLS = [
    "%load_ext podbook",
    "%%chat chat-demo --max-tokens 30 -o turn\nTell the saved notebook a story",
    "turn.wait(timeout=30).tokens, turn.status",
    "%chat history",
    SETTLE_PANELS,  # the panels' final updates land before the kernel stops
]


def test_saved_notebook_shows_the_whole_reply(
    emulator: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nb = run_headless(CELLS, emulator, tmp_path, monkeypatch)

    assert nb.cells[2].outputs[-1].data["text/plain"] == "(30, 'DONE')"
    states = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    chat = next(s["state"] for s in states.values() if "reply" in s["state"])
    reply = chat["reply"]
    assert chat["status"] == "DONE" and len(reply.split()) == 30 and chat["pieces"] == 30
    assert chat["stats"]["tokens"] == 30 and chat["stats"]["tokensPerSecond"] > 0

    panel_output = next(o for o in nb.cells[1].outputs if o.output_type == "display_data")
    assert "application/vnd.jupyter.widget-view+json" in panel_output.data
    text = panel_output.data["text/plain"]
    assert text.startswith("Chat with chat-demo") and "· DONE" in text and reply in text
    html = panel_output.data["text/html"]
    assert 'data-status="DONE"' in html and reply.split()[-1] in html

    history = nb.cells[3].outputs[0].data["text/plain"]
    assert "user: Tell the saved notebook a story" in history and f"assistant: {reply}" in history
    assert emulator.api_key not in nbformat.writes(nb)
