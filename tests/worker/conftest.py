"""Fixtures for worker tests: a broker (the session emulator), fresh endpoints, and real
worker processes (``python -m podbook worker ...``) with a worker key of their endpoint.

Set ``PODBOOK_WORKER_TEST_URL`` and ``PODBOOK_WORKER_TEST_KEY`` to run them against an
emulator that is already running instead.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from processes import stop_process

HERE = Path(__file__).resolve().parent
SAMPLES = HERE / "sample_handlers.py"
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"}
PODBOOK_COMMAND = [sys.executable, "-m", "podbook"]
WORKER_COMMAND = [*PODBOOK_COMMAND, "worker"]


class ExternalBroker:
    """An emulator started elsewhere."""

    def __init__(self, url: str, api_key: str) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key

    def http(self, key: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {key or self.api_key}"},
            timeout=30,
        )


@pytest.fixture(scope="session")
def broker(request: pytest.FixtureRequest) -> Any:
    """The emulator the workers serve (the session emulator by default)."""
    url = os.environ.get("PODBOOK_WORKER_TEST_URL")
    if url:
        return ExternalBroker(url, os.environ["PODBOOK_WORKER_TEST_KEY"])
    return request.getfixturevalue("emulator")


class Queue:
    """A user's view of one endpoint, over plain HTTP (the queue API of the reference)."""

    def __init__(self, http: httpx.Client, endpoint_id: str) -> None:
        self.http = http
        self.id = endpoint_id

    def run(self, payload: Any) -> str:
        response = self.http.post(f"/v2/{self.id}/run", json={"input": payload})
        assert response.status_code == 200, response.text
        return response.json()["id"]

    def runsync(self, payload: Any, wait_ms: int = 20000) -> dict[str, Any]:
        response = self.http.post(f"/v2/{self.id}/runsync?wait={wait_ms}", json={"input": payload})
        assert response.status_code == 200, response.text
        return response.json()

    def status(self, job_id: str) -> dict[str, Any]:
        response = self.http.get(f"/v2/{self.id}/status/{job_id}")
        assert response.status_code == 200, response.text
        return response.json()

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self.http.post(f"/v2/{self.id}/cancel/{job_id}").json()

    def health(self) -> dict[str, Any]:
        return self.http.get(f"/v2/{self.id}/health").json()

    def wait(self, job_id: str, timeout: float = 20.0) -> dict[str, Any]:
        """The job's record once it is terminal."""
        deadline = time.monotonic() + timeout
        while True:
            record = self.status(job_id)
            if record["status"] in TERMINAL or time.monotonic() > deadline:
                return record
            time.sleep(0.02)

    def wait_status(self, job_id: str, status: str, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            record = self.status(job_id)
            if record["status"] == status or time.monotonic() > deadline:
                return record
            time.sleep(0.02)

    def stream(self, job_id: str, timeout: float = 30.0) -> tuple[list[dict[str, Any]], str]:
        """Every ``/stream`` item until the job ends, and the final status."""
        items: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.http.get(f"/v2/{self.id}/stream/{job_id}").json()
            items.extend(body.get("stream", []))
            if body["status"] in TERMINAL and not body.get("stream"):
                return items, body["status"]
        raise AssertionError(f"stream of {job_id} did not end within {timeout} s")


@pytest.fixture
def endpoint(broker: Any) -> Iterator[Queue]:
    """A fresh endpoint (no handler: workers connect on their own)."""
    name = "w-" + secrets.token_hex(4)
    http = broker.http()
    response = http.post("/v2/serverless", json={"name": name})
    assert response.status_code == 201, response.text
    yield Queue(http, response.json()["id"])
    http.delete(f"/v2/serverless/{name}")
    http.close()


def worker_key(broker: Any, endpoint_id: str) -> str:
    """A fresh worker key for ``endpoint_id``."""
    with broker.http() as http:
        response = http.post(f"/v2/serverless/{endpoint_id}/worker-keys")
        assert response.status_code in (200, 201), response.text
        return response.json()["workerKey"]


def clean_env(home: Path) -> dict[str, str]:
    """The test's environment without any key, with a HOME of its own."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RUNPOD_", "PODBOOK_")) and k != "HOME"
    }
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class WorkerProcess:
    """A real worker process and its log."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.proc = proc
        self.log = log

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for_line(self, needle: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            if self.proc.poll() is not None:
                raise AssertionError(f"worker exited ({self.proc.returncode}):\n{self.text()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"worker never logged {needle!r}:\n{self.text()}")
            time.sleep(0.02)

    def terminate(self, timeout: float = 15.0) -> int:
        return stop_process(self.proc, timeout)


@pytest.fixture
def start_worker(broker: Any, tmp_path: Path) -> Iterator[Any]:
    """Factory: ``start_worker(queue, "sample_handlers.py:fn", "--concurrency", "2")``."""
    started: list[WorkerProcess] = []

    def factory(queue: Queue, spec: str, *args: str, ready: bool = True) -> WorkerProcess:
        target, _, fn = spec.partition(":")
        path = HERE / target if not Path(target).is_absolute() else Path(target)
        env = clean_env(tmp_path)
        env["RUNPOD_AI_API_KEY"] = worker_key(broker, queue.id)
        log = tmp_path / f"worker-{len(started)}.log"
        command = [
            *WORKER_COMMAND, f"{path}:{fn or 'handler'}",
            "--endpoint", queue.id, "--url", broker.url, *args,
        ]  # fmt: skip
        with log.open("wb") as out:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        worker = WorkerProcess(proc, log)
        started.append(worker)
        if ready:
            worker.wait_for_line("serving")
        return worker

    yield factory
    for worker in started:
        worker.terminate()
