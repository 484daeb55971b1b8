"""Support of the queue client tests (no tests here): a worker played by the test, a recorder.

``ManualWorker`` speaks the worker protocol over real HTTP (worker key, take, progress,
stream, result), so a test decides exactly when a job starts, what it streams and how it
ends. ``RecordingTransport`` is a real HTTP transport that notes each request it sends.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import httpx

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def create_endpoint(emulator: Any, prefix: str = "manual") -> str:
    """A fresh endpoint of account A with no handler (jobs wait for a worker); its id."""
    name = f"{prefix}-{secrets.token_hex(4)}"
    with emulator.http() as http:
        response = http.post("/v2/serverless", json={"name": name})
    assert response.status_code in (200, 201), response.text
    return response.json()["id"]


class ManualWorker:
    """A worker whose every move is a test's explicit call."""

    def __init__(self, emulator: Any, endpoint_id: str) -> None:
        with emulator.http() as http:
            response = http.post(f"/v2/serverless/{endpoint_id}/worker-keys")
        assert response.status_code in (200, 201), response.text
        self.endpoint_id = endpoint_id
        self.worker_id = "manual-" + secrets.token_hex(3)
        self.http = httpx.Client(
            base_url=emulator.url,
            headers={"Authorization": response.json()["workerKey"]},
            timeout=60,
        )

    def take(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next job (``{"id", "input", ...}``); waits up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            response = self.http.get(
                f"/v2/{self.endpoint_id}/job-take/{self.worker_id}",
                params={"job_in_progress": "0"},
            )
            if response.status_code == 200:
                return response.json()
            assert response.status_code == 204, response.text
            time.sleep(0.02)
        raise AssertionError(f"no job to take on {self.endpoint_id} within {timeout} s")

    def _post(self, kind: str, job_id: str, body: dict[str, Any], is_stream: bool) -> None:
        response = self.http.post(
            f"/v2/{self.endpoint_id}/{kind}/{self.worker_id}/{job_id}",
            params={"isStream": "true" if is_stream else "false"},
            content=json.dumps(body),
            headers=FORM,
        )
        assert response.status_code < 300, response.text

    def progress(self, job_id: str, output: Any) -> None:
        """A progress update (the job's ``output`` while IN_PROGRESS)."""
        self._post("job-done", job_id, {"status": "IN_PROGRESS", "output": output}, False)

    def chunk(self, job_id: str, output: Any) -> None:
        """One streamed chunk."""
        self._post("job-stream", job_id, {"output": output}, False)

    def finish(self, job_id: str, output: Any = None, *, stream: bool = False) -> None:
        """The job's result (``isStream=true`` ends a stream)."""
        self._post("job-done", job_id, {"output": output}, stream)

    def fail(self, job_id: str, error_type: str, message: str, traceback: str) -> None:
        """The result of a handler that raised, as the ``runpod`` SDK reports it."""
        error = json.dumps(
            {
                "error_type": error_type,
                "error_message": message,
                "error_traceback": traceback,
                "hostname": "test-host",
                "worker_id": self.worker_id,
                "runpod_version": "1.12.0",
            }
        )
        self._post("job-done", job_id, {"error": error}, False)

    def close(self) -> None:
        """Close the worker's connections."""
        self.http.close()


class RecordingTransport(httpx.HTTPTransport):
    """A real HTTP transport that records ``"METHOD /path"`` of every request it sends."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(f"{request.method} {request.url.path}")
        return super().handle_request(request)


def wait_until(predicate: Any, timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll ``predicate`` every 20 ms until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what} not met within {timeout} s")
