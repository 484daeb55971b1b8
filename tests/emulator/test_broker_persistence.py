"""What survives an emulator restart: endpoints, queued jobs, results within retention,
worker keys; a job IN_PROGRESS at shutdown goes back to the queue."""

from __future__ import annotations

from typing import Any

from test_queue_helpers import RawWorker, create_endpoint, health, queue_emulator, run, status


def test_queue_state_survives_a_restart(start_emulator: Any) -> None:
    emu = queue_emulator(start_emulator)
    with emu.http() as http:
        endpoint = create_endpoint(http, "persist", timeout=60_000)
        key = http.post(f"/v2/serverless/{endpoint}/worker-keys").json()["workerKey"]
        worker = RawWorker(emu.url, endpoint, key)
        done = run(http, endpoint, {"input": {"n": 1}})
        worker.take_job()
        worker.post_result(done, {"output": "kept"})
        running = run(http, endpoint, {"input": {"n": 2}})
        assert worker.take_job()["id"] == running
        queued = [run(http, endpoint, {"input": {"n": n}}) for n in (3, 4)]
        worker.close()

    emu.restart()

    with emu.http() as http:
        assert http.get(f"/v2/serverless/{endpoint}").json()["timeout"] == 60_000
        assert status(http, endpoint, done) == {
            **status(http, endpoint, done),
            "status": "COMPLETED",
            "output": "kept",
        }
        # The job that was running when the emulator stopped is queued again, first in line.
        assert status(http, endpoint, running)["status"] == "IN_QUEUE"
        assert health(http, endpoint)["jobs"] == {
            "completed": 1,
            "failed": 0,
            "inProgress": 0,
            "inQueue": 3,
            "retried": 0,
        }
        worker = RawWorker(emu.url, endpoint, key)  # the worker key still works
        taken = [worker.take_job() for _ in range(3)]
        assert [job["id"] for job in taken] == [running, *queued]
        assert taken[0]["input"] == {"n": 2}
        worker.close()


def test_declared_endpoint_keeps_its_jobs_across_restarts(start_emulator: Any) -> None:
    emu = queue_emulator(start_emulator, "--endpoint", "declared")
    with emu.http() as http:
        job_id = run(http, "declared", {"input": {"keep": True}})
    emu.restart()
    with emu.http() as http:
        assert status(http, "declared", job_id)["status"] == "IN_QUEUE"
        ids = [e["id"] for e in http.get("/v2/serverless").json()["endpoints"]]
        assert ids.count("declared") == 1
