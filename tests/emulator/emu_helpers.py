"""Small helpers for the emulator tests (raw httpx against the emulator process)."""

from __future__ import annotations

from typing import Any

import httpx
from pod_helpers import GPU, create, gpu_pod, wait_status

__all__ = ["GPU", "create", "gpu_pod", "problem", "wait_status"]


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """Assert a problem+json answer with ``status``; return its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert body["title"] and body["detail"]
    return body
