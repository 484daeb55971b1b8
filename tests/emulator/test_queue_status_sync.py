"""``GET /v2/{endpoint_id}/status-sync/{job_id}?wait=ms``: the long-polling status read the
service's JS SDK (``runpod-sdk``) goes on with when a ``/runsync`` answered before its job
ended. It holds until the job ends or ``wait`` ms pass, then answers what ``/status`` would;
same keys, 404s, ``wait`` bounds and ``{"error": ...}`` bodies as the other queue reads.

Against the session emulator; a raw worker (``RawWorker``) decides when each job ends.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

import httpx
import pytest
from test_queue_helpers import RawWorker, create_endpoint, run, status


@pytest.fixture(scope="module")
def emu(emulator: Any) -> Any:
    """The session emulator (``http``, ``endpoint`` and ``worker`` come from conftest)."""
    return emulator


def status_sync(http: httpx.Client, endpoint: str, job_id: str, wait: str) -> httpx.Response:
    """One status-sync read."""
    return http.get(f"/v2/{endpoint}/status-sync/{job_id}", params={"wait": wait})


def held(http: httpx.Client, endpoint: str, job_id: str, wait: str) -> tuple[Any, threading.Thread]:
    """Start a status-sync read in a thread; ``(result dict, thread)``."""
    result: dict[str, Any] = {}

    def read() -> None:
        started = time.monotonic()
        result["response"] = status_sync(http, endpoint, job_id, wait)
        result["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return result, thread


def test_holds_until_the_job_ends_then_answers_its_record(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {"n": 21}})
    worker.take_job()
    result, thread = held(http, endpoint, job_id, "60000")
    time.sleep(0.3)  # the handler's work; the read is held meanwhile
    assert thread.is_alive()
    assert worker.post_result(job_id, {"output": 42}).status_code == 200
    thread.join(10)
    response = result["response"]
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert 0.25 < result["seconds"] < 5  # woken by the result, not by the 60 s wait
    assert response.json() == status(http, endpoint, job_id)
    body = response.json()
    assert body["id"] == job_id and body["status"] == "COMPLETED" and body["output"] == 42
    assert body["workerId"] == worker.worker_id and body["executionTime"] >= 250


def test_an_ended_job_is_answered_at_once(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    worker.post_result(job_id, {"output": "done"})
    started = time.monotonic()
    response = status_sync(http, endpoint, job_id, "300000")
    assert time.monotonic() - started < 2
    assert response.status_code == 200 and response.json() == status(http, endpoint, job_id)


def test_a_job_still_running_when_wait_passes_is_answered_as_status_would(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    worker.post_result(job_id, {"status": "IN_PROGRESS", "output": "50% done"})
    started = time.monotonic()
    response = status_sync(http, endpoint, job_id, "1000")
    assert 0.9 < time.monotonic() - started < 3
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "IN_PROGRESS" and body["output"] == "50% done"
    assert body["id"] == job_id and body["workerId"] == worker.worker_id


def test_a_queued_job_is_answered_in_queue_when_wait_passes(
    http: httpx.Client, endpoint: str
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    response = status_sync(http, endpoint, job_id, "1000")
    assert response.status_code == 200
    assert response.json()["status"] == "IN_QUEUE" and response.json()["id"] == job_id


def test_cancel_wakes_a_held_read(http: httpx.Client, endpoint: str) -> None:
    job_id = run(http, endpoint, {"input": {}})
    result, thread = held(http, endpoint, job_id, "60000")
    time.sleep(0.2)
    assert http.post(f"/v2/{endpoint}/cancel/{job_id}").json()["status"] == "CANCELLED"
    thread.join(10)
    assert result["seconds"] < 5
    assert result["response"].json()["status"] == "CANCELLED"


def test_deleting_the_endpoint_answers_a_held_read_cancelled(http: httpx.Client) -> None:
    name = "ss-" + secrets.token_hex(4)
    endpoint = create_endpoint(http, name)
    job_id = run(http, endpoint, {"input": {}})
    result, thread = held(http, endpoint, job_id, "60000")
    time.sleep(0.2)
    assert http.delete(f"/v2/serverless/{endpoint}").status_code in (200, 204)
    thread.join(10)
    assert result["response"].status_code == 200
    assert result["response"].json()["status"] == "CANCELLED"


@pytest.mark.parametrize("wait", ["999", "300001", "abc", ""])
def test_wait_out_of_range_is_the_same_400_as_runsync(
    http: httpx.Client, endpoint: str, wait: str
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    response = status_sync(http, endpoint, job_id, wait)
    runsync = http.post(f"/v2/{endpoint}/runsync", params={"wait": wait}, json={"input": {}})
    assert response.status_code == runsync.status_code == 400
    assert response.json() == runsync.json()
    assert set(response.json()) == {"error"}
    assert response.json()["error"].startswith("wait is invalid; must be between 1000 and 300000")


def test_without_wait_it_holds_like_runsync_by_default(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    result: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: result.update(r=http.get(f"/v2/{endpoint}/status-sync/{job_id}")),
        daemon=True,
    )
    thread.start()
    time.sleep(0.2)
    assert thread.is_alive()  # held (the default wait is 90 s)
    worker.post_result(job_id, {"output": "ok"})
    thread.join(10)
    assert result["r"].json()["output"] == "ok"


def test_unknown_job_endpoint_and_key(emulator: Any, http: httpx.Client, endpoint: str) -> None:
    unknown_job = status_sync(http, endpoint, "not-a-job", "1000")
    assert unknown_job.status_code == 404 and "not found" in unknown_job.json()["error"]
    unknown_endpoint = status_sync(http, "no-such-ep", "x", "1000")
    assert unknown_endpoint.status_code == 404 and "no-such-ep" in unknown_endpoint.json()["error"]
    job_id = run(http, endpoint, {"input": {}})
    no_key = httpx.get(f"{emulator.url}/v2/{endpoint}/status-sync/{job_id}?wait=1000")
    assert no_key.status_code == 401 and set(no_key.json()) == {"error"}
    bare = httpx.get(
        f"{emulator.url}/v2/{endpoint}/status-sync/{job_id}?wait=1000",
        headers={"Authorization": emulator.api_key},
        timeout=10,
    )
    assert bare.status_code == 200 and bare.json()["id"] == job_id
    with emulator.http(emulator.readonly_key) as readonly:
        assert status_sync(readonly, endpoint, job_id, "1000").status_code == 200
    with emulator.http(emulator.other_key) as other:  # account B never sees A's job
        assert status_sync(other, endpoint, job_id, "1000").status_code == 404
