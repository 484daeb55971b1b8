"""The queue client's I/O-free parts: call building, request checks, the wait logic, outcomes."""

from __future__ import annotations

import inspect

import pytest

from podbook import AsyncClient, Client
from podbook.api.queue import JobPolicy, JobRecord
from podbook.client.jobs import JobWatch, StatusPoll, outcome
from podbook.client.resources.queue import (
    RUNSYNC_TIMEOUT_MARGIN,
    queue_calls,
    submission_body,
)
from podbook.errors import (
    InvalidRequest,
    JobCancelled,
    JobFailed,
    JobNotCompleted,
    JobTimedOut,
    WaitTimeout,
)

OFFLINE = "http://127.0.0.1:9"  # nothing listens: a request that was sent would fail to connect


def record(status: str, **fields) -> JobRecord:
    return JobRecord.model_validate({"id": "job-1", "status": status, **fields})


# --- bodies and calls -------------------------------------------------------------------------


def test_input_keys_are_sent_as_given_and_policy_keys_as_wire_keys():
    body = submission_body(
        "run",
        {"max_tokens": 5, "top_p": {"inner_key": 1}},
        policy={"execution_timeout": 6000, "low_priority": True},
        s3_config={
            "access_id": "a",
            "access_secret": "s",
            "bucket_name": "b",
            "endpoint_url": "https://s3.example",
        },
        webhook="https://example.com/done",
    )
    assert body == {
        "input": {"max_tokens": 5, "top_p": {"inner_key": 1}},
        "webhook": "https://example.com/done",
        "policy": {"executionTimeout": 6000, "lowPriority": True},
        "s3Config": {
            "accessId": "a",
            "accessSecret": "s",
            "bucketName": "b",
            "endpointUrl": "https://s3.example",
        },
    }


def test_policy_model_is_accepted():
    body = submission_body("run", {}, policy=JobPolicy(ttl=60_000))
    assert body["policy"] == {"ttl": 60_000}


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"policy": {"ttl": 1}}, "$.policy.ttl: must be between 10000 and 604800000"),
        ({"policy": {"executionTimeout": 1}}, "$.policy.executionTimeout: must be between 5000"),
        ({"policy": {"retries": 1}}, "'retries' not allowed"),
        ({"webhook": "not a url"}, "$.webhook: must be an http:// or https:// URL"),
        ({"policy": "fast"}, "$.policy: must be an object"),
    ],
)
def test_bad_submission_is_one_clear_error(kwargs, words):
    with pytest.raises(InvalidRequest) as info:
        submission_body("run", {"x": 1}, **kwargs)
    assert words in str(info.value)
    assert info.value.status == 400


def test_runsync_call_waits_long_enough():
    call = queue_calls.runsync("ep", {"input": {}}, 120_000)
    assert call.params == {"wait": "120000"}
    assert call.timeout == 120 + RUNSYNC_TIMEOUT_MARGIN
    default = queue_calls.runsync("ep", {"input": {}}, None)
    assert default.params is None and default.timeout == 90 + RUNSYNC_TIMEOUT_MARGIN
    stream = queue_calls.stream("ep", "job")
    assert stream.timeout is not None and stream.timeout > 10


def test_status_sync_call_holds_and_its_read_timeout_covers_the_hold():
    call = queue_calls.status_sync("ep", "job/1", 120_000)
    assert (call.method, call.base) == ("GET", "queue")
    assert call.path == "/v2/ep/status-sync/job%2F1" and call.params == {"wait": "120000"}
    assert call.timeout == 120 + RUNSYNC_TIMEOUT_MARGIN and call.idempotent
    for bad in (999, 300_001, "soon", None):
        with pytest.raises(InvalidRequest, match="wait"):
            queue_calls.status_sync("ep", "j", bad)


def test_calls_use_the_queue_base_and_quote_ids():
    call = queue_calls.status("my-ep", "job/with?odd")
    assert call.base == "queue" and call.path == "/v2/my-ep/status/job%2Fwith%3Fodd"
    assert queue_calls.cancel("ep", "j").method == "POST"
    assert queue_calls.purge_queue("ep").path == "/v2/ep/purge-queue"


def test_endpoint_id_must_be_a_string():
    with Client(api_key="k", url=OFFLINE) as client:
        for bad in ("", "  ", None, 5):
            with pytest.raises(InvalidRequest, match="endpoint id"):
                client.endpoint(bad)
        endpoint = client.endpoint("echo")
        assert endpoint.id == "echo" and "echo" in repr(endpoint)
        job = endpoint.job("abc")
        assert (job.id, job.endpoint_id, job.last_status) == ("abc", "echo", "unknown")
        assert "abc" in repr(job)


def test_async_endpoint_mirrors_the_sync_one():
    with Client(api_key="k", url=OFFLINE) as client:
        sync = client.endpoint("echo")
        sync_job = sync.job("j")
    async_ = AsyncClient(api_key="k", url=OFFLINE).endpoint("echo")
    async_job = async_.job("j")
    for a, b in ((sync, async_), (sync_job, async_job)):
        names = {n for n in dir(a) if not n.startswith("_") and callable(getattr(a, n))}
        assert names == {n for n in dir(b) if not n.startswith("_") and callable(getattr(b, n))}
    for name in ("run", "runsync", "status", "cancel", "retry", "purge_queue", "health"):
        assert inspect.iscoroutinefunction(getattr(async_, name)), name
    for name in ("stream", "stream_chunks", "stream_batches"):
        assert inspect.isasyncgenfunction(getattr(async_, name)), name
    for name in ("status", "wait", "output", "cancel", "retry"):
        assert inspect.iscoroutinefunction(getattr(async_job, name)), name


# --- waiting ------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_watch_reports_each_change_once_and_stops_at_the_end():
    seen = []
    watch = JobWatch("job j", on_progress=seen.append, clock=FakeClock())
    assert not watch.observe(record("IN_QUEUE"))
    assert not watch.observe(record("IN_QUEUE"))
    assert not watch.observe(record("IN_PROGRESS", output={"pct": 10}))
    assert not watch.observe(record("IN_PROGRESS", output={"pct": 10}))
    assert not watch.observe(record("IN_PROGRESS", output={"pct": 60}))
    assert watch.observe(record("COMPLETED", output="done"))
    assert [(r.status, r.output) for r in seen] == [
        ("IN_QUEUE", None),
        ("IN_PROGRESS", {"pct": 10}),
        ("IN_PROGRESS", {"pct": 60}),
        ("COMPLETED", "done"),
    ]


def test_watch_polls_fast_first_then_backs_off_and_resets_on_change():
    watch = JobWatch("job j", clock=FakeClock(), max_interval=1.0)
    watch.observe(record("IN_QUEUE"))
    delays = [watch.next_sleep() for _ in range(12)]
    assert delays[0] == pytest.approx(0.05)
    assert delays == sorted(delays) and delays[-1] == 1.0
    watch.observe(record("IN_PROGRESS"))
    assert watch.next_sleep() == pytest.approx(0.05)


def test_watch_times_out_naming_the_last_status():
    clock = FakeClock()
    watch = JobWatch("job j on endpoint e", timeout=2.0, clock=clock)
    watch.observe(record("IN_PROGRESS"))
    clock.now += 1.98
    assert watch.next_sleep() == pytest.approx(0.02)
    clock.now += 0.02
    with pytest.raises(WaitTimeout) as info:
        watch.next_sleep()
    text = str(info.value)
    assert "job j on endpoint e" in text and "IN_PROGRESS" in text and "\n" not in text
    assert isinstance(info.value, TimeoutError)


def test_watch_holds_reads_until_its_deadline_then_polls():
    assert JobWatch("job", clock=FakeClock()).next_hold() == 90_000  # no timeout: 90 s reads
    clock = FakeClock()
    watch = JobWatch("job", timeout=200.0, clock=clock)
    assert watch.next_hold() == 90_000
    clock.now += 199.0 - 30.0
    assert watch.next_hold() == 31_000  # never held past the deadline
    clock.now += 30.5
    assert watch.next_hold() is None  # under the shortest wait (1 s) left: a plain poll


def test_status_poll_stands_in_for_a_held_read_until_the_end_or_the_wait():
    clock = FakeClock()
    poll = StatusPoll(2_000, clock=clock)
    assert poll.pause(record("IN_QUEUE")) == pytest.approx(0.05)
    clock.now += 1.99
    assert poll.pause(record("IN_QUEUE")) == pytest.approx(0.01)  # not past the wait
    clock.now += 0.01
    assert poll.pause(record("IN_QUEUE")) is None  # the wait is over: this is the answer
    assert StatusPoll(2_000, clock=clock).pause(record("FAILED")) is None


def test_watch_refuses_a_negative_timeout():
    with pytest.raises(InvalidRequest):
        JobWatch("job", timeout=-1)


# --- outcomes -----------------------------------------------------------------------------


def test_outcome_of_each_final_status():
    assert outcome("j", "e", record("COMPLETED", output=[1, 2])) == [1, 2]
    error = '{"error_type": "KeyError", "error_message": "k", "error_traceback": "TB"}'
    with pytest.raises(JobFailed) as failed:
        outcome("j", "e", record("FAILED", error=error))
    assert failed.value.error.traceback == "TB"
    assert str(failed.value).startswith("Job j on endpoint e failed: KeyError: k")
    with pytest.raises(JobFailed, match="no error was reported"):
        outcome("j", "e", record("FAILED"))
    with pytest.raises(JobTimedOut) as timed_out:
        outcome("j", "e", record("TIMED_OUT"))
    with pytest.raises(JobCancelled) as cancelled:
        outcome("j", "e", record("CANCELLED"))
    for err in (failed.value, timed_out.value, cancelled.value):
        assert isinstance(err, JobNotCompleted)
        assert err.job_id == "j" and err.endpoint_id == "e"
        assert "\n" not in str(err)


def test_job_errors_survive_pickling():
    import pickle

    err = JobFailed("j", "e", record("FAILED", error="boom").job_error, record("FAILED"))
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and again.error.message == "boom"
