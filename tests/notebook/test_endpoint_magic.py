"""``%endpoint health|purge ID`` and ``%endpoint serve FUNC --name ID`` in a real IPython
shell: the health panel keeps refreshing through the one refresher thread, a notebook
generator served with one line streams into ``%%runjob``."""

from __future__ import annotations

import secrets
import threading
from typing import Any

from nbhelpers import assert_one_line_error, magics_of, run_cell, wait_until
from test_runjob_magic import chunk_messages, ended, runjob, streamed


def test_health_panel_keeps_refreshing(ip: Any, comms: Any, client: Any) -> None:
    run = run_cell(ip, "nbtest_health = %endpoint health echo")
    assert run.success, run.text
    report = ip.user_ns["nbtest_health"]
    assert report.endpoint_id == "echo"
    refresher = magics_of(ip).session.refresher
    panel = next(p for p in refresher.panels if getattr(p, "endpointId", "") == "echo")
    before = panel.health["jobs"]["completed"]
    threads = {t.name for t in threading.enumerate()}
    client.endpoint("echo").runsync({"ping": 1})
    wait_until(lambda: panel.health["jobs"]["completed"] > before, timeout=10)
    assert panel.connection == "ok" and panel.updated
    assert "podbook-refresher" in threads  # the one refresher thread does it
    assert "completed" in panel.snapshot_text()


def test_purge_removes_queued_jobs(ip: Any, comms: Any, client: Any) -> None:
    name = "nbtest-purge-" + secrets.token_hex(3)
    run = run_cell(ip, f"%endpoint purge {name}")  # unknown endpoint: one line
    assert_one_line_error(run, "404")
    idle = client.endpoint("echo")  # served: nothing stays queued; purge says 0 or more
    run = run_cell(ip, "nbtest_purged = %endpoint purge echo")
    assert run.success, run.text
    assert "Removed" in run.stdout and ip.user_ns["nbtest_purged"].removed >= 0
    assert idle.health().jobs.in_queue == 0


def test_serve_a_notebook_generator_and_stream_from_it(ip: Any, comms: Any, nb_env: Any) -> None:
    name = "nbtest-gen-" + secrets.token_hex(3)
    run = run_cell(
        ip,
        "def nbtest_words(job):\n    for i in range(job['input']['n']):\n        yield f'w{i} '\n",
    )
    assert run.success
    run = run_cell(ip, f"nbtest_worker = %endpoint serve nbtest_words --name {name}")
    assert run.success, run.text
    worker = ip.user_ns["nbtest_worker"]
    try:
        assert name in run.stdout and nb_env.api_key not in run.text + repr(worker)
        job, panel = runjob(ip, name, '{"n": 30}')
        wait_until(lambda: ended(panel), timeout=20)
        assert panel.status == "COMPLETED"
        assert streamed(chunk_messages(comms, panel)) == [f"w{i} " for i in range(30)]
        assert nb_env.api_key not in comms.all_text()
    finally:
        worker.stop()


def test_serve_mistakes_are_one_line(ip: Any, comms: Any) -> None:
    assert_one_line_error(run_cell(ip, "%endpoint serve nbtest_nothing --name x"), "no variable")
    ip.user_ns["nbtest_number"] = 3
    assert_one_line_error(run_cell(ip, "%endpoint serve nbtest_number --name x"), "not a function")
    assert_one_line_error(run_cell(ip, "%endpoint serve f"), "--name")
    assert_one_line_error(run_cell(ip, "%endpoint serve f --name x --concurrency 0"), "concurrency")
    assert_one_line_error(run_cell(ip, "%endpoint heal echo"), "unknown subcommand")


def test_health_static_forms(ip: Any, comms: Any) -> None:
    run = run_cell(ip, "nbtest_health = %endpoint health echo")
    assert run.success, run.text
    refresher = magics_of(ip).session.refresher
    panel = next(p for p in refresher.panels if getattr(p, "endpointId", "") == "echo")
    data, _ = panel._repr_mimebundle_()
    assert data["text/plain"].startswith("Endpoint echo — jobs: completed ")
    assert 'data-count="inQueue"' in data["text/html"] and 'data-count="idle"' in data["text/html"]
    assert "echo" in repr(ip.user_ns["nbtest_health"])
