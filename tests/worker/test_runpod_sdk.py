"""Unmodified ``runpod.serverless.start`` workers (the ``runpod`` package from PyPI) against
the emulator, pointed at it by the variables ``podbook worker-env`` prints.

Each worker runs with a temporary HOME, so no ``~/.runpod/config.toml`` leaks in.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import HERE, PODBOOK_COMMAND, clean_env


def worker_env_exports(broker, endpoint_id: str, home: Path) -> dict[str, str]:
    """What ``podbook worker-env ENDPOINT --url URL`` prints, parsed."""
    env = clean_env(home)
    env["RUNPOD_API_KEY"] = broker.api_key  # the user's key: used to fetch a worker key only
    done = subprocess.run(
        [*PODBOOK_COMMAND, "worker-env", endpoint_id, "--url", broker.url, "--ping-interval", "1000"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert broker.api_key not in done.stdout
    exports = {}
    for line in done.stdout.splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export ") :].partition("=")
            exports[name] = shlex.split(value)[0]
    return exports


@pytest.fixture
def sdk_worker(broker, tmp_path):
    """Factory: ``sdk_worker(queue, kind)`` starts ``runpod_worker.py KIND``."""
    started: list[subprocess.Popen[bytes]] = []

    def factory(queue, kind: str) -> subprocess.Popen[bytes]:
        home = tmp_path / f"home-{kind}"
        home.mkdir()
        env = clean_env(home)
        env.update(worker_env_exports(broker, queue.id, home))
        log = (tmp_path / f"sdk-{kind}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "runpod_worker.py"), kind],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=home, start_new_session=True,
        )  # fmt: skip
        started.append(proc)
        return proc

    yield factory
    for proc in started:  # the worker and its heartbeat process
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def test_worker_env_prints_every_variable_a_runpod_worker_needs(broker, endpoint, tmp_path):
    exports = worker_env_exports(broker, endpoint.id, tmp_path)
    base = f"{broker.url}/v2/{endpoint.id}"
    assert exports["RUNPOD_WEBHOOK_GET_JOB"] == f"{base}/job-take/$ID?"
    assert exports["RUNPOD_WEBHOOK_POST_OUTPUT"] == f"{base}/job-done/$RUNPOD_POD_ID/$ID?"
    assert exports["RUNPOD_WEBHOOK_POST_STREAM"] == f"{base}/job-stream/$RUNPOD_POD_ID/$ID?"
    assert exports["RUNPOD_WEBHOOK_PING"].startswith(f"{base}/ping/$RUNPOD_POD_ID")
    assert exports["RUNPOD_AI_API_KEY"].startswith("wk_")
    assert exports["RUNPOD_AI_API_KEY"] != broker.api_key
    assert exports["RUNPOD_POD_ID"]
    assert exports["RUNPOD_SKIP_GPU_CHECK"] == exports["RUNPOD_SKIP_AUTO_SYSTEM_CHECKS"] == "true"
    assert exports["RUNPOD_PING_INTERVAL"] == "1000"


def test_sync_handler(endpoint, sdk_worker):
    sdk_worker(endpoint, "sync")
    record = endpoint.wait(endpoint.run({"prompt": "hello"}), timeout=60)
    assert record["status"] == "COMPLETED"
    assert record["output"] == {"echo": {"prompt": "hello"}, "worker": "runpod"}


def test_generator_handler_with_aggregate_stream(endpoint, sdk_worker):
    sdk_worker(endpoint, "generator")
    job_id = endpoint.run({"n": 6})
    items, status = endpoint.stream(job_id, timeout=60)
    assert status == "COMPLETED"
    assert [item["output"] for item in items] == [f"t{i}" for i in range(6)]
    assert endpoint.status(job_id)["output"] == [f"t{i}" for i in range(6)]


def test_handler_that_raises(endpoint, sdk_worker):
    sdk_worker(endpoint, "raises")
    record = endpoint.wait(endpoint.run({"x": 1}), timeout=60)
    assert record["status"] == "FAILED"
    error = json.loads(record["error"])
    assert "ValueError" in error["error_type"]
    assert error["error_message"] == "sdk worker refuses {'x': 1}"
    assert "raising_handler" in error["error_traceback"]


def test_cancelled_async_job(endpoint, sdk_worker, tmp_path):
    sdk_worker(endpoint, "slow")
    marker = str(tmp_path / "slow")
    job_id = endpoint.run({"sleep": 2, "marker": marker})
    assert endpoint.wait_status(job_id, "IN_PROGRESS", timeout=60)["status"] == "IN_PROGRESS"
    # The SDK moves a taken job into a task up to 0.1 s later, and drops a stop signal that
    # arrives before that: let the handler start, as it would have on a real endpoint.
    time.sleep(0.5)
    assert endpoint.cancel(job_id)["status"] == "CANCELLED"
    time.sleep(2.3)  # past the handler's end, had it not been stopped
    assert not Path(marker + ".done").exists()
    assert endpoint.status(job_id)["status"] == "CANCELLED"
    # the worker serves the next job
    record = endpoint.wait(endpoint.run({"sleep": 0.1, "marker": marker}), timeout=30)
    assert record["status"] == "COMPLETED"


def test_a_stop_the_sdk_lost_is_sent_again_after_its_ping(endpoint, sdk_worker, tmp_path):
    sdk_worker(endpoint, "slow")
    endpoint.wait(endpoint.run({"sleep": 0, "marker": str(tmp_path / "warm")}), timeout=60)
    marker = str(tmp_path / "early")
    job_id = endpoint.run({"sleep": 4, "marker": marker})
    assert endpoint.wait_status(job_id, "IN_PROGRESS", timeout=60)["status"] == "IN_PROGRESS"
    # Cancelled at once: the SDK may drop this stop (its task does not exist yet); its next
    # ping (every second here) still lists the job, and the broker tells it again.
    assert endpoint.cancel(job_id)["status"] == "CANCELLED"
    time.sleep(4.5)  # past the handler's end, had it not been stopped
    assert not Path(marker + ".done").exists()
    assert endpoint.status(job_id)["status"] == "CANCELLED"
