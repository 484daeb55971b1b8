"""A view whose ``ready`` waits behind a busy cell (Run All: the next cell blocks the shell).

Comm messages from the front end are handled on the kernel's shell thread, so the panel
cannot answer ``ready`` while a cell runs; batches sent before the view rendered are lost to
it. What reaches the view meanwhile are trait updates (IOPub, from the flusher thread): the
``tail`` trait must carry the stream from its first chunk while the job runs, and all of it
at the end.
"""

from __future__ import annotations

from typing import Any

from nbhelpers import run_cell, wait_until
from test_runjob_magic import chunk_messages, ended, runjob, streamed

from podbook.notebook.endpoints.streambuffer import TAIL_MAX


def tail_updates(comms: Any, panel: Any) -> list[list[dict[str, Any]]]:
    """Every ``tail`` value the panel sent to the front end, in order."""
    comm = next(c for c in comms.comms if c is panel.comm)
    found = []
    for message in list(comm.messages):
        data = message["data"] or {}
        if data.get("method") == "update" and "tail" in data.get("state", {}):
            found.append(data["state"]["tail"])
    return found


def test_a_busy_cell_does_not_keep_the_tail_from_a_view_that_asked(ip: Any, comms: Any) -> None:
    job, panel = runjob(ip, "stream-demo", '{"max_tokens": 60, "delay_ms": 40}')
    # The view's `ready` is queued behind this cell; the job streams meanwhile.
    run = run_cell(
        ip,
        "import time\n"
        "nbtest_seen = []\n"
        "for _ in range(30):\n"
        "    time.sleep(0.1)\n"
        "    nbtest_seen.append(nbtest_job.last_status)\n",
    )
    assert run.success, run.text
    wait_until(lambda: ended(panel), timeout=30)  # a loaded machine streams slower than 3 s
    assert panel.status == "COMPLETED" and panel.chunks == 60
    updates = tail_updates(comms, panel)
    # While the job ran, the tail went out more than once, each time from chunk 0 on.
    running = [tail for tail in updates[:-1] if tail]
    assert len(running) >= 2, [len(t) for t in updates]
    assert all(tail[0]["i"] == 0 for tail in running)
    assert [len(t) for t in running] == sorted(len(t) for t in running)
    # The last tail holds the whole stream, in order: enough to repair any view.
    last = updates[-1]
    assert [entry["i"] for entry in last] == list(range(60))
    assert [entry["output"] for entry in last] == streamed(chunk_messages(comms, panel))


def test_once_a_view_said_ready_the_tail_waits_for_the_end(ip: Any, comms: Any) -> None:
    job, panel = runjob(ip, "stream-demo", '{"max_tokens": 40, "delay_ms": 40}')
    panel._handle_custom_msg({"type": "ready", "have": 0}, [])
    before = len(tail_updates(comms, panel))
    run = run_cell(ip, "import time; time.sleep(2.5)")
    assert run.success, run.text
    wait_until(lambda: ended(panel), timeout=30)
    assert panel.status == "COMPLETED" and panel.chunks == 40
    updates = tail_updates(comms, panel)[before:]
    # The end, sent as the job ended, and once more if it ended before the cell did (the
    # whole final state, see resend_settled_panels); nothing while it streamed.
    assert len(updates) == 1 + panel._settled_sent
    assert all([e["i"] for e in update] == list(range(40)) for update in updates)
    assert len(updates[0]) <= TAIL_MAX
