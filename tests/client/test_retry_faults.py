"""Retries for faults the emulator cannot produce on demand (respx stands in for the wire).

5xx and dropped connections are retried only for idempotent calls; a POST whose fate is
unknown is never sent twice. 429 is retried after ``Retry-After`` within a bounded budget
(the emulator's own 429 path is in ``test_live_errors.py``).
"""

from __future__ import annotations

import time

import httpx
import pytest
import respx

from podbook import AsyncClient, Client
from podbook.client import RetryPolicy
from podbook.errors import ConnectionFailed, RateLimited, ServerError

BASE = "http://podbook.test"
KEY = "pbk_fault_key_0123456789"
FAST = RetryPolicy(max_attempts=4, max_wait=5.0, backoff=0.01, max_backoff=0.05)
REGISTRY = {"id": "reg1", "name": "private"}


@pytest.fixture
def client() -> Client:
    with Client(api_key=KEY, url=BASE, retry=FAST) as c:
        yield c


def test_get_is_retried_after_503(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        route = router.get("/v2/account/ssh-keys").mock(
            side_effect=[
                httpx.Response(503),
                httpx.Response(502),
                httpx.Response(200, json={"keys": []}),
            ]
        )
        assert client.account.ssh_keys.get().keys == []
    assert route.call_count == 3


def test_get_gives_up_after_max_attempts(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        route = router.get("/v2/registries").mock(return_value=httpx.Response(503))
        with pytest.raises(ServerError) as info:
            client.registries.list()
    assert route.call_count == FAST.max_attempts
    assert info.value.status == 503
    assert str(info.value).startswith("503 Service Unavailable")


def test_post_is_not_retried_after_503(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        route = router.post("/v2/registries").mock(
            side_effect=[httpx.Response(503), httpx.Response(201, json=REGISTRY)]
        )
        with pytest.raises(ServerError):
            client.registries.create(name="private", username="u", password="p")
    assert route.call_count == 1


def test_dropped_connection_retried_for_get(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        route = router.get("/v2/registries/reg1").mock(
            side_effect=[
                httpx.RemoteProtocolError("peer closed"),
                httpx.Response(200, json=REGISTRY),
            ]
        )
        assert client.registries.get("reg1").name == "private"
    assert route.call_count == 2


def test_dropped_connection_not_retried_for_post(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        route = router.post("/v2/registries").mock(
            side_effect=[httpx.ReadError("connection reset"), httpx.Response(201, json=REGISTRY)]
        )
        with pytest.raises(ConnectionFailed) as info:
            client.registries.create(name="private", username="u", password="p")
    assert route.call_count == 1
    assert str(info.value) == (
        f"Could not reach {BASE}/v2/registries (POST): connection reset; "
        "check the URL (PODBOOK_* variables) and your network"
    )


def test_post_retried_when_the_connection_never_opened(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        route = router.post("/v2/registries").mock(
            side_effect=[httpx.ConnectError("refused"), httpx.Response(201, json=REGISTRY)]
        )
        assert client.registries.create(name="private", username="u", password="p").id == "reg1"
    assert route.call_count == 2


def test_429_waits_retry_after_then_succeeds_even_for_post(client: Client) -> None:
    limited = httpx.Response(
        429,
        json={"title": "Too Many Requests", "status": 429, "detail": "minute window"},
        headers={"Retry-After": "0.2", "Content-Type": "application/problem+json"},
    )
    with respx.mock(base_url=BASE) as router:
        route = router.post("/v2/registries").mock(
            side_effect=[limited, httpx.Response(201, json=REGISTRY)]
        )
        started = time.monotonic()
        client.registries.create(name="private", username="u", password="p")
        elapsed = time.monotonic() - started
    assert route.call_count == 2
    assert elapsed >= 0.2


def test_429_beyond_the_wait_budget_raises_at_once(client: Client) -> None:
    limited = httpx.Response(
        429,
        json={"title": "Too Many Requests", "status": 429, "detail": "hour window"},
        headers={"Retry-After": "600", "Content-Type": "application/problem+json"},
    )
    with respx.mock(base_url=BASE) as router:
        route = router.get("/v2/registries").mock(return_value=limited)
        started = time.monotonic()
        with pytest.raises(RateLimited) as info:
            client.registries.list()
    assert time.monotonic() - started < 1
    assert route.call_count == 1
    assert info.value.retry_after == 600


def test_key_absent_from_connection_errors() -> None:
    unreachable = Client(api_key=KEY, url="http://127.0.0.1:9", retry=RetryPolicy(max_attempts=1))
    with unreachable as c, pytest.raises(ConnectionFailed) as info:
        c.registries.list()
    text = f"{info.value}{info.value!r}{info.value.__cause__!r}"
    assert KEY not in text
    assert "http://127.0.0.1:9/v2/registries" in str(info.value)


@pytest.mark.anyio
async def test_async_face_follows_the_same_policy() -> None:
    async with AsyncClient(api_key=KEY, url=BASE, retry=FAST) as client:
        with respx.mock(base_url=BASE) as router:
            get_route = router.get("/v2/account/ssh-keys").mock(
                side_effect=[httpx.Response(503), httpx.Response(200, json={"keys": ["k"]})]
            )
            post_route = router.post("/v2/registries").mock(return_value=httpx.Response(503))
            assert (await client.account.ssh_keys.get()).keys == ["k"]
            with pytest.raises(ServerError):
                await client.registries.create(name="n", username="u", password="p")
    assert get_route.call_count == 2
    assert post_route.call_count == 1
