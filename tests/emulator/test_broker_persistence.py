"""What survives an emulator restart: endpoints, queued jobs, results within retention,
worker keys; a job IN_PROGRESS at shutdown stays on its worker until that worker disowns it
(or is gone), then goes back to the queue."""

from __future__ import annotations

from typing import Any

from test_queue_helpers import (
    RawWorker,
    create_endpoint,
    health,
    queue_emulator,
    run,
    status,
    wait_for,
)


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
        # The job that was running when the emulator stopped is still on its worker (which
        # may have outlived the emulator) until that worker says it runs nothing ...
        assert status(http, endpoint, running)["status"] == "IN_PROGRESS"
        assert health(http, endpoint)["jobs"] == {
            "completed": 1,
            "failed": 0,
            "inProgress": 1,
            "inQueue": 2,
            "retried": 0,
        }
        # ... as this take does (job_in_progress=0): then it is queued again, first in line.
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


HELD_HANDLER = """
import os
import time


def handler(job):
    while not os.path.exists(job["input"]["go"]):
        time.sleep(0.05)
    return job["input"]["n"]
"""


def test_restored_jobs_of_a_handler_endpoint_run_without_a_new_submission(
    start_emulator: Any, tmp_path: Any
) -> None:
    handler = tmp_path / "held.py"
    handler.write_text(HELD_HANDLER)
    go = str(tmp_path / "go")
    emu = queue_emulator(start_emulator)
    with emu.http() as http:
        created = http.post(
            "/v2/serverless",
            json={"name": "held", "handler": str(handler), "workers": {"max": 1}},
        )
        assert created.status_code == 201, created.text
        first = run(http, "held", {"input": {"n": 1, "go": go}})
        wait_for(lambda: status(http, "held", first)["status"] == "IN_PROGRESS", timeout=30)
        second = run(http, "held", {"input": {"n": 2, "go": go}})

    emu.restart()
    (tmp_path / "go").write_text("")

    with emu.http() as http:
        # Nothing new is submitted: the restored queue starts the endpoint's worker.
        for job_id, n in ((first, 1), (second, 2)):
            wait_for(lambda j=job_id: status(http, "held", j)["status"] == "COMPLETED", timeout=30)
            assert status(http, "held", job_id)["output"] == n
