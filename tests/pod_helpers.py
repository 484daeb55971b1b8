"""Pod helpers shared by the emulator and runtime tests (raw httpx against an emulator)."""

from __future__ import annotations

import time
from typing import Any

import httpx

GPU = "NVIDIA GeForce RTX 4090"


def gpu_pod(**fields: Any) -> dict[str, Any]:
    """A minimal valid GPU pod create body (``fields`` override or add)."""
    return {"name": "test-pod", "image": "runpod/pytorch:latest", "gpu": {"id": GPU}, **fields}


def create(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    """Create a pod and return its JSON (asserting 201)."""
    response = http.post("/v2/pods", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def wait_status(
    http: httpx.Client, pod_id: str, status: str, timeout: float = 10.0, every: float = 0.03
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
        time.sleep(every)
    raise AssertionError(f"pod {pod_id} never reached {status}; saw {seen}")
