"""Client-facing queue operations against a real emulator process, with raw httpx.

Each test uses its own endpoint; a raw worker (``RawWorker``) plays the worker's part.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from typing import Any

import httpx
import pytest
from test_queue_helpers import (
    RawWorker,
    create_endpoint,
    health,
    queue_emulator,
    run,
    status,
    wait_for,
    worker_key,
)


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """One emulator with fast broker timings for this module."""
    return queue_emulator(start_emulator)


def test_run_take_result_status(http: httpx.Client, endpoint: str, worker: RawWorker) -> None:
    job_id = run(http, endpoint, {"input": {"prompt": "hi"}})
    queued = status(http, endpoint, job_id)
    assert queued["status"] == "IN_QUEUE" and "output" not in queued
    job = worker.take_job()
    assert job["id"] == job_id and job["input"] == {"prompt": "hi"}
    assert status(http, endpoint, job_id)["status"] == "IN_PROGRESS"
    time.sleep(0.05)
    assert worker.post_result(job_id, {"output": {"text": "hello"}}).status_code == 200
    done = status(http, endpoint, job_id)
    assert done["status"] == "COMPLETED"
    assert done["output"] == {"text": "hello"}
    assert done["workerId"] == worker.worker_id
    assert isinstance(done["delayTime"], int) and isinstance(done["executionTime"], int)
    assert done["executionTime"] >= 50


def test_runsync_waits_for_the_result(http: httpx.Client, endpoint: str, worker: RawWorker) -> None:
    def serve_one() -> None:
        job = worker.take_job()
        worker.post_result(job["id"], {"output": job["input"]["n"] * 2})

    thread = threading.Thread(target=serve_one)
    thread.start()
    response = http.post(f"/v2/{endpoint}/runsync", json={"input": {"n": 21}})
    thread.join()
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "COMPLETED" and body["output"] == 42
    assert body["id"].startswith("sync-")


def test_runsync_not_done_within_wait_answers_id_and_status(
    http: httpx.Client, endpoint: str
) -> None:
    started = time.monotonic()
    response = http.post(f"/v2/{endpoint}/runsync?wait=1000", json={"input": {}})
    assert 0.9 < time.monotonic() - started < 3
    assert response.status_code == 200
    assert set(response.json()) == {"id", "status"}
    assert response.json()["status"] == "IN_QUEUE"
    assert status(http, endpoint, response.json()["id"])["status"] == "IN_QUEUE"


@pytest.mark.parametrize("wait", ["999", "300001", "abc"])
def test_runsync_wait_out_of_range(http: httpx.Client, endpoint: str, wait: str) -> None:
    response = http.post(f"/v2/{endpoint}/runsync?wait={wait}", json={"input": {}})
    assert response.status_code == 400
    assert "wait is invalid" in response.json()["error"]


def test_bad_bodies_400_oversize_413_one_line(http: httpx.Client, endpoint: str) -> None:
    for body in ({"input": 3}, {"prompt": "x"}, {"input": {}, "policy": {"ttl": 5}}):
        response = http.post(f"/v2/{endpoint}/run", json=body)
        assert response.status_code == 400, body
        assert "\n" not in response.json()["error"]
    too_big = {"input": {"blob": "x" * 10_000_001}}
    response = http.post(f"/v2/{endpoint}/run", json=too_big)
    assert response.status_code == 413 and "too large" in response.json()["error"]


def test_unknown_endpoint_and_job_are_404(http: httpx.Client, endpoint: str) -> None:
    for path in ("/v2/no-such-ep/health", "/v2/no-such-ep/status/x"):
        response = http.get(path)
        assert response.status_code == 404
        assert "no-such-ep" in response.json()["error"]
    response = http.post("/v2/no-such-ep/run", json={"input": {}})
    assert response.status_code == 404
    response = http.get(f"/v2/{endpoint}/status/not-a-job")
    assert response.status_code == 404 and "not found" in response.json()["error"]


def test_auth_bare_key_readonly_and_missing(emu: Any, endpoint: str) -> None:
    bare = httpx.post(
        f"{emu.url}/v2/{endpoint}/run",
        json={"input": {}},
        headers={"Authorization": emu.api_key},
    )
    assert bare.status_code == 200
    missing = httpx.get(f"{emu.url}/v2/{endpoint}/health")
    assert missing.status_code == 401 and "error" in missing.json()
    with emu.http(emu.readonly_key) as readonly:
        assert readonly.get(f"/v2/{endpoint}/health").status_code == 200
        refused = readonly.post(f"/v2/{endpoint}/run", json={"input": {}})
        assert refused.status_code == 403 and "read-only" in refused.json()["error"]


def test_accounts_are_isolated(emu: Any, http: httpx.Client, endpoint: str) -> None:
    job_id = run(http, endpoint, {"input": {"secret": 1}})
    with emu.http(emu.other_key) as other:
        # Account B does not see A's endpoint or job; its own 'echo' is another queue.
        assert other.get(f"/v2/{endpoint}/status/{job_id}").status_code == 404
        create_endpoint(other, endpoint)  # the same name is free in account B
        assert other.get(f"/v2/{endpoint}/status/{job_id}").status_code == 404
        b_job = run(other, endpoint, {"input": {"b": True}})
        b_worker = RawWorker(emu.url, endpoint, worker_key(other, endpoint), "w-b")
        a_worker = RawWorker(emu.url, endpoint, worker_key(http, endpoint), "w-a")
        try:
            assert b_worker.take_job()["id"] == b_job
            assert a_worker.take_job()["id"] == job_id
            assert a_worker.take().status_code == 204  # never B's jobs
        finally:
            a_worker.close()
            b_worker.close()


def test_worker_key_checks(emu: Any, http: httpx.Client, endpoint: str) -> None:
    other_endpoint = create_endpoint(http, "other-" + secrets.token_hex(3))
    key = worker_key(http, other_endpoint)
    wrong = RawWorker(emu.url, endpoint, key)
    assert wrong.take().status_code == 403
    wrong.close()
    user_key = RawWorker(emu.url, endpoint, emu.api_key)
    assert user_key.take().status_code == 401  # the user's API key is not a worker key
    user_key.close()
    bearer = httpx.get(
        f"{emu.url}/v2/{other_endpoint}/job-take/w?&job_in_progress=0",
        headers={"Authorization": f"Bearer {key}"},
        timeout=5,
    )
    assert bearer.status_code == 204


def test_take_long_polls_then_204_and_wakes_at_once(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    started = time.monotonic()
    assert worker.take().status_code == 204
    assert 0.4 < time.monotonic() - started < 2
    result: dict[str, Any] = {}

    def take() -> None:
        result["response"] = worker.take()
        result["at"] = time.monotonic()

    thread = threading.Thread(target=take)
    thread.start()
    time.sleep(0.2)
    submitted = time.monotonic()
    job_id = run(http, endpoint, {"input": {"x": 1}})
    thread.join()
    assert result["response"].status_code == 200
    assert result["response"].json()["id"] == job_id
    assert result["at"] - submitted < 0.25  # woken, not polled (an empty take waits 0.4 s+)


def test_take_batch_returns_a_list(http: httpx.Client, endpoint: str, worker: RawWorker) -> None:
    ids = [run(http, endpoint, {"input": {"i": i}}) for i in range(5)]
    first = worker.take_batch(3)
    assert first.status_code == 200
    assert [job["id"] for job in first.json()] == ids[:3]
    second = worker.take_batch(3).json()
    assert [job["id"] for job in second] == ids[3:]
    assert worker.take_batch(3).status_code == 204


def test_low_priority_jobs_wait_for_normal_ones(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    low = run(http, endpoint, {"input": {}, "policy": {"lowPriority": True}})
    normal = run(http, endpoint, {"input": {}})
    assert worker.take_job()["id"] == normal
    assert worker.take_job()["id"] == low


def test_progress_is_the_output_while_in_progress(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    response = worker.post_result(job_id, {"status": "IN_PROGRESS", "output": "50% done"})
    assert response.status_code == 200
    record = status(http, endpoint, job_id)
    assert record["status"] == "IN_PROGRESS" and record["output"] == "50% done"
    worker.post_result(job_id, {"output": "all done"})
    assert status(http, endpoint, job_id)["output"] == "all done"


def test_handler_error_fails_the_job(http: httpx.Client, endpoint: str, worker: RawWorker) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    error = json.dumps(
        {
            "error_type": "<class 'ValueError'>",
            "error_message": "bad prompt",
            "error_traceback": "Traceback ...",
            "hostname": "h",
            "worker_id": worker.worker_id,
            "runpod_version": "1.12.0",
        }
    )
    assert worker.post_result(job_id, {"error": error}).status_code == 200
    record = status(http, endpoint, job_id)
    assert record["status"] == "FAILED"
    assert json.loads(record["error"])["error_message"] == "bad prompt"
    assert health(http, endpoint)["jobs"]["failed"] == 1


def test_result_without_output_completes(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    worker.post_result(job_id, {})
    record = status(http, endpoint, job_id)
    assert record["status"] == "COMPLETED" and "output" not in record


def test_cancel_queued_job_is_never_handed_out(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    response = http.post(f"/v2/{endpoint}/cancel/{job_id}")
    assert response.json() == {"id": job_id, "status": "CANCELLED"}
    assert status(http, endpoint, job_id)["status"] == "CANCELLED"
    assert worker.take().status_code == 204


def test_cancel_running_job_tells_the_worker(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    assert worker.stop_signals().status_code == 204  # nothing to stop yet (after a long-poll)
    got: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: got.update(r=worker.stop_signals()))
    thread.start()
    time.sleep(0.1)
    assert http.post(f"/v2/{endpoint}/cancel/{job_id}").json()["status"] == "CANCELLED"
    thread.join()
    assert got["r"].status_code == 200 and got["r"].json() == {"jobsToStop": [job_id]}
    late = worker.post_result(job_id, {"output": "too late"})
    assert late.status_code == 409  # ignored; the SDK drops a result on 4xx
    record = status(http, endpoint, job_id)
    assert record["status"] == "CANCELLED" and "output" not in record


def test_retry_failed_job_same_id_input_output_cleared(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {"attempt": "x"}})
    worker.take_job()
    worker.post_result(job_id, {"output": "partial", "error": "boom"})
    failed = status(http, endpoint, job_id)
    assert failed["status"] == "FAILED" and failed["output"] == "partial"
    response = http.post(f"/v2/{endpoint}/retry/{job_id}")
    assert response.json() == {"id": job_id, "status": "IN_QUEUE"}
    again = status(http, endpoint, job_id)
    assert again["status"] == "IN_QUEUE" and "output" not in again and "error" not in again
    assert worker.take_job() == {"id": job_id, "input": {"attempt": "x"}}
    worker.post_result(job_id, {"output": "ok"})
    assert status(http, endpoint, job_id)["output"] == "ok"
    jobs = health(http, endpoint)["jobs"]
    assert jobs["retried"] == 1 and jobs["completed"] == 1 and jobs["failed"] == 0


def test_retry_refused_unless_failed_or_timed_out(http: httpx.Client, endpoint: str) -> None:
    job_id = run(http, endpoint, {"input": {}})
    response = http.post(f"/v2/{endpoint}/retry/{job_id}")
    assert response.status_code == 400
    assert "only FAILED or TIMED_OUT" in response.json()["error"]


def test_purge_removes_queued_jobs_only(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    running = run(http, endpoint, {"input": {}})
    worker.take_job()
    queued = [run(http, endpoint, {"input": {"i": i}}) for i in range(3)]
    response = http.post(f"/v2/{endpoint}/purge-queue")
    assert response.json() == {"removed": 3, "status": "completed"}
    assert all(status(http, endpoint, j)["status"] == "CANCELLED" for j in queued)
    assert status(http, endpoint, running)["status"] == "IN_PROGRESS"
    assert worker.take().status_code == 204


def test_health_counts_jobs_and_workers(
    emu: Any, http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    assert health(http, endpoint) == {
        "jobs": {"completed": 0, "failed": 0, "inProgress": 0, "inQueue": 0, "retried": 0},
        "workers": {"idle": 0, "running": 0},
    }
    first = run(http, endpoint, {"input": {}})
    run(http, endpoint, {"input": {}})
    worker.ping()
    idle = RawWorker(emu.url, endpoint, worker_key(http, endpoint), "w-idle")
    idle.ping()
    worker.take_job()
    assert health(http, endpoint) == {
        "jobs": {"completed": 0, "failed": 0, "inProgress": 1, "inQueue": 1, "retried": 0},
        "workers": {"idle": 1, "running": 1},
    }
    worker.post_result(first, {"output": 1})
    assert health(http, endpoint)["jobs"]["completed"] == 1
    assert health(http, endpoint)["workers"] == {"idle": 2, "running": 0}
    idle.ping(status="unhealthy", check="gpu", reason="test")
    assert health(http, endpoint)["workers"] == {"idle": 1, "running": 0}
    idle.close()


def test_stop_pod_retires_the_worker(http: httpx.Client, endpoint: str, worker: RawWorker) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    worker.post_result(job_id, {"output": 1, "stopPod": True})
    assert status(http, endpoint, job_id)["status"] == "COMPLETED"
    assert health(http, endpoint)["workers"] == {"idle": 0, "running": 0}


def test_stream_long_polls_and_drains_in_order(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    got: dict[str, Any] = {}

    def read() -> None:
        got["body"] = http.get(f"/v2/{endpoint}/stream/{job_id}").json()
        got["at"] = time.monotonic()

    thread = threading.Thread(target=read)
    thread.start()
    time.sleep(0.2)
    sent = time.monotonic()
    worker.post_chunk(job_id, {"text": ["a"]})
    thread.join()
    assert got["at"] - sent < 0.25  # woken by the chunk, not at the end of its 10 s wait
    assert got["body"] == {"status": "IN_PROGRESS", "stream": [{"output": {"text": ["a"]}}]}
    for word in ("b", "c"):
        worker.post_chunk(job_id, word)
    assert http.get(f"/v2/{endpoint}/stream/{job_id}").json()["stream"] == [
        {"output": "b"},
        {"output": "c"},
    ]
    worker.post_chunk(job_id, "d")
    worker.post_result(job_id, {"output": [{"text": ["a"]}, "b", "c", "d"]}, is_stream=True)
    end = http.get(f"/v2/{endpoint}/stream/{job_id}").json()
    assert end == {"status": "COMPLETED", "stream": [{"output": "d"}]}
    assert http.get(f"/v2/{endpoint}/stream/{job_id}").json() == {
        "status": "COMPLETED",
        "stream": [],
    }
    assert status(http, endpoint, job_id)["output"] == [{"text": ["a"]}, "b", "c", "d"]


def test_stream_ends_on_cancel(http: httpx.Client, endpoint: str, worker: RawWorker) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    got: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: got.update(body=http.get(f"/v2/{endpoint}/stream/{job_id}").json())
    )
    thread.start()
    time.sleep(0.1)
    http.post(f"/v2/{endpoint}/cancel/{job_id}")
    thread.join(timeout=5)
    assert got["body"] == {"status": "CANCELLED", "stream": []}


def test_stream_chunks_over_1_mb_are_split(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    text = "é" * 1_200_000  # 2.4 MB of UTF-8
    worker.post_chunk(job_id, text)
    stream = http.get(f"/v2/{endpoint}/stream/{job_id}").json()["stream"]
    pieces = [c["output"] for c in stream]
    assert len(pieces) == 3
    assert all(len(p.encode()) <= 1_000_000 for p in pieces)
    assert "".join(pieces) == text


def test_split_chunks_stay_within_1_mb_once_encoded_as_json(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    text = 'say "hi"\n' * 150_000  # 1.5 MB of text, 1.8 MB as JSON (quotes and newlines escaped)
    worker.post_chunk(job_id, text)
    stream = http.get(f"/v2/{endpoint}/stream/{job_id}").json()["stream"]
    encoded = [len(json.dumps(item["output"], ensure_ascii=False).encode()) for item in stream]
    assert len(encoded) == 2 and all(size <= 1_000_000 for size in encoded)
    assert "".join(item["output"] for item in stream) == text


def test_status_and_stream_accept_post(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    assert http.post(f"/v2/{endpoint}/status/{job_id}").json()["status"] == "IN_QUEUE"


def test_purge_queue_rate_limit_is_2_per_10_s(http: httpx.Client, endpoint: str) -> None:
    for _ in range(2):
        assert http.post(f"/v2/{endpoint}/purge-queue").status_code == 200
    refused = http.post(f"/v2/{endpoint}/purge-queue")
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 10
    assert "purge-queue" in refused.json()["error"]
    other = create_endpoint(http, "other-" + secrets.token_hex(3))
    assert http.post(f"/v2/{other}/purge-queue").status_code == 200  # per endpoint


def test_worker_authorization_never_logged(emu: Any, http: httpx.Client, endpoint: str) -> None:
    key = worker_key(http, endpoint)
    w = RawWorker(emu.url, endpoint, key)
    w.take()
    w.ping()
    w.close()
    log = emu.log_path.read_text(errors="replace")
    assert key not in log and emu.api_key not in log


def wait_health(http: httpx.Client, endpoint: str, workers: dict[str, int]) -> None:
    """Wait until ``/health`` reports these worker counts."""
    wait_for(lambda: health(http, endpoint)["workers"] == workers, timeout=5)


def test_batched_stream_post_keeps_order_and_metrics(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    worker.post_chunk(job_id, "a")
    batch = {"stream": [{"output": "b"}, {"output": "c", "metrics": {"stream_index": 2}}]}
    url = worker.stream_url.format(job_id=job_id) + "&isStream=false"
    assert worker.http.post(url, content=json.dumps(batch)).status_code == 200
    assert http.get(f"/v2/{endpoint}/stream/{job_id}").json()["stream"] == [
        {"output": "a"},
        {"output": "b"},
        {"output": "c", "metrics": {"stream_index": 2}},
    ]
    bad = worker.http.post(url, content=json.dumps({"stream": [{"text": "x"}]}))
    assert bad.status_code == 400 and "stream body" in bad.json()["error"]


def test_a_ping_still_listing_a_stopped_job_gets_the_stop_again(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    # The runpod SDK drops a stop that arrives before the job's task exists; its pings
    # keep listing the job, so the broker tells it again.
    job_id = run(http, endpoint, {"input": {}})
    other_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    worker.take_job()
    assert http.post(f"/v2/{endpoint}/cancel/{job_id}").json()["status"] == "CANCELLED"
    assert worker.stop_signals().json() == {"jobsToStop": [job_id]}  # this one is "lost"
    assert worker.ping(job_id=f"{job_id},{other_id}").status_code == 200
    assert worker.stop_signals().json() == {"jobsToStop": [job_id]}  # told again
    # Once a ping no longer lists it, no more stops.
    worker.ping(job_id=other_id)
    assert worker.stop_signals().status_code == 204
    assert status(http, endpoint, other_id)["status"] == "IN_PROGRESS"


def test_a_worker_back_from_gone_is_told_to_stop_a_job_cancelled_meanwhile(
    emu: Any, http: httpx.Client, endpoint: str
) -> None:
    w = RawWorker(emu.url, endpoint, worker_key(http, endpoint), "w-away")
    job_id = run(http, endpoint, {"input": {}})
    w.take_job()
    # Silent for longer than --worker-gone-seconds (1 s): marked gone, so no stop is queued.
    wait_for(lambda: health(http, endpoint)["workers"] == {"idle": 0, "running": 0}, timeout=4)
    assert http.post(f"/v2/{endpoint}/cancel/{job_id}").json()["status"] == "CANCELLED"
    assert w.ping(job_id=job_id).status_code == 200  # back, still running it
    assert w.stop_signals().json() == {"jobsToStop": [job_id]}
    w.close()
