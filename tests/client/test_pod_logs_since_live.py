"""``client.pods.logs(pod, since=...)`` against a real emulator: a backfill from a time (an RFC
3339 string or a ``datetime``) starts at that time, inclusive, and ends; combined with
``source`` it keeps that source only."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import pytest

from podbook import Client

GPU = "NVIDIA GeForce RTX 4090"


@pytest.fixture(scope="module")
def since_client(start_emulator: Any) -> Any:
    """A client of an emulator whose RUNNING pods write a line every 0.05 s."""
    emu = start_emulator(extra_args=("--log-interval-seconds", "0.05"))
    with Client(api_key=emu.api_key, url=emu.url) as client:
        yield client


def test_since_starts_the_backfill_at_that_time(since_client: Client) -> None:
    client = since_client
    pod = client.pods.create(name="since", image="img:1", gpu=GPU)
    client.pods.wait_for(pod, "RUNNING", timeout=30, poll_interval=0.05)
    time.sleep(0.6)
    with client.pods.logs(pod, tail=5000) as stream:
        every = list(stream)
    middle = every[len(every) // 2]
    with client.pods.logs(pod, since=middle.ts) as stream:
        later = list(stream)
    assert later and all(line.ts >= middle.ts for line in later)
    assert middle.id in [line.id for line in later]  # inclusive
    assert [line.id for line in later][: len(every) // 2] == [
        line.id for line in every if line.ts >= middle.ts
    ][: len(every) // 2]
    as_datetime = datetime.fromisoformat(middle.ts.replace("Z", "+00:00"))
    with client.pods.logs(pod, since=as_datetime, source="container") as stream:
        from_datetime = list(stream)
    assert from_datetime and all(line.ts >= middle.ts for line in from_datetime)
    assert {line.source for line in from_datetime} == {"container"}
    client.pods.terminate(pod)
