"""Unmodified ``runpod.serverless.start`` workers (the PyPI package) against the emulator:
a sync result, a generator with ``return_aggregate_stream``, a handler that raises, an async
job cancelled while it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_queue_helpers import create_endpoint, health, queue_emulator, run, status, wait_for

ASYNC_WORKER = """
import asyncio
import runpod


async def handler(job):
    mode = job["input"].get("mode")
    if mode == "raise":
        raise ValueError("the handler refused this input")
    if mode == "sleep":
        await asyncio.sleep(60)
    return {"echo": job["input"]}


runpod.serverless.start({"handler": handler})
"""

GENERATOR_WORKER = """
import runpod


def handler(job):
    for i in range(job["input"]["n"]):
        yield {"text": [f"tok{i}"]}


runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})
"""

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"}


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """One emulator for the SDK workers."""
    return queue_emulator(start_emulator)


def sdk_environment(emu: Any, endpoint: str, worker_key: str, home: Path) -> dict[str, str]:
    """The RUNPOD_* variables that point an SDK worker at ``endpoint`` of the emulator."""
    base = f"{emu.url}/v2/{endpoint}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "PODBOOK_"))}
    env.update(
        HOME=str(home),  # no ~/.runpod/config.toml of the machine's user
        RUNPOD_WEBHOOK_GET_JOB=f"{base}/job-take/$ID?",
        RUNPOD_WEBHOOK_POST_OUTPUT=f"{base}/job-done/$RUNPOD_POD_ID/$ID?",
        RUNPOD_WEBHOOK_POST_STREAM=f"{base}/job-stream/$RUNPOD_POD_ID/$ID?",
        RUNPOD_WEBHOOK_PING=f"{base}/ping/$RUNPOD_POD_ID",
        RUNPOD_AI_API_KEY=worker_key,
        RUNPOD_POD_ID=f"sdk-{endpoint}",
        RUNPOD_PING_INTERVAL="1000",
        RUNPOD_SKIP_GPU_CHECK="true",
        RUNPOD_SKIP_AUTO_SYSTEM_CHECKS="true",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture(scope="module")
def sdk_endpoints(emu: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Two endpoints, each served by an unmodified SDK worker process."""
    root = tmp_path_factory.mktemp("sdk")
    processes = []
    endpoints: dict[str, str] = {}
    with emu.http() as http:
        for kind, code in (("async", ASYNC_WORKER), ("generator", GENERATOR_WORKER)):
            endpoint = create_endpoint(http, f"sdk-{kind}-{os.getpid()}")
            key = http.post(f"/v2/serverless/{endpoint}/worker-keys").json()["workerKey"]
            script = root / f"{kind}.py"
            script.write_text(code)
            log = (root / f"{kind}.log").open("wb")
            processes.append(
                subprocess.Popen(
                    [sys.executable, str(script)],
                    env=sdk_environment(emu, endpoint, key, root),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=root,
                )
            )
            endpoints[kind] = endpoint
        for endpoint in endpoints.values():
            wait_for(lambda e=endpoint: sum(health(http, e)["workers"].values()) >= 1, timeout=30)
    yield endpoints
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def test_sync_result(emu: Any, sdk_endpoints: dict[str, str]) -> None:
    with emu.http() as http:
        response = http.post(
            f"/v2/{sdk_endpoints['async']}/runsync", json={"input": {"q": 1}}, timeout=60
        )
        body = response.json()
        assert body["status"] == "COMPLETED", body
        assert body["output"] == {"echo": {"q": 1}}


def test_generator_streams_and_aggregates(emu: Any, sdk_endpoints: dict[str, str]) -> None:
    endpoint = sdk_endpoints["generator"]
    with emu.http() as http:
        job_id = run(http, endpoint, {"input": {"n": 5}})
        chunks: list[Any] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            body = http.get(f"/v2/{endpoint}/stream/{job_id}", timeout=30).json()
            chunks.extend(item["output"] for item in body["stream"])
            if body["status"] in TERMINAL and not body["stream"]:
                break
        expected = [{"text": [f"tok{i}"]} for i in range(5)]
        assert chunks == expected
        record = status(http, endpoint, job_id)
        assert record["status"] == "COMPLETED" and record["output"] == expected


def test_raising_handler_fails_the_job(emu: Any, sdk_endpoints: dict[str, str]) -> None:
    endpoint = sdk_endpoints["async"]
    with emu.http() as http:
        job_id = run(http, endpoint, {"input": {"mode": "raise"}})
        record = wait_for(
            lambda: (r := status(http, endpoint, job_id))["status"] in TERMINAL and r, timeout=60
        )
        assert record["status"] == "FAILED"
        error = json.loads(record["error"])
        assert "ValueError" in error["error_type"]
        assert error["error_message"] == "the handler refused this input"
        assert "Traceback" in error["error_traceback"]


def test_cancelled_async_job_is_stopped(emu: Any, sdk_endpoints: dict[str, str]) -> None:
    endpoint = sdk_endpoints["async"]
    with emu.http() as http:
        job_id = run(http, endpoint, {"input": {"mode": "sleep"}})
        wait_for(lambda: status(http, endpoint, job_id)["status"] == "IN_PROGRESS", timeout=60)
        assert http.post(f"/v2/{endpoint}/cancel/{job_id}").json()["status"] == "CANCELLED"
        # The worker (one job at a time) was told through job-stop and dropped the 60 s
        # sleep: it serves the next job at once.
        started = time.monotonic()
        after = http.post(
            f"/v2/{endpoint}/runsync", json={"input": {"q": "next"}}, timeout=60
        ).json()
        assert after["status"] == "COMPLETED"
        assert time.monotonic() - started < 20
        assert status(http, endpoint, job_id)["status"] == "CANCELLED"
