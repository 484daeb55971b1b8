"""``client.endpoint(ID).lb_url``: the service's own form against the real service, the
emulator's path form anywhere else (nothing is sent)."""

from __future__ import annotations

import pytest

from podbook import AsyncClient, Client
from podbook.api.endpoints import load_balancer_url
from podbook.client.config import DEFAULT_QUEUE_URL, DEFAULT_REST_URL, DEFAULT_V1_URL


@pytest.mark.parametrize(
    ("queue_url", "expected"),
    [
        ("https://api.runpod.ai", "https://ep1.api.runpod.ai"),
        ("https://api.runpod.ai/", "https://ep1.api.runpod.ai"),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765/lb/ep1"),
        ("http://127.0.0.1:8765/", "http://127.0.0.1:8765/lb/ep1"),
        ("https://gateway.example/runpod", "https://gateway.example/runpod/lb/ep1"),
        ("https://api.runpod.ai/behind/a/path", "https://api.runpod.ai/behind/a/path/lb/ep1"),
    ],
)
def test_load_balancer_url_forms(queue_url: str, expected: str) -> None:
    assert load_balancer_url(queue_url, "ep1") == expected


def test_real_service_form() -> None:
    with Client(
        api_key="k", rest_url=DEFAULT_REST_URL, queue_url=DEFAULT_QUEUE_URL, v1_url=DEFAULT_V1_URL
    ) as client:
        assert client.settings.is_cloud
        assert client.endpoint("4m7x2k9q").lb_url == "https://4m7x2k9q.api.runpod.ai"


@pytest.mark.anyio
async def test_emulator_form_async() -> None:
    async with AsyncClient(api_key="k", url="http://127.0.0.1:9") as client:
        assert client.endpoint("my-api").lb_url == "http://127.0.0.1:9/lb/my-api"
