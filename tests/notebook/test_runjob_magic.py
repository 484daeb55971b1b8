"""``%%runjob`` in a real IPython shell against the emulator process, through a recording comm:
the stream arrives in order in batches, the tail is bounded, a late view gets its backlog,
Cancel and Retry work from the panel, the kernel is never blocked, the key never leaks."""

from __future__ import annotations

from typing import Any

from nbhelpers import assert_one_line_error, magics_of, run_cell, wait_until

from podbook.notebook.endpoints.streambuffer import TAIL_MAX

TERMINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT")


def runjob(ip: Any, endpoint: str, body: str, flags: str = "", name: str = "nbtest_job") -> Any:
    """Run a ``%%runjob`` cell; return (the Job it returned, its live panel)."""
    run = run_cell(ip, f"%%runjob {endpoint} {flags} -o {name}\n{body}")
    assert run.success, run.text
    job = ip.user_ns[name]
    from podbook.notebook.endpoints.book import book_for

    panel = book_for(magics_of(ip).session).known_panel(job.endpoint_id, job.id)
    assert panel is not None
    return job, panel


def chunk_messages(comms: Any, panel: Any) -> list[dict[str, Any]]:
    """The ``chunks`` custom messages the panel sent, in order."""
    comm = next(c for c in comms.comms if c is panel.comm)
    found = []
    for message in list(comm.messages):
        data = message["data"] or {}
        if data.get("method") == "custom" and data["content"].get("type") == "chunks":
            found.append(data["content"])
    return found


def streamed(messages: list[dict[str, Any]]) -> list[Any]:
    """The chunks of consecutive messages, checking each starts where the last ended."""
    items: list[Any] = []
    for message in messages:
        assert message["start"] <= len(items), (message["start"], len(items))
        items = items[: message["start"]] + list(message["items"])
    return items


def ended(panel: Any) -> bool:
    return panel.status in TERMINAL and not panel.streaming


def test_echo_returns_the_job_and_shows_its_output(ip: Any, comms: Any, client: Any) -> None:
    ip.user_ns["nbtest_word"] = "hello"
    job, panel = runjob(ip, "echo", '{"say": "{nbtest_word}", "n": 2}')
    wait_until(lambda: ended(panel))
    assert job.output(timeout=10) == {"say": "hello", "n": 2}
    assert panel.status == "COMPLETED" and panel.job["output"] == {"say": "hello", "n": 2}
    assert panel.job["id"] == job.id and panel.job["endpointId"] == "echo"
    assert isinstance(panel.job["executionTime"], int)
    assert client.endpoint("echo").status(job.id).status == "COMPLETED"


def test_stream_demo_arrives_in_order_in_batches(ip: Any, comms: Any) -> None:
    body = '{"prompt": "hi", "max_tokens": 80, "delay_ms": 5}'
    job, panel = runjob(ip, "stream-demo", body)
    wait_until(lambda: ended(panel), timeout=20)
    assert panel.status == "COMPLETED"
    messages = chunk_messages(comms, panel)
    items = streamed(messages)
    assert [item["output_tokens"] for item in items] == list(range(1, 81))
    assert 1 < len(messages) < 80  # batched, not one message per chunk
    assert panel.chunks == 80
    assert [entry["i"] for entry in panel.tail] == list(range(80))
    assert panel.rate["tokensPerSecond"] > 0 and panel.rate["chunksPerSecond"] > 0
    assert panel.rate["metrics"]["scenario"] == "stream-demo"
    assert panel.rate["metrics"]["output_tokens"] == 80


def test_the_stream_goes_on_while_a_cell_blocks(ip: Any, comms: Any) -> None:
    job, panel = runjob(ip, "stream-demo", '{"max_tokens": 40, "delay_ms": 25}')
    before = panel.chunks
    run = run_cell(ip, "import time; time.sleep(2.5)")
    assert run.success
    assert before < panel.chunks  # chunks arrived while the cell blocked
    wait_until(lambda: ended(panel), timeout=30)  # all of them: a loaded machine is slower
    assert panel.chunks == 40 and panel.status == "COMPLETED", (panel.chunks, panel.status)


def test_tail_is_bounded_and_a_late_view_gets_its_backlog(ip: Any, comms: Any) -> None:
    job, panel = runjob(ip, "stream-demo", '{"max_tokens": 500, "delay_ms": 0}')
    wait_until(lambda: ended(panel), timeout=30)
    assert panel.chunks == 500
    assert len(panel.tail) == TAIL_MAX and panel.tail[-1]["i"] == 499
    assert len(panel._buffer.peek_tail()) == TAIL_MAX  # the kernel keeps no more either
    count = len(chunk_messages(comms, panel))
    panel._handle_custom_msg({"type": "ready", "have": 490}, [])
    answers = chunk_messages(comms, panel)[count:]
    assert len(answers) == 1 and answers[0]["start"] == 490
    assert [c["output_tokens"] for c in answers[0]["items"]] == list(range(491, 501))
    panel._handle_custom_msg({"type": "ready", "have": 0}, [])
    assert chunk_messages(comms, panel)[-1]["start"] == 500 - TAIL_MAX


def test_cancel_button_stops_a_running_stream(ip: Any, comms: Any, client: Any) -> None:
    job, panel = runjob(ip, "stream-demo", '{"max_tokens": 2000, "delay_ms": 20}')
    wait_until(lambda: panel.chunks >= 3, timeout=20)
    panel._handle_custom_msg({"type": "action", "action": "cancel"}, [])
    wait_until(lambda: ended(panel) and not panel.busy, timeout=20)
    assert panel.status == "CANCELLED" and panel.error == ""
    assert panel.chunks < 2000
    assert client.endpoint("stream-demo").status(job.id).status == "CANCELLED"
    panel._handle_custom_msg({"type": "action", "action": "cancel"}, [])
    assert "cancel is possible when the job is" in panel.error


def test_failed_job_shows_its_error_and_retry_runs_it_again(ip: Any, comms: Any) -> None:
    job, panel = runjob(ip, "stream-demo", '{"max_tokens": 0}')
    wait_until(lambda: ended(panel), timeout=20)
    assert panel.status == "FAILED"
    error = panel.job["error"]
    assert error["type"] == "ValueError" and "max_tokens" in error["message"]
    assert "Traceback" in error["traceback"]
    assert "ValueError" in panel.snapshot_text() and "<details>" in panel.snapshot_html()
    wait_until(lambda: panel.settled, timeout=20)
    assert run_cell(ip, "0").success  # its first end is sent once more here
    seen = []
    panel.observe(lambda change: seen.append(change["new"]), names="status")
    panel._handle_custom_msg({"type": "action", "action": "retry"}, [])
    wait_until(lambda: "IN_QUEUE" in seen and ended(panel) and not panel.busy, timeout=20)
    assert panel.status == "FAILED" and panel.error == ""
    assert panel.chunks == 0
    # The retried run's end, too, is sent once more as the next cell ends.
    wait_until(lambda: panel.settled, timeout=20)
    comm = next(c for c in comms.comms if c is panel.comm)
    before = len(comm.messages)
    assert run_cell(ip, "1 + 1").success
    assert any(
        (m["data"] or {}).get("method") == "update"
        and m["data"]["state"].get("status") == "FAILED"
        and {"chunks", "tail", "job"} <= m["data"]["state"].keys()
        for m in comm.messages[before:]
    )


def test_sync_and_async_modes(ip: Any, comms: Any) -> None:
    ip.user_ns["nbtest_endpoint"] = "echo"  # {var} on the magic line is expanded too
    job, panel = runjob(ip, "{nbtest_endpoint}", '{"mode": "sync"}', flags="--sync --wait 5000")
    assert job.record.status == "COMPLETED" and panel.status == "COMPLETED"
    assert panel.job["output"] == {"mode": "sync"}
    job, panel = runjob(ip, "echo", "{'mode': 'async'}", flags="--async", name="nbtest_async")
    assert magics_of(ip).session.refresher.running or ended(panel)
    wait_until(lambda: panel.status == "COMPLETED", timeout=20)
    assert panel.job["output"] == {"mode": "async"}


def test_no_key_in_any_comm_message(ip: Any, comms: Any, nb_env: Any) -> None:
    job, panel = runjob(ip, "stream-demo", '{"max_tokens": 20, "delay_ms": 0}')
    wait_until(lambda: ended(panel), timeout=20)
    text = comms.all_text()
    assert "output_tokens" in text
    assert nb_env.api_key not in text
    assert nb_env.api_key not in repr(job) + repr(panel) + panel.snapshot_html()


def test_user_mistakes_are_one_line(ip: Any, comms: Any) -> None:
    assert_one_line_error(
        run_cell(ip, '%%runjob echo\n{\n  "a": 1\n  "b": 2\n}'), "line 3, column 3"
    )
    assert_one_line_error(run_cell(ip, "%%runjob echo --wait 10 --sync\n{}"), "--wait")
    assert_one_line_error(run_cell(ip, "%%runjob\n{}"), "ENDPOINT")
    assert_one_line_error(run_cell(ip, '%%runjob no-such-endpoint\n{"a": 1}'), "404", "echo")
    too_big = run_cell(ip, '%%runjob echo\n{"a": "' + "x" * 10_500_000 + '"}')
    assert_one_line_error(too_big, "too large")


def test_saved_forms_show_the_end_of_the_stream(ip: Any, comms: Any) -> None:
    job, panel = runjob(ip, "stream-demo", '{"prompt": "saved", "max_tokens": 30, "delay_ms": 0}')
    wait_until(lambda: ended(panel), timeout=20)
    data, _ = panel._repr_mimebundle_()
    last_word = panel.tail[-1]["output"]["text"][0].strip()
    assert data["text/plain"].startswith(f"Job {job.id} on stream-demo — COMPLETED")
    assert last_word in data["text/plain"] and "30 chunk(s)" in data["text/plain"]
    assert 'data-status="COMPLETED"' in data["text/html"] and last_word in data["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in data


def test_comm_traffic_stays_within_three_times_the_stream(ip: Any, comms: Any) -> None:
    import json

    job, panel = runjob(ip, "stream-demo", '{"max_tokens": 1000, "delay_ms": 0}')
    wait_until(lambda: ended(panel), timeout=60)
    comm = next(c for c in comms.comms if c is panel.comm)
    traffic = sum(len(json.dumps(m["data"])) for m in comm.messages if m["kind"] == "msg")
    items = streamed(chunk_messages(comms, panel))
    payload = sum(len(json.dumps(item)) for item in items)
    assert len(items) == 1000
    assert traffic <= 3 * payload, (traffic, payload)


def test_a_stream_the_service_refuses_falls_back_to_status_polls(
    ip: Any, comms: Any, monkeypatch: Any
) -> None:
    from podbook import errors
    from podbook.client.resources.queue import EndpointClient

    def refuse(self: Any, job_id: str, **_: Any) -> Any:
        # A fault the emulator never produces: a service that does not stream this job.
        raise errors.BadRequest(400, "Bad Request", "this endpoint does not stream")
        yield  # pragma: no cover - makes this a generator, like the real method

    monkeypatch.setattr(EndpointClient, "stream_batches", refuse)
    job, panel = runjob(ip, "echo", '{"polled": true}')
    wait_until(lambda: panel.status == "COMPLETED", timeout=20)
    assert panel.job["output"] == {"polled": True}
    assert panel.chunks == 0 and panel.error == ""


def test_a_settled_panel_sends_its_end_once_more_as_the_next_cell_ends(ip: Any, comms: Any) -> None:
    """A headless runner (nbclient) drops what the panel's thread sent while a cell ended;
    the next cell to end sends the panel's whole final state again, from the kernel's thread,
    so the saved notebook keeps the end. Only once."""
    _, panel = runjob(ip, "stream-demo", '{"max_tokens": 5, "delay_ms": 0}')
    wait_until(lambda: panel.settled, timeout=20)
    comm = next(c for c in comms.comms if c is panel.comm)

    def final_states(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            m["data"]["state"]
            for m in messages
            if (m["data"] or {}).get("method") == "update"
            and m["data"]["state"].get("status") == "COMPLETED"
            and {"chunks", "tail", "job"} <= m["data"]["state"].keys()
        ]

    before = len(comm.messages)
    assert run_cell(ip, "1 + 1").success
    (state,) = final_states(comm.messages[before:])
    assert state["chunks"] == 5 and len(state["tail"]) == 5

    before = len(comm.messages)
    assert run_cell(ip, "2 + 2").success
    assert final_states(comm.messages[before:]) == []


def test_a_stream_read_faster_than_the_panel_sends_loses_no_chunk(
    comms: Any, client: Any, monkeypatch: Any
) -> None:
    """The reader can take chunks faster than the flusher sends them (a job whose chunks are
    all on the server already, as after a reconnection; a handler that yields small chunks
    fast: bench/stream.py's 10,000 tokens outran the panel's 5,000 unsent chunks at any
    load). It then waits for the flusher instead of dropping the oldest: every chunk reaches
    the view, in order, in consecutive batches. The bound is scaled down here so that one
    answer of the stream (at most 500 chunks) outruns it with no flush between."""
    from podbook.notebook.endpoints import streambuffer
    from podbook.notebook.endpoints.panel import JobPanel

    monkeypatch.setattr(streambuffer, "PENDING_MAX", 300)
    count = 1000
    endpoint = client.endpoint("stream-demo")
    job = endpoint.run({"max_tokens": count, "delay_ms": 0})
    wait_until(lambda: endpoint.status(job.id).status == "COMPLETED", timeout=60)
    panel = JobPanel({"id": job.id, "status": "IN_PROGRESS"}, "stream-demo", client=client)
    panel.follow("stream")
    wait_until(lambda: ended(panel), timeout=60)
    items = streamed(chunk_messages(comms, panel))
    assert [item["output_tokens"] for item in items] == list(range(1, count + 1))
    assert panel.chunks == count
