"""Reading answers: typed models straight from the body's bytes, the quota on demand.

respx stands in for the wire, so the bodies (a bare list, a missing key, broken JSON, a
model the service changed) and the headers are exactly what each test needs.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import httpx
import pytest
import respx

from podbook import Client
from podbook.api import Pod
from podbook.client import RetryPolicy
from podbook.client.resources.base import GC_PAUSE_MIN_BYTES, gc_paused
from podbook.errors import APIError

BASE = "http://podbook.test"
KEY = "pbk_reading_key_0123456789"
RATELIMIT = '"minute";r=41;t=12, "hour";r=2999;t=1812'
POLICY = '"minute";q=60;w=60, "hour";q=3000;w=3600'


def pod_json(index: int = 0, **changes: Any) -> dict[str, Any]:
    """A RUNNING GPU pod as the service returns it."""
    pod = {
        "id": f"pod{index:05d}",
        "name": f"bench-{index:04d}",
        "status": "RUNNING",
        "actions": ["stop", "restart", "terminate"],
        "image": "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
        "args": "",
        "disk": 50,
        "mounts": {},
        "ports": ["8888/http", "22/tcp"],
        "env": {"MODEL_NAME": "llama-3"},
        "registry": None,
        "cloud": "SECURE",
        "dataCenterId": "US-TX-3",
        "ssh": {
            "proxy": {
                "host": "ssh.runpod.io",
                "port": 22,
                "username": f"pod{index:05d}-64411",
                "command": f"ssh pod{index:05d}-64411@ssh.runpod.io",
            },
            "direct": None,
        },
        "template": None,
        "cost": 0.69,
        "locked": False,
        "globalNetworking": {"enabled": False},
        "runtime": {"uptime": 12, "gpus": [{"util": 10, "memoryUtil": 20}]},
        "createdAt": "2026-11-22T09:00:00Z",
        "startedAt": "2026-11-22T09:00:02Z",
        "gpu": {"id": "NVIDIA GeForce RTX 4090", "count": 1},
        "cudaVersion": "12.8",
        "addedLater": {"by": "a newer service"},
    }
    pod.update(changes)
    return pod


@pytest.fixture
def client() -> Iterator[Client]:
    with Client(api_key=KEY, url=BASE, retry=RetryPolicy(max_attempts=1)) as c:
        yield c


def test_a_pod_read_is_a_typed_model_with_unknown_fields_kept(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        router.get("/v2/pods/pod00007").mock(return_value=httpx.Response(200, json=pod_json(7)))
        pod = client.pods.get("pod00007")
    assert isinstance(pod, Pod)
    assert (pod.id, pod.status, pod.data_center_id) == ("pod00007", "RUNNING", "US-TX-3")
    assert pod.created_at == datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)
    assert pod.ssh.proxy is not None and pod.ssh.proxy.port == 22
    assert pod.runtime is not None and pod.runtime.gpus is not None
    assert pod.runtime.gpus[0].memory_util == 20
    assert pod.model_extra == {"addedLater": {"by": "a newer service"}}


def test_a_large_list_is_typed_and_leaves_the_garbage_collector_as_it_was(
    client: Client,
) -> None:
    body = json.dumps({"pods": [pod_json(i) for i in range(200)]}).encode()
    assert len(body) > GC_PAUSE_MIN_BYTES  # the path that pauses the collector
    with respx.mock(base_url=BASE) as router:
        router.get("/v2/pods").mock(return_value=httpx.Response(200, content=body))
        assert gc.isenabled()
        pods = client.pods.list()
        assert gc.isenabled()
        gc.disable()
        try:
            assert len(client.pods.list()) == 200
            assert not gc.isenabled(), "a collector the user disabled stays disabled"
        finally:
            gc.enable()
    assert [p.id for p in pods] == [f"pod{i:05d}" for i in range(200)]
    assert all(isinstance(p, Pod) for p in pods)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"pods": []}, []),
        ({}, []),
        ({"pods": None}, []),
        ({"pods": [pod_json(1)], "next": None}, ["pod00001"]),
        ([pod_json(2)], ["pod00002"]),
    ],
    ids=["empty", "key-missing", "null", "extra-property", "bare-list"],
)
def test_list_bodies_of_every_shape(client: Client, body: Any, expected: list[str]) -> None:
    with respx.mock(base_url=BASE) as router:
        router.get("/v2/pods").mock(return_value=httpx.Response(200, json=body))
        assert [pod.id for pod in client.pods.list()] == expected


def test_a_body_that_is_not_json_is_an_unexpected_response(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        router.get("/v2/pods/p1").mock(return_value=httpx.Response(200, content=b'{"id": "p1",'))
        with pytest.raises(APIError) as info:
            client.pods.get("p1")
    assert info.value.title == "Unexpected response"
    assert str(info.value).startswith("200 Unexpected response: the body is not JSON;")


def test_a_pod_the_client_cannot_read_names_the_model(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        router.get("/v2/pods/p1").mock(
            return_value=httpx.Response(200, json=pod_json(1, status="HIBERNATING"))
        )
        with pytest.raises(APIError) as info:
            client.pods.get("p1")
    assert "cannot read the answer (1 validation error for Pod)" in str(info.value)


def test_quota_is_read_from_the_latest_response_that_announced_one(client: Client) -> None:
    headers = {"RateLimit": RATELIMIT, "RateLimit-Policy": POLICY}
    later = {"RateLimit": '"minute";r=40;t=11, "hour";r=2998;t=1811', "RateLimit-Policy": POLICY}
    with respx.mock(base_url=BASE) as router:
        route = router.get("/v2/pods/p1")
        route.mock(return_value=httpx.Response(200, json=pod_json(1), headers=headers))
        assert client.rate_limit is None
        client.pods.get("p1")
        minute = client.rate_limit.get("minute")
        assert (minute.remaining, minute.reset, minute.quota, minute.window) == (41, 12, 60, 60)

        route.mock(return_value=httpx.Response(200, json=pod_json(1), headers=later))
        client.pods.get("p1")
        route.mock(return_value=httpx.Response(200, json=pod_json(1)))  # exempt: no headers
        client.pods.get("p1")
        assert client.rate_limit.get("minute").remaining == 40

        route.mock(
            return_value=httpx.Response(200, json=pod_json(1), headers={"RateLimit": "{nope"})
        )
        client.pods.get("p1")
        assert client.rate_limit.get("hour").remaining == 2998, "unreadable headers are ignored"


def test_gc_pauses_nest_and_restore_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("validation failed")
    assert gc.isenabled()
