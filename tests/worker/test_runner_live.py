"""The runner against a real emulator: real worker processes serving sample handlers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest


def error_of(record: dict) -> dict:
    """The structured error a failed job carries (JSON text, as the SDK sends it)."""
    error = record["error"]
    return json.loads(error) if isinstance(error, str) and error.startswith("{") else error


def test_sync_handler_reports_progress_then_its_output(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:handler")
    job_id = endpoint.run({"hold": 0.6, "prompt": "hi"})
    running = endpoint.wait_status(job_id, "IN_PROGRESS")
    deadline = time.monotonic() + 5
    while running.get("output") is None and time.monotonic() < deadline:
        running = endpoint.status(job_id)
    assert running["status"] == "IN_PROGRESS"
    assert running["output"] == {"step": 1, "of": 2}
    record = endpoint.wait(job_id)
    assert record["status"] == "COMPLETED"
    assert record["output"]["got"] == {"hold": 0.6, "prompt": "hi"}
    assert record["executionTime"] >= 500


def test_async_handler_reports_progress_then_its_output(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:async_handler")
    job_id = endpoint.run({"sleep": 0.6})
    running = endpoint.wait_status(job_id, "IN_PROGRESS")
    deadline = time.monotonic() + 5
    while running.get("output") is None and time.monotonic() < deadline:
        running = endpoint.status(job_id)
    assert (running["status"], running["output"]) == ("IN_PROGRESS", "halfway")
    record = endpoint.wait(job_id)
    assert record["status"] == "COMPLETED"
    assert record["output"] == {"slept": 0.6}


def test_generator_streams_chunks_in_order_and_aggregates_them(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:tokens")
    job_id = endpoint.run({"n": 25, "delay": 0.01})
    items, status = endpoint.stream(job_id)
    assert status == "COMPLETED"
    assert [item["output"] for item in items] == [f"tok{i}" for i in range(25)]
    assert endpoint.status(job_id)["output"] == [f"tok{i}" for i in range(25)]


def test_a_fast_generator_streams_every_chunk_in_order(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:tokens")
    job_id = endpoint.run({"n": 600})
    items, status = endpoint.stream(job_id)
    assert status == "COMPLETED"
    assert [item["output"] for item in items] == [f"tok{i}" for i in range(600)]


def test_no_aggregate_stream_ends_with_an_empty_output(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:tokens", "--no-aggregate-stream")
    job_id = endpoint.run({"n": 3})
    items, status = endpoint.stream(job_id)
    assert (status, len(items)) == ("COMPLETED", 3)
    assert endpoint.status(job_id).get("output") in ([], None)


def test_async_generator_streams(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:async_tokens")
    job_id = endpoint.run({"n": 5})
    items, status = endpoint.stream(job_id)
    assert status == "COMPLETED"
    assert [item["output"] for item in items] == [{"i": i} for i in range(5)]


def test_a_raised_error_fails_the_job_with_type_message_and_traceback(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:raises")
    record = endpoint.wait(endpoint.run({"bad": True}))
    assert record["status"] == "FAILED"
    error = error_of(record)
    assert error["error_type"] == "ValueError"
    assert error["error_message"] == "cannot handle {'bad': True}"
    trace = error["error_traceback"]
    assert "sample_handlers.py" in trace and "in raises" in trace
    assert "podbook/worker" not in trace  # the handler's frames only
    assert trace.rstrip().endswith("ValueError: cannot handle {'bad': True}")


def test_a_returned_error_fails_the_job_and_keeps_the_rest_as_output(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:fails_softly")
    record = endpoint.wait(endpoint.run({}))
    assert record["status"] == "FAILED"
    assert record["error"] == "the model is not loaded"


def test_an_error_mid_stream_keeps_the_chunks_and_fails(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:fails_mid_stream")
    job_id = endpoint.run({})
    items, status = endpoint.stream(job_id)
    assert status == "FAILED"
    assert [item["output"] for item in items] == ["a", "b"]
    assert error_of(endpoint.status(job_id))["error_message"] == "lost the GPU"


def test_output_that_is_not_json_fails_the_job_clearly(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:not_json")
    record = endpoint.wait(endpoint.run({}))
    assert record["status"] == "FAILED"
    assert "not JSON" in error_of(record)["error_message"]


def test_cancel_interrupts_an_async_handler(endpoint, start_worker, tmp_path):
    worker = start_worker(endpoint, "sample_handlers.py:async_handler")
    marker = str(tmp_path / "slow")
    job_id = endpoint.run({"sleep": 1.5, "marker": marker})
    endpoint.wait_status(job_id, "IN_PROGRESS")
    assert endpoint.cancel(job_id)["status"] == "CANCELLED"
    worker.wait_for_line(f"job {job_id} stopped", timeout=5)
    time.sleep(1.7)  # long enough for the handler to have finished, had it not been stopped
    assert not Path(marker + ".done").exists()
    assert endpoint.status(job_id)["status"] == "CANCELLED"


@pytest.mark.parametrize("spec", ["tokens", "async_tokens"])
def test_cancel_stops_a_generator_at_the_next_chunk(endpoint, start_worker, tmp_path, spec):
    worker = start_worker(endpoint, f"sample_handlers.py:{spec}")
    marker = str(tmp_path / spec)
    job_id = endpoint.run({"n": 200, "delay": 0.05, "marker": marker})
    first = []
    while not first:
        first = endpoint.http.get(f"/v2/{endpoint.id}/stream/{job_id}").json()["stream"]
    cancelled_at = time.monotonic()
    assert endpoint.cancel(job_id)["status"] == "CANCELLED"
    worker.wait_for_line(f"job {job_id} stopped", timeout=5)
    assert time.monotonic() - cancelled_at < 2
    record_file = Path(marker + (".produced" if spec == "tokens" else ".closed"))
    deadline = time.monotonic() + 3
    while not record_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    produced = int(record_file.read_text())
    assert produced < 60  # stopped long before its 200 chunks (~10 s)
    time.sleep(0.3)
    assert int(record_file.read_text()) == produced  # and it produced nothing after


def test_a_cancelled_sync_job_posts_nothing_and_the_worker_goes_on(endpoint, start_worker):
    worker = start_worker(endpoint, "sample_handlers.py:handler")
    job_id = endpoint.run({"hold": 0.6})
    endpoint.wait_status(job_id, "IN_PROGRESS")
    assert endpoint.cancel(job_id)["status"] == "CANCELLED"
    worker.wait_for_line(f"job {job_id} stopped", timeout=5)
    assert endpoint.runsync({"hold": 0})["status"] == "COMPLETED"
    assert endpoint.status(job_id)["status"] == "CANCELLED"  # its late result was dropped


def test_concurrency_runs_jobs_at_once(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:overlap", "--concurrency", "4")
    started = time.monotonic()
    ids = [endpoint.run({"hold": 0.8}) for _ in range(4)]
    records = [endpoint.wait(job_id) for job_id in ids]
    elapsed = time.monotonic() - started
    assert [r["status"] for r in records] == ["COMPLETED"] * 4
    outputs = [r["output"] for r in records]
    assert max(o["start"] for o in outputs) < min(o["end"] for o in outputs)  # all overlapped
    assert max(o["peak"] for o in outputs) == 4
    assert elapsed < 2.5  # four 0.8 s jobs, not 3.2 s in a row


def test_one_slot_runs_one_job_at_a_time(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:overlap")
    ids = [endpoint.run({"hold": 0.2}) for _ in range(3)]
    outputs = [endpoint.wait(job_id)["output"] for job_id in ids]
    assert {o["peak"] for o in outputs} == {1}


def test_refresh_worker_starts_a_fresh_process(endpoint, start_worker):
    worker = start_worker(endpoint, "sample_handlers.py:refreshes")
    first = endpoint.runsync({})
    worker.wait_for_line("restarting as a fresh process")
    second = endpoint.runsync({})
    assert first["status"] == second["status"] == "COMPLETED"
    assert first["workerId"] != second["workerId"]  # a new worker after the refresh
    assert worker.proc.poll() is None  # same supervised process id, still serving


def test_sigterm_as_a_refresh_happens_stops_the_worker(endpoint, start_worker):
    # The signal lands while the worker hands over to its fresh process: it must not be lost.
    worker = start_worker(endpoint, "sample_handlers.py:refreshes")
    assert endpoint.runsync({})["status"] == "COMPLETED"
    started = time.monotonic()
    assert worker.terminate(timeout=5) == 0
    assert time.monotonic() - started < 5


def test_sigterm_lets_the_running_job_finish_then_exits(endpoint, start_worker):
    worker = start_worker(endpoint, "sample_handlers.py:handler")
    job_id = endpoint.run({"hold": 0.8})
    endpoint.wait_status(job_id, "IN_PROGRESS")
    started = time.monotonic()
    assert worker.terminate() == 0
    assert endpoint.status(job_id)["status"] == "COMPLETED"
    assert time.monotonic() - started < 5


def test_an_idle_worker_stops_at_once_on_sigterm(endpoint, start_worker):
    worker = start_worker(endpoint, "sample_handlers.py:handler")
    started = time.monotonic()
    assert worker.terminate() == 0
    assert time.monotonic() - started < 2
    assert "stopped: 0 completed" in worker.text()


def test_a_wrong_worker_key_stops_the_worker_with_one_line(endpoint, broker, tmp_path):
    import subprocess

    from .conftest import SAMPLES, WORKER_COMMAND, clean_env

    env = clean_env(tmp_path)
    env["RUNPOD_AI_API_KEY"] = "wk_not_a_key"
    done = subprocess.run(
        [*WORKER_COMMAND, str(SAMPLES), "--endpoint", endpoint.id,
         "--url", broker.url],
        env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("podbook worker: job-take: 401")
    assert "wk_not_a_key" not in done.stderr


def test_the_sdk_variables_alone_configure_a_podbook_worker(endpoint, broker, tmp_path):
    import subprocess

    from podbook.worker._env import worker_env

    from .conftest import SAMPLES, WORKER_COMMAND, WorkerProcess, clean_env, worker_key

    env = clean_env(tmp_path)
    env.update(
        worker_env(broker.url, endpoint.id, worker_key(broker, endpoint.id), worker_id="env-w1")
    )
    log = tmp_path / "env-worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*WORKER_COMMAND, f"{SAMPLES}:async_handler", "--concurrency", "2"],
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    worker = WorkerProcess(proc, log)
    try:
        worker.wait_for_line("serving")
        record = endpoint.runsync({"sleep": 0})
        assert record["status"] == "COMPLETED"
        assert record["workerId"] == "env-w1"
    finally:
        assert worker.terminate() == 0


def test_health_counts_the_worker_while_it_pings_and_not_after_it_stops(endpoint, start_worker):
    def workers(predicate, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            counts = endpoint.health()["workers"]
            if predicate(counts) or time.monotonic() > deadline:
                return counts
            time.sleep(0.02)

    worker = start_worker(endpoint, "sample_handlers.py:handler")
    assert workers(lambda w: w["idle"] == 1)["idle"] == 1
    job_id = endpoint.run({"hold": 0.8})
    endpoint.wait_status(job_id, "IN_PROGRESS")
    assert workers(lambda w: w["running"] == 1)["running"] == 1
    assert endpoint.wait(job_id)["status"] == "COMPLETED"
    assert worker.terminate() == 0
    assert workers(lambda w: w["idle"] + w["running"] == 0) == {"idle": 0, "running": 0}


def test_a_worker_rides_out_an_emulator_restart(start_emulator, tmp_path):
    import secrets
    import subprocess

    from .conftest import SAMPLES, WORKER_COMMAND, Queue, WorkerProcess, clean_env, worker_key

    emulator = start_emulator()
    http = emulator.http()
    name = "restart-" + secrets.token_hex(3)
    assert http.post("/v2/serverless", json={"name": name}).status_code == 201
    queue = Queue(http, name)
    env = clean_env(tmp_path)
    env["RUNPOD_AI_API_KEY"] = worker_key(emulator, name)
    log = tmp_path / "restart-worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*WORKER_COMMAND, f"{SAMPLES}:async_handler", "--endpoint", name, "--url", emulator.url],
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    worker = WorkerProcess(proc, log)
    try:
        worker.wait_for_line("serving")
        assert queue.runsync({"sleep": 0})["status"] == "COMPLETED"
        emulator.restart()
        http.close()
        queue.http = http = emulator.http()
        record = queue.runsync({"sleep": 0}, wait_ms=30000)
        assert record["status"] == "COMPLETED"
        assert "broker reachable again" in worker.text()
    finally:
        assert worker.terminate() == 0
        http.close()


def test_a_handler_never_sees_the_users_key(endpoint, broker, tmp_path):
    import subprocess

    from .conftest import SAMPLES, WORKER_COMMAND, WorkerProcess, clean_env

    env = clean_env(tmp_path)
    env["RUNPOD_API_KEY"] = broker.api_key  # the user's key: fetches a worker key, nothing more
    log = tmp_path / "env-key-worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*WORKER_COMMAND, f"{SAMPLES}:environment", "--endpoint", endpoint.id, "--url", broker.url],
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    worker = WorkerProcess(proc, log)
    try:
        worker.wait_for_line("serving")
        seen = endpoint.runsync({})["output"]
        assert seen["RUNPOD_API_KEY"] is None
        assert seen["RUNPOD_AI_API_KEY"].startswith("wk_")
        assert broker.api_key not in worker.text()
    finally:
        assert worker.terminate() == 0


def test_sigterm_gives_up_on_a_stuck_job_after_the_grace_period(endpoint, start_worker):
    worker = start_worker(endpoint, "sample_handlers.py:handler", "--grace", "0.5")
    job_id = endpoint.run({"hold": 30})
    endpoint.wait_status(job_id, "IN_PROGRESS")
    started = time.monotonic()
    assert worker.terminate() == 0
    assert time.monotonic() - started < 4
    assert f"job {job_id} abandoned at shutdown" in worker.text()
