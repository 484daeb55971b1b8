"""A broker's 429 to a worker call: the wait comes from ``Retry-After``, read by the client's
parser (seconds or an HTTP date), else the worker's default pause."""

from __future__ import annotations

import asyncio
import email.utils
import time

import httpx
import pytest

from podbook.worker._config import WorkerConfig
from podbook.worker._protocol import DEFAULT_THROTTLE_SECONDS, Throttled, WorkerChannel


def throttled_take(headers: dict[str, str]) -> Throttled:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers=headers, json={"error": "slow down"})

    config = WorkerConfig.for_endpoint("http://broker.test", "ep", "worker-key", worker_id="w1")

    async def take() -> Throttled:
        channel = WorkerChannel(config, transport=httpx.MockTransport(answer))
        try:
            with pytest.raises(Throttled) as raised:
                await channel.take(1, in_progress=False)
            return raised.value
        finally:
            await channel.aclose()

    return asyncio.run(take())


def test_retry_after_seconds() -> None:
    assert throttled_take({"Retry-After": "3"}).retry_after == 3.0


def test_retry_after_as_an_http_date() -> None:
    later = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= throttled_take({"Retry-After": later}).retry_after <= 60


@pytest.mark.parametrize("headers", [{}, {"Retry-After": "soon"}])
def test_without_a_readable_retry_after_the_default_pause(headers: dict[str, str]) -> None:
    assert throttled_take(headers).retry_after == DEFAULT_THROTTLE_SECONDS
