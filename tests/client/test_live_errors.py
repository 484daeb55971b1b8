"""Every error class from a real emulator answer, and the 429 path with a tiny quota."""

from __future__ import annotations

import time

import pytest

from podbook import Client
from podbook.api.pods import Pod
from podbook.client import Call, RetryPolicy
from podbook.errors import (
    APIError,
    Conflict,
    Forbidden,
    NotFound,
    RateLimited,
    Unauthorized,
    ValidationFailed,
)

GPU = "NVIDIA GeForce RTX 4090"


def client_for(emulator, key: str, **kwargs) -> Client:
    return Client(api_key=key, url=emulator.url, **kwargs)


def assert_readable(err: APIError, key: str) -> None:
    text = str(err)
    assert text.splitlines()[0].startswith(f"{err.status} ")
    assert key not in text and key not in repr(err)
    assert err.method and err.url.startswith("http://127.0.0.1:")


def test_401_unknown_key(emulator) -> None:
    bad = "pbk_not_a_real_key_000000000000"
    with client_for(emulator, bad) as c, pytest.raises(Unauthorized) as info:
        c.pods.list()
    assert info.value.status == 401
    assert_readable(info.value, bad)
    assert "\n" not in str(info.value)


def test_403_read_only_key_cannot_write(emulator, client: Client) -> None:
    with client_for(emulator, emulator.readonly_key) as reader:
        assert isinstance(reader.pods.list(), list)  # reading is fine
        with pytest.raises(Forbidden) as info:
            reader.pods.create(name="nope", image="alpine", gpu=GPU)
    assert info.value.status == 403
    assert (info.value.method, info.value.url) == ("POST", f"{emulator.url}/v2/pods")
    assert_readable(info.value, emulator.readonly_key)


def test_404_for_another_accounts_pod(emulator, client: Client) -> None:
    pod = client.pods.create(name="mine", image="alpine", gpu=GPU)
    with client_for(emulator, emulator.other_key) as other:
        with pytest.raises(NotFound) as info:
            other.pods.get(pod.id)
        with pytest.raises(NotFound) as unknown:
            other.pods.get("does-not-exist")
    # The answer for someone else's pod is the answer for a pod that does not exist.
    assert info.value.title == unknown.value.title
    assert_readable(info.value, emulator.other_key)
    client.pods.terminate(pod)


def test_409_action_not_allowed_now(client: Client) -> None:
    pod = client.pods.create(name="young", image="alpine", gpu=GPU)
    with pytest.raises(Conflict) as info:
        client.pods.restart(pod)  # a PROVISIONING pod cannot restart
    assert info.value.status == 409
    assert "restart" in str(info.value)
    client.pods.terminate(pod)


def test_422_lists_each_error_line(client: Client) -> None:
    # Sent raw (bypassing local validation) so the emulator itself judges the body.
    bad = {"name": "x", "image": "alpine", "gpu": {"id": GPU, "count": 0}, "ports": ["8888"]}
    with pytest.raises(ValidationFailed) as info:
        client.request(Call("POST", "/v2/pods", json=bad, parse=Pod.model_validate))
    err = info.value
    assert err.status == 422
    assert len(err.errors) >= 2
    assert any(line.startswith("$.gpu.count") for line in err.errors)
    text = str(err)
    for line in err.errors:
        assert f"\n  - {line}" in text


def test_rate_limit_is_readable_after_every_response(client: Client) -> None:
    client.pods.list()
    first = client.rate_limit
    assert first is not None
    minute = first.get("minute")
    assert minute is not None and minute.quota and minute.window == 60
    client.pods.list()
    second = client.rate_limit.get("minute")
    assert second.remaining < minute.remaining or second.reset > minute.reset


@pytest.fixture(scope="module")
def tiny_quota(start_emulator):
    """An emulator whose accounts get 3 requests a day."""
    return start_emulator(extra_args=("--rate-limit", "day=3"))


def test_429_with_retry_after_and_bounded_waiting(tiny_quota) -> None:
    with client_for(tiny_quota, tiny_quota.api_key, retry=RetryPolicy(max_wait=30)) as c:
        remaining = []
        for _ in range(3):
            c.pods.list()
            remaining.append(c.rate_limit.get("day").remaining)
        assert remaining == [2, 1, 0]
        started = time.monotonic()
        with pytest.raises(RateLimited) as info:
            c.pods.list()
        # The day window resets in hours: beyond the wait budget, so no sleeping at all.
        assert time.monotonic() - started < 2
    err = info.value
    assert err.status == 429
    assert err.retry_after is not None and err.retry_after > 30
    assert "day" in err.detail
    assert str(err).startswith("429 ")
    assert "\n" not in str(err)
    assert tiny_quota.api_key not in str(err)
