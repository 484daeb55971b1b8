"""Worker faults: a worker killed mid-job (``kill -9``) and a handler that hangs.

Real ``podbook worker`` processes with a handler that appends each job id to a ledger. A job
whose worker died is never stuck IN_PROGRESS: it ends TIMED_OUT at its ``executionTimeout``
(the job's policy, else the endpoint's ``timeout``), and ``/retry`` runs it again on another
worker. A handler that never returns is timed out the same way, and its worker goes on
serving. The emulator runs at ``--queue-time-scale 0.1`` (executionTimeout 20 s → 2 s);
reported times stay real milliseconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from faults_helpers import (
    QUEUE_TIME_SCALE,
    WorkerProcess,
    create_endpoint,
    ledger_counts,
    status,
    wait_for,
    worker_key,
    write_ledger_handler,
)

SCALE = QUEUE_TIME_SCALE


def health(http: httpx.Client, endpoint: str) -> dict[str, Any]:
    """The endpoint's ``/health`` body."""
    response = http.get(f"/v2/{endpoint}/health")
    assert response.status_code == 200, response.text
    return response.json()


def test_a_worker_killed_mid_job_times_its_jobs_out_by_their_policy_and_retry_runs_them(
    emu: Any, http: httpx.Client, tmp_path: Path
) -> None:
    handler, ledger = write_ledger_handler(tmp_path)
    go = tmp_path / "go"
    endpoint = create_endpoint(http, "killed-worker", timeout=40_000)  # 4 s scaled
    key = worker_key(http, endpoint)
    first = WorkerProcess(
        emu.url, endpoint, key, handler, tmp_path / "w1.log", worker_id="w-doomed", concurrency=2
    )
    second = None
    try:
        by_policy = http.post(
            f"/v2/{endpoint}/run",
            json={"input": {"until": str(go)}, "policy": {"executionTimeout": 20_000}},
        ).json()["id"]
        by_endpoint = http.post(f"/v2/{endpoint}/run", json={"input": {"until": str(go)}}).json()[
            "id"
        ]
        wait_for(lambda: set(ledger_counts(ledger)) == {by_policy, by_endpoint}, timeout=30)
        for job_id in (by_policy, by_endpoint):
            assert status(http, endpoint, job_id)["status"] == "IN_PROGRESS"
        first.kill9()
        killed = time.monotonic()

        # Never stuck: each ends TIMED_OUT at its own executionTimeout (2 s, then 4 s).
        wait_for(lambda: status(http, endpoint, by_policy)["status"] == "TIMED_OUT", timeout=20)
        policy_after = time.monotonic() - killed
        wait_for(lambda: status(http, endpoint, by_endpoint)["status"] == "TIMED_OUT", timeout=20)
        endpoint_after = time.monotonic() - killed
        record = status(http, endpoint, by_policy)
        assert 1_900 <= record["executionTime"] < 4_000, record
        assert 3_900 <= status(http, endpoint, by_endpoint)["executionTime"] < 6_500
        wait_for(lambda: health(http, endpoint)["workers"] == {"idle": 0, "running": 0})
        assert health(http, endpoint)["jobs"]["inProgress"] == 0

        # The user's retry runs them again, on a new worker, to the end.
        go.write_text("")
        for job_id in (by_policy, by_endpoint):
            retried = http.post(f"/v2/{endpoint}/retry/{job_id}")
            assert retried.json() == {"id": job_id, "status": "IN_QUEUE"}, retried.text
        second = WorkerProcess(
            emu.url, endpoint, key, handler, tmp_path / "w2.log", worker_id="w-fresh"
        )
        for job_id in (by_policy, by_endpoint):
            wait_for(lambda j=job_id: status(http, endpoint, j)["status"] == "COMPLETED", 30)
            assert status(http, endpoint, job_id)["workerId"] == "w-fresh"
        assert ledger_counts(ledger) == {by_policy: 2, by_endpoint: 2}  # killed try + retry
        assert health(http, endpoint)["jobs"]["retried"] == 2
        print(
            f"\nworker killed mid-job: TIMED_OUT {policy_after:.2f} s after the kill "
            f"(policy executionTimeout 2 s scaled), {endpoint_after:.2f} s "
            "(endpoint timeout 4 s scaled); both COMPLETED after /retry on a new worker"
        )
    finally:
        go.write_text("")
        first.stop()
        if second is not None:
            second.stop()


def test_a_hanging_handler_is_timed_out_and_its_worker_keeps_serving(
    emu: Any, http: httpx.Client, tmp_path: Path
) -> None:
    handler, ledger = write_ledger_handler(tmp_path)
    endpoint = create_endpoint(http, "hanging")
    key = worker_key(http, endpoint)
    worker = WorkerProcess(emu.url, endpoint, key, handler, tmp_path / "w.log", worker_id="w-hang")
    try:
        hung = http.post(
            f"/v2/{endpoint}/run",
            json={"input": {"hang": True}, "policy": {"executionTimeout": 10_000}},
        ).json()["id"]
        wait_for(lambda: status(http, endpoint, hung)["status"] == "TIMED_OUT", timeout=20)
        assert status(http, endpoint, hung)["executionTime"] >= 1_000
        # The worker was told to stop the job; it stays up and serves the next one.
        after = http.post(f"/v2/{endpoint}/runsync", json={"input": {"n": 7}}).json()
        if after["status"] != "COMPLETED":
            wait_for(lambda: status(http, endpoint, after["id"])["status"] == "COMPLETED", 30)
            after = status(http, endpoint, after["id"])
        assert after["output"] == {"n": 7}
        assert after["workerId"] == "w-hang" and worker.alive(), worker.log()
        assert ledger_counts(ledger)[hung] == 1  # timed out, not run again
        # A hung job is not retried by itself: it stays TIMED_OUT until the user retries.
        time.sleep(1.0)
        assert status(http, endpoint, hung)["status"] == "TIMED_OUT"
    finally:
        worker.stop()
