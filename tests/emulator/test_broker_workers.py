"""Endpoints served by workers the emulator starts itself: the built-ins ``echo`` and
``stream-demo`` (started on first use, per account) and ``--endpoint NAME=handler.py``
(restarted when they crash, stopped with the emulator)."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_queue_helpers import health, queue_emulator, run, status, wait_for

HANDLER = """
import os


def handler(job):
    if job["input"].get("crash"):
        os._exit(3)
    return {"pid": os.getpid(), "echo": job["input"]}
"""

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"}


@pytest.fixture(scope="module")
def handler_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A handler that answers with its pid, or exits the process when asked to crash."""
    path = tmp_path_factory.mktemp("handlers") / "crashy.py"
    path.write_text(HANDLER)
    return path


@pytest.fixture(scope="module")
def emu(start_emulator: Any, handler_file: Path) -> Any:
    """An emulator declaring ``crashy=handler.py`` and a worker-less ``bare`` endpoint."""
    return queue_emulator(
        start_emulator, "--endpoint", f"crashy={handler_file}", "--endpoint", "bare"
    )


def runsync(http: httpx.Client, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``/runsync`` and return the finished record (asserting it finished)."""
    response = http.post(f"/v2/{endpoint}/runsync", json={"input": payload}, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "COMPLETED", body
    return body


def stream_all(http: httpx.Client, endpoint: str, job_id: str) -> tuple[str, list[dict]]:
    """Read ``/stream`` until the job ended and the buffer is empty."""
    items: list[dict] = []
    while True:
        body = http.get(f"/v2/{endpoint}/stream/{job_id}", timeout=30).json()
        items.extend(body["stream"])
        if body["status"] in TERMINAL and not body["stream"]:
            return body["status"], items


def test_echo_returns_its_input(emu: Any) -> None:
    with emu.http() as http:
        payload = {"prompt": "hi", "n": [1, 2, {"deep": True}]}
        assert runsync(http, "echo", payload)["output"] == payload
        assert (
            health(http, "echo")["workers"]["idle"] + health(http, "echo")["workers"]["running"]
            >= 1
        )


def test_echo_is_per_account(emu: Any) -> None:
    with emu.http(emu.other_key) as other:
        assert runsync(other, "echo", {"b": 1})["output"] == {"b": 1}
        assert health(other, "echo")["jobs"]["completed"] == 1


def test_stream_demo_streams_seed_shaped_chunks(emu: Any) -> None:
    with emu.http() as http:
        job_id = run(http, "stream-demo", {"input": {"prompt": "tell me", "max_tokens": 8}})
        final, items = stream_all(http, "stream-demo", job_id)
        assert final == "COMPLETED"
        assert len(items) >= 2
        for index, item in enumerate(items):
            output, metrics = item["output"], item["metrics"]
            assert set(output) >= {"input_tokens", "output_tokens", "text"}
            assert isinstance(output["text"], list)
            assert metrics["stream_index"] == index
            assert metrics["output_tokens"] == output["output_tokens"]
            assert isinstance(metrics["scenario"], str)
        assert [item["output"] for item in items] == status(http, "stream-demo", job_id)["output"]


def test_declared_handler_endpoint_restarts_after_a_crash(emu: Any) -> None:
    with emu.http() as http:
        first = runsync(http, "crashy", {"n": 1})["output"]
        crashed = http.post(
            "/v2/crashy/run", json={"input": {"crash": True}, "policy": {"executionTimeout": 5000}}
        ).json()["id"]
        # The worker process dies with the job (and with any other job it had taken: wait
        # until it is gone); a new process serves the next job, the lost one ends by its
        # executionTimeout.
        wait_for(lambda: status(http, "crashy", crashed)["status"] == "IN_PROGRESS")
        time.sleep(0.5)
        second = runsync(http, "crashy", {"n": 2})["output"]
        assert second["echo"] == {"n": 2} and second["pid"] != first["pid"]
        wait_for(lambda: status(http, "crashy", crashed)["status"] == "TIMED_OUT", timeout=15)


def test_endpoint_created_with_a_handler_is_served(emu: Any, tmp_path: Path) -> None:
    handler = tmp_path / "double.py"
    handler.write_text("def double(job):\n    return job['input']['x'] * 2\n")
    with emu.http() as http:
        name = "dbl-" + secrets.token_hex(3)
        record = http.post("/v2/serverless", json={"name": name, "handler": f"{handler}:double"})
        assert record.status_code == 201
        assert runsync(http, name, {"x": 21})["output"] == 42


def test_endpoint_without_handler_waits_for_a_worker(emu: Any) -> None:
    with emu.http() as http:
        job_id = run(http, "bare", {"input": {}})
        time.sleep(0.5)
        assert status(http, "bare", job_id)["status"] == "IN_QUEUE"
        assert health(http, "bare")["workers"] == {"idle": 0, "running": 0}


def test_low_priority_job_does_not_start_a_worker(start_emulator: Any) -> None:
    emu = queue_emulator(start_emulator)
    with emu.http() as http:
        job_id = run(http, "echo", {"input": {}, "policy": {"lowPriority": True}})
        time.sleep(1.5)
        assert status(http, "echo", job_id)["status"] == "IN_QUEUE"
        assert health(http, "echo")["workers"] == {"idle": 0, "running": 0}
        runsync(http, "echo", {"now": 1})  # a normal job starts the worker, which takes both
        wait_for(lambda: status(http, "echo", job_id)["status"] == "COMPLETED")


def test_workers_stop_with_the_emulator(start_emulator: Any, handler_file: Path) -> None:
    emu = queue_emulator(start_emulator, "--endpoint", f"crashy={handler_file}")
    with emu.http() as http:
        pid = runsync(http, "crashy", {})["output"]["pid"]
        runsync(http, "echo", {})
    emu.stop()
    wait_for(lambda: not _alive(pid), timeout=10)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
