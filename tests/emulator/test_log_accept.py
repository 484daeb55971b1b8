"""The log routes serve ``text/event-stream`` only, and say so to a client that asks for JSON.

An independent mock of the reference (Prism) answers 406 to ``Accept: application/json`` on
``GET /v2/pods/{id}/logs``; the emulator does the same, so a client that asks for the wrong
type fails against the emulator too, not first against the real service.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from emu_helpers import create, gpu_pod


@pytest.fixture
def pod_id(emulator: Any) -> str:
    """A fresh pod."""
    with emulator.http() as raw:
        return str(create(raw, gpu_pod(name="accept-test"))["id"])


@pytest.mark.parametrize(
    "accept",
    ["application/json", "application/json, application/problem+json", "text/event-stream;q=0"],
)
def test_logs_refuse_an_accept_without_event_stream(
    emulator: Any, pod_id: str, accept: str
) -> None:
    with emulator.http() as raw:
        response = raw.get(
            f"/v2/pods/{pod_id}/logs", params={"tail": 1}, headers={"Accept": accept}
        )
    assert response.status_code == 406
    assert response.headers["content-type"] == "application/problem+json"
    assert "text/event-stream" in response.json()["detail"]


@pytest.mark.parametrize(
    "accept", ["text/event-stream", "text/event-stream, application/problem+json", "*/*", "text/*"]
)
def test_logs_serve_an_accept_with_event_stream(emulator: Any, pod_id: str, accept: str) -> None:
    url = f"/v2/pods/{pod_id}/logs"
    timeout = httpx.Timeout(10.0)  # the headers only: a loaded machine may take seconds
    with (
        emulator.http() as raw,
        raw.stream("GET", url, headers={"Accept": accept}, timeout=timeout) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")


def test_client_reads_logs_of_the_emulator(client: Any, pod_id: str) -> None:
    with client.pods.logs(pod_id, tail=5) as stream:
        lines = list(stream)
    assert all(line.line for line in lines)
