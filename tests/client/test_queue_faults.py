"""Queue faults the emulator cannot produce on demand (respx stands in for the wire).

A POST whose fate is unknown (``/run``, ``/runsync``, ``/cancel``, ``/retry``,
``/purge-queue`` after a 5xx or a lost answer) is never sent twice; reads are retried;
429 waits ``Retry-After`` or backs off exponentially. The emulator's own 429 and
``{"error": ...}`` bodies are exercised in ``test_queue_live.py``.
"""

from __future__ import annotations

import time

import httpx
import pytest
import respx

from podbook import AsyncClient, Client
from podbook.client import RetryPolicy
from podbook.errors import (
    BadRequest,
    ConnectionFailed,
    NotFound,
    RateLimited,
    ServerError,
    Unauthorized,
)

BASE = "http://queue.test"
KEY = "pbk_queue_fault_key_0123456789"
FAST = RetryPolicy(max_attempts=4, max_wait=5.0, backoff=0.05, max_backoff=0.4)
JOB = {"id": "job-1", "status": "IN_QUEUE"}


@pytest.fixture
def client():
    with Client(api_key=KEY, url=BASE, retry=FAST) as c:
        yield c


def stamped(responses):
    """A respx side effect answering ``responses`` in turn and noting when each came."""
    times: list[float] = []
    queue = list(responses)

    def answer(request):
        times.append(time.monotonic())
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    return answer, times


def test_429_waits_retry_after_then_succeeds(client):
    answer, times = stamped(
        [
            httpx.Response(429, headers={"Retry-After": "0.3"}, json={"error": "slow down"}),
            httpx.Response(200, json=JOB),
        ]
    )
    with respx.mock(base_url=BASE) as router:
        route = router.post("/v2/ep/run").mock(side_effect=answer)
        job = client.endpoint("ep").run({"x": 1})
    assert job.id == "job-1" and route.call_count == 2
    assert times[1] - times[0] >= 0.29


def test_429_without_retry_after_backs_off_exponentially(client):
    answer, times = stamped(
        [httpx.Response(429, json={"error": "too many"}) for _ in range(3)]
        + [httpx.Response(200, json={"id": "job-1", "status": "COMPLETED", "output": 1})]
    )
    with respx.mock(base_url=BASE) as router:
        router.get("/v2/ep/status/job-1").mock(side_effect=answer)
        assert client.endpoint("ep").status("job-1").output == 1
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert len(gaps) == 3
    # 0.05, 0.1, 0.2 s: each wait at least the doubled backoff (a busy machine adds more)
    assert gaps[0] >= 0.045 and gaps[1] >= 0.095 and gaps[2] >= 0.195


def test_429_beyond_the_budget_raises_rate_limited(client):
    with respx.mock(base_url=BASE) as router:
        router.post("/v2/ep/cancel/j").mock(
            return_value=httpx.Response(429, headers={"Retry-After": "60"}, json={"error": "x"})
        )
        with pytest.raises(RateLimited) as info:
            client.endpoint("ep").cancel("j")
    assert info.value.retry_after == 60 and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("path", "call"),
    [
        ("/v2/ep/run", lambda e: e.run({"x": 1})),
        ("/v2/ep/runsync", lambda e: e.runsync({"x": 1})),
        ("/v2/ep/cancel/j", lambda e: e.cancel("j")),
        ("/v2/ep/retry/j", lambda e: e.retry("j")),
        ("/v2/ep/purge-queue", lambda e: e.purge_queue()),
    ],
)
@pytest.mark.parametrize(
    "fault",
    [
        httpx.Response(502, json={"error": "worker crashed"}),
        httpx.ReadError("connection reset"),
        httpx.ReadTimeout("timed out"),
        httpx.RemoteProtocolError("server disconnected"),
    ],
    ids=["502", "read-error", "read-timeout", "disconnected"],
)
def test_post_of_unknown_fate_is_never_resent(client, path, call, fault):
    with respx.mock(base_url=BASE) as router:
        side = [fault, httpx.Response(200, json=JOB)]
        route = router.post(path).mock(side_effect=side)
        expected = ServerError if isinstance(fault, httpx.Response) else ConnectionFailed
        with pytest.raises(expected) as info:
            call(client.endpoint("ep"))
    assert route.call_count == 1
    assert KEY not in str(info.value) and "\n" not in str(info.value)
    if expected is ConnectionFailed:
        assert "may have been carried out" in str(info.value)


def test_post_that_never_connected_is_retried(client):
    with respx.mock(base_url=BASE) as router:
        route = router.post("/v2/ep/run").mock(
            side_effect=[httpx.ConnectError("refused"), httpx.Response(200, json=JOB)]
        )
        assert client.endpoint("ep").run({"x": 1}).id == "job-1"
    assert route.call_count == 2


def test_reads_are_retried_after_5xx_and_drops(client):
    with respx.mock(base_url=BASE) as router:
        status = router.get("/v2/ep/status/j").mock(
            side_effect=[
                httpx.Response(503),
                httpx.ReadError("reset"),
                httpx.Response(200, json=JOB),
            ]
        )
        stream = router.get("/v2/ep/stream/j").mock(
            side_effect=[
                httpx.Response(500, json={"error": "x"}),
                httpx.Response(200, json={"status": "COMPLETED", "stream": [{"output": 1}]}),
                httpx.Response(200, json={"status": "COMPLETED", "stream": []}),
            ]
        )
        endpoint = client.endpoint("ep")
        assert endpoint.status("j").status == "IN_QUEUE"
        assert list(endpoint.stream("j")) == [1]
    assert status.call_count == 3 and stream.call_count == 3


@pytest.mark.parametrize(
    ("status", "cls"), [(400, BadRequest), (401, Unauthorized), (404, NotFound), (500, ServerError)]
)
def test_queue_error_bodies_become_typed_errors(status, cls):
    with (
        Client(api_key=KEY, url=BASE, retry=RetryPolicy(max_attempts=1)) as client,
        respx.mock(base_url=BASE) as router,
    ):
        router.get("/v2/ep/health").mock(
            return_value=httpx.Response(status, json={"error": f"reason for {status}"})
        )
        with pytest.raises(cls) as info:
            client.endpoint("ep").health()
    assert info.value.status == status
    assert info.value.detail == f"reason for {status}"
    assert str(info.value).endswith(f": reason for {status}")


def test_runsync_read_timeout_covers_its_wait(client):
    seen = {}

    def answer(request):
        seen.update(request.extensions["timeout"])
        seen["wait"] = request.url.params.get("wait")
        return httpx.Response(200, json={"id": "j", "status": "COMPLETED", "output": 7})

    with respx.mock(base_url=BASE) as router:
        router.post("/v2/ep/runsync").mock(side_effect=answer)
        assert client.endpoint("ep").runsync({"x": 1}, wait=200_000).output() == 7
    assert seen["wait"] == "200000" and seen["read"] > 200


def test_stream_ends_on_every_terminal_status_after_draining(client):
    for final in ("COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"):
        with respx.mock(base_url=BASE) as router:
            route = router.get("/v2/ep/stream/j").mock(
                side_effect=[
                    httpx.Response(
                        200, json={"status": "IN_PROGRESS", "stream": [{"output": "a"}]}
                    ),
                    httpx.Response(200, json={"status": final, "stream": [{"output": "b"}]}),
                    httpx.Response(200, json={"status": final, "stream": []}),
                ]
            )
            job = client.endpoint("ep").job("j")
            assert list(job.stream()) == ["a", "b"], final
            assert route.call_count == 3 and job.last_status == final


@pytest.mark.anyio
async def test_async_post_is_never_resent_and_429_is_retried():
    async with AsyncClient(api_key=KEY, url=BASE, retry=FAST) as client:
        with respx.mock(base_url=BASE) as router:
            run = router.post("/v2/ep/run").mock(
                side_effect=[httpx.ReadError("reset"), httpx.Response(200, json=JOB)]
            )
            with pytest.raises(ConnectionFailed):
                await client.endpoint("ep").run({"x": 1})
            assert run.call_count == 1
            status = router.get("/v2/ep/status/j").mock(
                side_effect=[
                    httpx.Response(429, headers={"Retry-After": "0.1"}),
                    httpx.Response(200, json=JOB),
                ]
            )
            assert (await client.endpoint("ep").status("j")).status == "IN_QUEUE"
            assert status.call_count == 2
