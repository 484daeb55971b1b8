"""``%job status|cancel|retry JOB_ID --endpoint ID`` in a real IPython shell: each returns the
``Job`` and shows the one panel of that job; mistakes are one line."""

from __future__ import annotations

from typing import Any

from nbhelpers import assert_one_line_error, run_cell, wait_until
from test_runjob_magic import ended, runjob


def line(ip: Any, source: str) -> Any:
    run = run_cell(ip, f"nbtest_result = {source}")
    assert run.success, run.text
    return ip.user_ns["nbtest_result"]


def test_status_shows_the_same_panel_again(ip: Any, comms: Any) -> None:
    job, panel = runjob(ip, "echo", '{"x": 1}')
    wait_until(lambda: ended(panel))
    result = line(ip, f"%job status {job.id} --endpoint echo")
    assert result.id == job.id and result.record.status == "COMPLETED"
    job_panels = [
        c
        for c in comms.comms
        if "JobPanel" in str((c.data or {}).get("state", {}).get("_anywidget_id"))
    ]
    assert len(job_panels) == 1  # the same panel again: no second stream reader


def test_status_of_a_job_submitted_elsewhere_is_polled(ip: Any, comms: Any, client: Any) -> None:
    job = client.endpoint("stream-demo").run({"max_tokens": 10, "delay_ms": 20})
    result = line(ip, f"%job status {job.id} --endpoint stream-demo")
    from nbhelpers import magics_of

    from podbook.notebook.endpoints.book import book_for

    panel = book_for(magics_of(ip).session).known_panel("stream-demo", job.id)
    wait_until(lambda: panel.status == "COMPLETED", timeout=20)
    assert result.id == job.id and panel.job["output"] is not None


def test_cancel_and_retry(ip: Any, comms: Any, client: Any) -> None:
    job = client.endpoint("stream-demo").run({"max_tokens": 5000, "delay_ms": 20})
    result = line(ip, f"%job cancel {job.id} --endpoint stream-demo")
    assert result.record.status == "CANCELLED"
    assert client.endpoint("stream-demo").status(job.id).status == "CANCELLED"
    failing = client.endpoint("stream-demo").run({"max_tokens": -1})
    wait_until(lambda: failing.status().status == "FAILED", timeout=20)
    retried = line(ip, f"%job retry {failing.id} --endpoint stream-demo")
    assert retried.id == failing.id
    wait_until(lambda: failing.status().status == "FAILED", timeout=20)
    health = client.endpoint("stream-demo").health()
    assert health.jobs.retried >= 1


def test_mistakes_are_one_line(ip: Any, comms: Any) -> None:
    assert_one_line_error(run_cell(ip, "%job status abc"), "--endpoint")
    assert_one_line_error(run_cell(ip, "%job stats abc --endpoint echo"), "unknown subcommand")
    assert_one_line_error(run_cell(ip, "%job status no-such-job --endpoint echo"), "404", "job ID")
    assert_one_line_error(run_cell(ip, "%job retry no-such-job --endpoint nope-ep"), "404")
