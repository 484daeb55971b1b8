"""Time rules of the broker: executionTimeout, TTL, retention, webhooks, gone workers.

The emulator runs with ``--queue-time-scale 0.01``: every queue duration is a hundredth
(TTL 10 s → 0.1 s, executionTimeout 5 s → 50 ms, runsync retention 60 s → 0.6 s, webhook
retries 10 s → 0.1 s apart), so the same rules run in milliseconds.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
    """An emulator whose queue durations are scaled by 0.01."""
    return queue_emulator(start_emulator, "--queue-time-scale", "0.01")


def gone(http: httpx.Client, endpoint: str, job_id: str) -> bool:
    """Whether the job's status now reads 404."""
    return http.get(f"/v2/{endpoint}/status/{job_id}").status_code == 404


def test_execution_timeout_times_out_and_stops_the_worker(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(http, endpoint, {"input": {}, "policy": {"executionTimeout": 5000}})
    worker.take_job()
    signals = worker.stop_signals()  # held until the timeout (50 ms scaled)
    assert signals.json() == {"jobsToStop": [job_id]}
    record = status(http, endpoint, job_id)
    assert record["status"] == "TIMED_OUT"
    assert worker.post_result(job_id, {"output": "late"}).status_code == 409
    # A TIMED_OUT job can be retried: same id back in the queue.
    assert http.post(f"/v2/{endpoint}/retry/{job_id}").json()["status"] == "IN_QUEUE"
    assert worker.take_job()["id"] == job_id


def test_endpoint_timeout_is_the_default_execution_timeout(emu: Any, http: httpx.Client) -> None:
    endpoint = create_endpoint(http, "t-" + secrets.token_hex(4), timeout=5000)
    w = RawWorker(emu.url, endpoint, worker_key(http, endpoint))
    job_id = run(http, endpoint, {"input": {}})
    w.take_job()
    wait_for(lambda: status(http, endpoint, job_id)["status"] == "TIMED_OUT", timeout=3)
    w.close()


def test_ttl_deletes_a_queued_job(http: httpx.Client, endpoint: str) -> None:
    job_id = run(http, endpoint, {"input": {}, "policy": {"ttl": 10_000}})
    assert status(http, endpoint, job_id)["status"] == "IN_QUEUE"
    wait_for(lambda: gone(http, endpoint, job_id), timeout=3)
    assert health(http, endpoint)["jobs"]["inQueue"] == 0


def test_ttl_expiry_answers_a_held_status_sync_404(http: httpx.Client, endpoint: str) -> None:
    job_id = run(http, endpoint, {"input": {}, "policy": {"ttl": 10_000}})  # 0.1 s scaled
    started = time.monotonic()
    response = http.get(f"/v2/{endpoint}/status-sync/{job_id}", params={"wait": "20000"})
    assert time.monotonic() - started < 5  # woken by the expiry, not by the 20 s wait
    assert response.status_code == 404 and "expired" in response.json()["error"]


def test_ttl_deletes_a_running_job_and_stops_its_worker(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    job_id = run(
        http, endpoint, {"input": {}, "policy": {"ttl": 20_000, "executionTimeout": 600_000}}
    )
    worker.take_job()
    assert worker.stop_signals().json() == {"jobsToStop": [job_id]}
    assert gone(http, endpoint, job_id)


def test_status_ttl_sets_time_to_live(http: httpx.Client, endpoint: str, worker: RawWorker) -> None:
    job_id = run(http, endpoint, {"input": {}})
    worker.take_job()
    worker.post_result(job_id, {"output": 1})
    # Retention of a /run result is 30 min (18 s scaled); ?ttl= shortens the job's life.
    assert http.get(f"/v2/{endpoint}/status/{job_id}?ttl=10000").status_code in (200, 404)
    wait_for(lambda: gone(http, endpoint, job_id), timeout=3)
    bad = http.get(f"/v2/{endpoint}/status/{job_id}?ttl=5")
    assert bad.status_code in (400, 404)


def test_status_ttl_out_of_range_is_400(http: httpx.Client, endpoint: str) -> None:
    job_id = run(http, endpoint, {"input": {}})
    response = http.get(f"/v2/{endpoint}/status/{job_id}?ttl=5")
    assert response.status_code == 400 and "ttl is invalid" in response.json()["error"]


def test_runsync_result_retention_is_shorter_than_run(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    def serve(n: int) -> None:
        for _ in range(n):
            job = worker.take_job()
            worker.post_result(job["id"], {"output": "ok"})

    thread = threading.Thread(target=serve, args=(2,))
    thread.start()
    sync = http.post(f"/v2/{endpoint}/runsync", json={"input": {}}).json()
    run_id = run(http, endpoint, {"input": {}})
    thread.join()
    assert sync["status"] == "COMPLETED"
    wait_for(lambda: status(http, endpoint, run_id)["status"] == "COMPLETED")
    # /runsync results are kept 1 min (0.6 s scaled), /run results 30 min (18 s scaled).
    wait_for(lambda: gone(http, endpoint, sync["id"]), timeout=3)
    assert status(http, endpoint, run_id)["status"] == "COMPLETED"


def test_runsync_retention_grows_with_wait_up_to_5_minutes(
    http: httpx.Client, endpoint: str, worker: RawWorker
) -> None:
    def serve(n: int) -> None:
        for _ in range(n):
            job = worker.take_job()
            worker.post_result(job["id"], {"output": "ok"})

    thread = threading.Thread(target=serve, args=(2,))
    thread.start()
    # No wait given (it defaults to 90 s): kept 1 min (0.6 s scaled).
    plain = http.post(f"/v2/{endpoint}/runsync", json={"input": {}}).json()
    # wait=180000: kept 3 min (1.8 s scaled).
    sync = http.post(f"/v2/{endpoint}/runsync?wait=180000", json={"input": {}}).json()
    thread.join()
    assert plain["status"] == sync["status"] == "COMPLETED"
    ended = time.monotonic()
    wait_for(lambda: gone(http, endpoint, plain["id"]), timeout=3)
    assert status(http, endpoint, sync["id"])["output"] == "ok"
    wait_for(lambda: gone(http, endpoint, sync["id"]), timeout=4)
    assert 1.5 <= time.monotonic() - ended < 4.5


class _Receiver(BaseHTTPRequestHandler):
    answers: list[int] = []
    calls: list[tuple[float, dict[str, Any]]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append((time.monotonic(), body))
        code = type(self).answers.pop(0) if type(self).answers else 200
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    """A local webhook receiver answering the codes in ``answers`` (then 200)."""
    handler = type("Receiver", (_Receiver,), {"answers": [], "calls": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", handler
    server.shutdown()


def test_webhook_gets_the_record_with_input_and_retries(
    http: httpx.Client, endpoint: str, worker: RawWorker, receiver: Any
) -> None:
    url, handler = receiver
    handler.answers.extend([500, 404])
    job_id = run(http, endpoint, {"input": {"q": 1}, "webhook": url})
    worker.take_job()
    worker.post_result(job_id, {"output": {"a": 2}})
    wait_for(lambda: len(handler.calls) == 3, timeout=5)
    time.sleep(0.3)
    assert len(handler.calls) == 3  # 200 on the third try: no more
    times = [t for t, _ in handler.calls]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(0.08 <= gap < 1.0 for gap in gaps)  # 10 s scaled
    body = handler.calls[0][1]
    assert body["id"] == job_id and body["status"] == "COMPLETED"
    assert body["output"] == {"a": 2} and body["input"] == {"q": 1} and body["webhook"] == url
    assert isinstance(body["executionTime"], int)


def test_webhook_tried_three_times_at_most_and_on_failure(
    http: httpx.Client, endpoint: str, worker: RawWorker, receiver: Any
) -> None:
    url, handler = receiver
    handler.answers.extend([503, 503, 503, 503])
    job_id = run(http, endpoint, {"input": {}, "webhook": url})
    worker.take_job()
    worker.post_result(job_id, {"error": "boom"})
    wait_for(lambda: len(handler.calls) == 3, timeout=5)
    time.sleep(0.4)
    assert len(handler.calls) == 3
    assert handler.calls[0][1]["status"] == "FAILED"


def test_worker_that_stops_pinging_is_gone_and_its_job_times_out(
    emu: Any, http: httpx.Client, endpoint: str
) -> None:
    w = RawWorker(emu.url, endpoint, worker_key(http, endpoint), "w-silent")
    job_id = run(http, endpoint, {"input": {}, "policy": {"executionTimeout": 200_000}})
    w.take_job()
    w.ping(job_id=job_id)
    assert health(http, endpoint)["workers"] == {"idle": 0, "running": 1}
    # No more pings: marked gone after 1 s; the job stays until executionTimeout (2 s scaled).
    wait_for(lambda: health(http, endpoint)["workers"] == {"idle": 0, "running": 0}, timeout=4)
    assert status(http, endpoint, job_id)["status"] in ("IN_PROGRESS", "TIMED_OUT")
    wait_for(lambda: status(http, endpoint, job_id)["status"] == "TIMED_OUT", timeout=4)
    w.close()
