"""Helpers for the queue and broker tests (no tests here).

``queue_emulator(...)`` starts an emulator process with short broker timings; ``RawWorker``
is a tiny worker written with raw httpx that speaks the worker protocol exactly as the
``runpod`` SDK does (bare ``Authorization``, ``?``-ending URL templates, form-encoded JSON
bodies), so each test controls every step.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
from processes import wait_for  # noqa: F401 - the queue tests import it from here

FORM = {"Content-Type": "application/x-www-form-urlencoded"}

# Long-polls of half a second and workers gone after a second: fast tests, same semantics.
FAST_BROKER = ("--worker-poll-seconds", "0.5", "--worker-gone-seconds", "1")


def queue_emulator(start_emulator: Callable[..., Any], *extra: str) -> Any:
    """An emulator process with the fast broker timings and ``extra`` flags."""
    return start_emulator(extra_args=(*FAST_BROKER, *extra))


def create_endpoint(http: httpx.Client, name: str, **fields: Any) -> str:
    """Create an endpoint (201) and return its id."""
    response = http.post("/v2/serverless", json={"name": name, **fields})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def worker_key(http: httpx.Client, endpoint_id: str) -> str:
    """A fresh worker key for ``endpoint_id``."""
    response = http.post(f"/v2/serverless/{endpoint_id}/worker-keys")
    assert response.status_code == 201, response.text
    key = response.json()["workerKey"]
    assert key.startswith("wk_")
    return key


class RawWorker:
    """A worker that speaks the protocol step by step, as the ``runpod`` SDK sends it."""

    def __init__(self, url: str, endpoint_id: str, key: str, worker_id: str = "w-raw") -> None:
        self.endpoint_id = endpoint_id
        self.worker_id = worker_id
        self.http = httpx.Client(base_url=url, headers={"Authorization": key}, timeout=30)
        base = f"/v2/{endpoint_id}"
        # Templates as an SDK worker gets them: each take/result/stream URL ends in '?'.
        self.take_url = f"{base}/job-take/{worker_id}?"
        self.done_url = f"{base}/job-done/{worker_id}/{{job_id}}?"
        self.stream_url = f"{base}/job-stream/{worker_id}/{{job_id}}?"

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()

    def take(self) -> httpx.Response:
        """One job-take (long-polls while nothing waits)."""
        return self.http.get(self.take_url + "&job_in_progress=0")

    def take_job(self, timeout: float = 20.0) -> dict[str, Any]:
        """Take one job, asserting one came within ``timeout`` seconds (takes long-poll for
        the broker's short wait; a client submitting from a thread on a loaded machine may
        take longer than one, and an empty take, 204, is asked again as a worker does)."""
        deadline = time.monotonic() + timeout
        response = self.take()
        while response.status_code == 204 and time.monotonic() < deadline:
            response = self.take()
        assert response.status_code == 200, (response.status_code, response.text)
        assert response.headers["content-type"].startswith("application/json")
        return response.json()

    def take_batch(self, size: int) -> httpx.Response:
        """One job-take-batch of up to ``size`` jobs."""
        url = self.take_url.replace("/job-take/", "/job-take-batch/")
        return self.http.get(url + f"&job_in_progress=0&batch_size={size}")

    def stop_signals(self) -> httpx.Response:
        """One job-stop long-poll."""
        return self.http.get(self.take_url.replace("/job-take/", "/job-stop/"))

    def post_result(
        self, job_id: str, body: dict[str, Any], *, is_stream: bool = False
    ) -> httpx.Response:
        """A job-done post: JSON text sent form-encoded, as the SDK does."""
        url = self.done_url.format(job_id=job_id) + f"&isStream={str(is_stream).lower()}"
        return self.http.post(url, content=json.dumps(body), headers=FORM)

    def post_chunk(self, job_id: str, output: Any) -> httpx.Response:
        """One job-stream post."""
        url = self.stream_url.format(job_id=job_id) + "&isStream=false"
        return self.http.post(url, content=json.dumps({"output": output}), headers=FORM)

    def ping(self, **params: str) -> httpx.Response:
        """A heartbeat."""
        return self.http.get(
            f"/v2/{self.endpoint_id}/ping/{self.worker_id}",
            params={"runpod_version": "1.12.0", **params},
        )


def health(http: httpx.Client, endpoint_id: str) -> dict[str, Any]:
    """The endpoint's ``/health`` body."""
    response = http.get(f"/v2/{endpoint_id}/health")
    assert response.status_code == 200, response.text
    return response.json()


def status(http: httpx.Client, endpoint_id: str, job_id: str) -> dict[str, Any]:
    """A job's ``/status`` body (asserting 200)."""
    response = http.get(f"/v2/{endpoint_id}/status/{job_id}")
    assert response.status_code == 200, response.text
    return response.json()


def run(http: httpx.Client, endpoint_id: str, body: dict[str, Any]) -> str:
    """``/run`` a job and return its id."""
    response = http.post(f"/v2/{endpoint_id}/run", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "IN_QUEUE"
    return response.json()["id"]
