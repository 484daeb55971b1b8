"""Small helpers for the emulator tests (raw httpx against the emulator process)."""

from __future__ import annotations

import time
from typing import Any

import httpx

GPU = "NVIDIA GeForce RTX 4090"


def gpu_pod(**fields: Any) -> dict[str, Any]:
    """A minimal valid GPU pod create body."""
    return {"name": "test-pod", "image": "runpod/pytorch:latest", "gpu": {"id": GPU}, **fields}


def create(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    """Create a pod and return its JSON (asserting 201)."""
    response = http.post("/v2/pods", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def wait_status(
    http: httpx.Client, pod_id: str, status: str, timeout: float = 10.0
) -> dict[str, Any]:
    """Poll ``GET /v2/pods/{id}`` until it reports ``status``; return that pod."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        pod = http.get(f"/v2/pods/{pod_id}").json()
        if not seen or seen[-1] != pod.get("status"):
            seen.append(pod.get("status"))
        if pod.get("status") == status:
            return pod
        time.sleep(0.03)
    raise AssertionError(f"pod {pod_id} never reached {status}; saw {seen}")


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """Assert a problem+json answer with ``status``; return its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert body["title"] and body["detail"]
    return body
