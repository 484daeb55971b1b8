"""The queue client against a real emulator process: every job move a user sees.

Built-in endpoints (``echo``, ``stream-demo``) run real podbook workers; for exact control
a test creates its own endpoint and plays the worker itself over the worker protocol
(:class:`ManualWorker`), so it decides when a job starts, what it streams and how it ends.
"""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from podbook import Client
from podbook.errors import (
    InvalidRequest,
    JobCancelled,
    JobFailed,
    JobTimedOut,
    NotFound,
    RateLimited,
    WaitTimeout,
)

from .test_queue_support import ManualWorker, RecordingTransport, create_endpoint, wait_until

TRACEBACK = 'Traceback (most recent call last):\n  File "handler.py", line 3\nValueError: no'


@pytest.fixture
def manual(emulator):
    """A fresh endpoint with no handler, and a worker the test drives."""
    worker = ManualWorker(emulator, create_endpoint(emulator))
    yield worker
    worker.close()


@pytest.fixture
def recording_client(emulator):
    """A client whose transport records every request it sends."""
    transport = RecordingTransport()
    with Client(api_key=emulator.api_key, url=emulator.url, transport=transport) as c:
        yield c, transport


def in_thread(fn, *args):
    """Run ``fn`` in a daemon thread; returns the thread (join it to see its errors)."""
    errors: list[BaseException] = []

    def target():
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - reported by join()
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    original_join = thread.join

    def join(timeout=10):
        original_join(timeout)
        assert not thread.is_alive(), "helper thread still running"
        if errors:
            raise errors[0]

    thread.join = join  # type: ignore[method-assign]
    return thread


# --- built-in endpoints ---------------------------------------------------------------------


def test_echo_run_then_output(client):
    payload = {"prompt": "hello", "max_tokens": 3, "nested": {"snake_case": [1, 2]}}
    job = client.endpoint("echo").run(payload)
    assert job.record.status == "IN_QUEUE" and job.id == job.record.id
    assert job.endpoint_id == "echo"
    assert job.output(timeout=30) == payload
    record = job.record
    assert record.status == "COMPLETED"
    assert record.delay_time is not None and record.delay_time >= 0
    assert record.execution_time is not None and record.execution_time >= 0
    assert client.endpoint("echo").status(job.id).output == payload


def test_echo_runsync_returns_the_finished_job(client):
    job = client.endpoint("echo").runsync({"n": 1}, wait=30_000)
    assert job.done and job.record.status == "COMPLETED"
    assert job.output() == {"n": 1}


def test_stream_demo_streams_text_chunks_in_order(client):
    endpoint = client.endpoint("stream-demo")
    job = endpoint.run({"prompt": "count", "max_tokens": 12})
    chunks = list(job.stream_chunks())
    assert chunks, "the demo streamed nothing"
    assert all(isinstance(c.output, dict) and "text" in c.output for c in chunks)
    tokens = [c.output["output_tokens"] for c in chunks if "output_tokens" in c.output]
    assert tokens == sorted(tokens)
    assert job.last_status == "COMPLETED" and job.done
    assert any(c.metrics for c in chunks)


# --- a worker the test drives -------------------------------------------------------------


def test_wait_reports_progress_and_the_result(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = endpoint.run({"steps": 2})
    seen: list[tuple[str, object]] = []

    def work():
        taken = manual.take()
        assert taken["id"] == job.id and taken["input"] == {"steps": 2}
        wait_until(lambda: ("IN_PROGRESS", None) in seen, what="IN_PROGRESS seen")
        manual.progress(job.id, {"pct": 50})
        wait_until(lambda: ("IN_PROGRESS", {"pct": 50}) in seen, what="progress seen")
        manual.finish(job.id, {"answer": 42})

    worker = in_thread(work)
    record = job.wait(timeout=20, on_progress=lambda r: seen.append((r.status, r.output)))
    worker.join()
    assert record.status == "COMPLETED" and record.output == {"answer": 42}
    statuses = [status for status, _ in seen]
    assert statuses[-1] == "COMPLETED"
    assert statuses.index("IN_PROGRESS") < statuses.index("COMPLETED")
    assert ("IN_PROGRESS", {"pct": 50}) in seen
    assert job.output() == {"answer": 42}


def test_runsync_past_its_wait_goes_on_with_one_held_status_read(recording_client, manual):
    client, transport = recording_client

    def work():
        job = manual.take()
        time.sleep(1.6)
        manual.finish(job["id"], {"late": True})

    worker = in_thread(work)
    started = time.monotonic()
    job = client.endpoint(manual.endpoint_id).runsync({"x": 1}, wait=1000)
    elapsed = time.monotonic() - started
    worker.join()
    assert job.record.status == "COMPLETED" and job.output() == {"late": True}
    assert 1.5 <= elapsed < 2.5  # the end is seen at once, not at the next poll
    paths = [line.split(" ", 1)[1] for line in transport.sent]
    # /runsync answered IN_PROGRESS after 1 s; one /status-sync held until the result came
    assert paths == [
        f"/v2/{manual.endpoint_id}/runsync",
        f"/v2/{manual.endpoint_id}/status-sync/{job.id}",
    ]


def test_runsync_timeout_raises_and_the_job_stays(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    with pytest.raises(WaitTimeout) as info:
        endpoint.runsync({"x": 1}, wait=1000, timeout=1.5)
    assert "IN_QUEUE" in str(info.value) and "\n" not in str(info.value)
    assert endpoint.health().jobs.in_queue == 1


def test_failed_job_raises_job_failed_with_the_handlers_error(client, manual):
    job = client.endpoint(manual.endpoint_id).run({"bad": True})
    manual.fail(manual.take()["id"], "ValueError", "no good input", TRACEBACK)
    with pytest.raises(JobFailed) as info:
        job.output(timeout=10)
    err = info.value
    assert err.job_id == job.id and err.endpoint_id == manual.endpoint_id
    assert err.error.type == "ValueError" and err.error.message == "no good input"
    assert err.error.traceback == TRACEBACK
    text = str(err)
    assert "\n" not in text and "ValueError: no good input" in text and "retry" in text
    assert job.record.status == "FAILED"


def test_retry_requeues_the_same_job_with_its_input(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = endpoint.run({"attempt": "any"})
    manual.fail(manual.take()["id"], "RuntimeError", "flaky", TRACEBACK)
    assert job.wait(timeout=10).status == "FAILED"
    retried = job.retry()
    assert retried.status == "IN_QUEUE" and retried.id == job.id and job.record is retried
    again = manual.take()
    assert again["id"] == job.id and again["input"] == {"attempt": "any"}
    manual.finish(job.id, "second time")
    assert job.output(timeout=10) == "second time"
    assert endpoint.health().jobs.retried >= 1


def test_retry_of_a_completed_job_is_refused(client):
    job = client.endpoint("echo").runsync({"x": 1}, wait=30_000)
    with pytest.raises(Exception) as info:
        job.retry()
    assert getattr(info.value, "status", None) in (400, 409)
    assert "\n" not in str(info.value)


def test_cancel_a_queued_job(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = endpoint.run({"x": 1})
    record = job.cancel()
    assert record.status == "CANCELLED" and record.id == job.id
    with pytest.raises(JobCancelled) as info:
        job.output(timeout=5)
    assert "cancelled" in str(info.value) and info.value.job_id == job.id
    assert list(job.stream()) == []


def test_stream_drains_then_ends_on_cancel(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = endpoint.run({"x": 1})
    manual.take()
    manual.chunk(job.id, {"text": ["a"]})
    manual.chunk(job.id, {"text": ["b"]})
    job.cancel()
    assert list(job.stream()) == [{"text": ["a"]}, {"text": ["b"]}]
    assert job.last_status == "CANCELLED"
    with pytest.raises(JobCancelled):
        job.output(timeout=5)


def test_stream_yields_each_chunk_as_it_is_produced(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = endpoint.run({"n": 3})
    received: list[object] = []

    def work():
        manual.take()
        for i in range(3):
            manual.chunk(job.id, {"i": i})
            wait_until(lambda i=i: len(received) > i, what=f"chunk {i} received")
        manual.finish(job.id, [{"i": i} for i in range(3)], stream=True)

    worker = in_thread(work)
    for output in endpoint.stream(job.id):
        received.append(output)
    worker.join()
    assert received == [{"i": 0}, {"i": 1}, {"i": 2}]


def test_purge_removes_queued_jobs_only(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    running = endpoint.run({"keep": True})
    assert manual.take()["id"] == running.id
    queued = [endpoint.run({"i": i}) for i in range(3)]
    health = endpoint.health()
    assert (health.jobs.in_queue, health.jobs.in_progress) == (3, 1)
    purged = endpoint.purge_queue()
    assert purged.removed == 3
    assert endpoint.health().jobs.in_queue == 0
    for job in queued:  # removed: gone (404) or ended as CANCELLED, never run
        with contextlib.suppress(NotFound):
            assert job.status().status == "CANCELLED"
    assert running.status().status == "IN_PROGRESS"


def test_status_ttl_and_its_range(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = endpoint.run({"x": 1})
    assert endpoint.status(job.id, ttl=60_000).status == "IN_QUEUE"
    with pytest.raises(InvalidRequest) as info:
        endpoint.status(job.id, ttl=5)
    assert "ttl" in str(info.value) and "10000" in str(info.value)


def test_unknown_endpoint_and_job_are_not_found(client):
    with pytest.raises(NotFound) as info:
        client.endpoint("no-such-endpoint").run({"x": 1})
    assert info.value.status == 404 and "no-such-endpoint" in str(info.value)
    assert "\n" not in str(info.value)
    with pytest.raises(NotFound):
        client.endpoint("echo").status("no-such-job")


def test_health_counts_completed_jobs(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = endpoint.run({"x": 1})
    manual.finish(manual.take()["id"], "ok")
    job.wait(timeout=10)
    health = endpoint.health()
    assert health.jobs.completed == 1 and health.jobs.in_queue == 0


def test_refused_before_sending(recording_client):
    client, transport = recording_client
    endpoint = client.endpoint("echo")
    for call in (
        lambda: endpoint.run({"blob": "x" * 10_000_001}),
        lambda: endpoint.runsync({"blob": "x" * 20_000_001}),
        lambda: endpoint.runsync({"x": 1}, wait=999),
        lambda: endpoint.runsync({"x": 1}, wait=300_001),
        lambda: endpoint.run({"x": 1}, policy={"execution_timeout": 4_999}),
        lambda: endpoint.run({"x": 1}, policy={"ttl": 7 * 86_400_000 + 1}),
        lambda: endpoint.run("not an object"),
        lambda: endpoint.status("job", ttl=9_999),
        lambda: endpoint.status("job", wait=999),
        lambda: endpoint.status("job", wait=300_001),
        lambda: endpoint.status("job", wait=5_000, ttl=60_000),
    ):
        with pytest.raises(InvalidRequest) as info:
            call()
        assert str(info.value).startswith("Invalid request (not sent): ")
    assert transport.sent == []


def test_errors_never_carry_the_key(emulator, client):
    with pytest.raises(NotFound) as info:
        client.endpoint("missing-endpoint").health()
    for text in (str(info.value), repr(info.value)):
        assert emulator.api_key not in text
    assert emulator.api_key not in repr(client.endpoint("echo"))


def test_rate_limited_purge_raises_with_retry_after(emulator):
    from podbook.client import RetryPolicy

    endpoint_id = create_endpoint(emulator, "purge")
    with Client(api_key=emulator.api_key, url=emulator.url, retry=RetryPolicy(max_attempts=1)) as c:
        endpoint = c.endpoint(endpoint_id)
        with pytest.raises(RateLimited) as info:
            for _ in range(5):
                endpoint.purge_queue()
    assert info.value.status == 429
    assert info.value.retry_after is not None and info.value.retry_after > 0


@pytest.fixture(scope="module")
def scaled_emulator(start_emulator):
    """An emulator whose queue durations run 100 times faster (5 s executionTimeout = 50 ms)."""
    return start_emulator(extra_args=("--queue-time-scale", "0.01"))


def test_execution_timeout_raises_job_timed_out(scaled_emulator):
    worker = ManualWorker(scaled_emulator, create_endpoint(scaled_emulator))
    with Client(api_key=scaled_emulator.api_key, url=scaled_emulator.url) as c:
        job = c.endpoint(worker.endpoint_id).run({"x": 1}, policy={"executionTimeout": 5000})
        worker.take()
        with pytest.raises(JobTimedOut) as info:
            job.output(timeout=20)
    worker.close()
    assert "executionTimeout" in str(info.value) and info.value.status == "TIMED_OUT"
