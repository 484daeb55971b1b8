"""``client.billing`` against a real emulator: the window rules and amounts that equal what ran.

A fresh emulator per module keeps the account's spend to what these tests ran.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from podbook import Client
from podbook.errors import APIError, BadRequest

GPU = "NVIDIA GeForce RTX 4090"
GPU_PRICE = 0.69  # secure $/h of the RTX 4090 in the catalog
SERVERLESS_RATE = 1.1  # $/h of a worker of an endpoint without a GPU (RTX 4090 serverless)


@pytest.fixture(scope="module")
def billing_emulator(start_emulator: object) -> object:
    """An emulator of its own; queue retention scaled down (1 min → 1.2 s) so that finished
    jobs are forgotten by the broker within a test."""
    return start_emulator(extra_args=("--queue-time-scale", "0.02"))  # type: ignore[operator]


@pytest.fixture(scope="module")
def billing_client(billing_emulator: Any) -> Iterator[Client]:
    """A client of that emulator."""
    emu = billing_emulator
    with Client(api_key=emu.api_key, rest_url=emu.url, queue_url=emu.url, v1_url=emu.url) as client:
        yield client


def _wait_running(client: Client, pod_id: str) -> float:
    """Wait until RUNNING; the epoch second it became RUNNING."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pod = client.pods.get(pod_id)
        if pod.status == "RUNNING" and pod.started_at is not None:
            return pod.started_at.timestamp()
        time.sleep(0.1)
    raise AssertionError(f"pod {pod_id} never became RUNNING")


def test_start_and_end_snap_to_bucket_boundaries(billing_client: Client) -> None:
    day = billing_client.billing.list(
        start_time="2026-06-01T10:30:00Z", end_time="2026-06-03T05:00:00Z", bucket_size="day"
    )
    query = day.metadata.query
    assert (query.start_time, query.end_time) == (
        datetime(2026, 6, 1, tzinfo=timezone.utc),
        datetime(2026, 6, 4, tzinfo=timezone.utc),
    )
    assert [r.start_time.day for r in day.records] == [1, 2, 3]
    assert day.metadata.record_count == 3
    # An end on a boundary stays; weeks start on Monday (2026-06-01 is a Monday).
    week = billing_client.billing.list(
        start_time=datetime(2026, 6, 3, 12, tzinfo=timezone.utc),
        end_time="2026-06-15T00:00:00Z",
        bucket_size="week",
    )
    assert week.metadata.query.start_time == datetime(2026, 6, 1, tzinfo=timezone.utc)
    assert week.metadata.query.end_time == datetime(2026, 6, 15, tzinfo=timezone.utc)
    assert len(week.records) == 2
    month = billing_client.billing.list(
        start_time="2026-01-31T23:00:00Z", end_time="2026-03-01T00:00:01Z", bucket_size="month"
    )
    assert [(r.start_time.month, r.end_time.month) for r in month.records] == [
        (1, 2),
        (2, 3),
        (3, 4),
    ]


def test_last_n_ends_with_the_current_bucket(billing_client: Client) -> None:
    before = datetime.now(timezone.utc)
    page = billing_client.billing.list(last_n=3, bucket_size="hour")
    after = datetime.now(timezone.utc)
    assert len(page.records) == 3
    last = page.records[-1]
    assert last.start_time <= after and before < last.end_time
    assert last.start_time.minute == 0 and last.start_time.second == 0
    assert page.records[0].end_time - page.records[0].start_time == timedelta(hours=1)


def test_last_n_with_start_or_end_is_a_400(billing_client: Client) -> None:
    with pytest.raises(BadRequest) as caught:
        billing_client.billing.list(last_n=2, start_time="2026-06-01T00:00:00Z")
    assert caught.value.status == 400
    assert "lastN" in str(caught.value)
    with pytest.raises(APIError) as caught:
        billing_client.billing.pods(last_n=2, end_time="2026-06-01T00:00:00Z")
    assert caught.value.status == 400


def test_bad_values_are_refused(billing_client: Client) -> None:
    with pytest.raises(APIError) as caught:
        billing_client.billing.list(bucket_size="minute")
    assert caught.value.status == 422
    with pytest.raises(APIError):
        billing_client.billing.list(last_n=0)
    with pytest.raises(APIError):
        billing_client.billing.list(start_time="yesterday")
    with pytest.raises(APIError) as caught:
        billing_client.billing.list(
            start_time="2026-06-02T00:00:00Z", end_time="2026-06-01T00:00:00Z"
        )
    assert caught.value.status == 400


def test_pod_spend_is_its_running_time_times_its_price(billing_client: Client) -> None:
    client = billing_client
    pod = client.pods.create(name="billed", image="runpod/pytorch", gpu=GPU)
    running_at = _wait_running(client, pod.id)
    time.sleep(1.5)
    before_stop = time.time()
    client.pods.stop(pod.id)
    after_stop = time.time()
    window = {"last_n": 2, "bucket_size": "hour"}
    billed = client.billing.pods(pod_id=pod.id, **window)
    spent = billed.metadata.totals.gpu_amount
    slack = 1e-5
    assert (before_stop - running_at) / 3600 * GPU_PRICE - slack <= spent
    assert spent <= (after_stop - running_at) / 3600 * GPU_PRICE + slack
    assert billed.metadata.unique_pod_count == 1
    assert all(r.pod_id == pod.id for r in billed.records)
    # Stopped time costs nothing; a terminated pod's spend stays in the history.
    time.sleep(1.0)
    assert client.billing.pods(pod_id=pod.id, **window).metadata.totals.gpu_amount == spent
    client.pods.terminate(pod.id)
    assert client.billing.pods(pod_id=pod.id, **window).metadata.totals.gpu_amount == spent


def test_serverless_spend_is_execution_time_times_the_worker_rate(
    billing_client: Client, billing_emulator: Any
) -> None:
    client = billing_client
    job = client.endpoint("echo").runsync({"n": 1}, wait=60_000)
    deadline = time.monotonic() + 60
    while job.status not in ("COMPLETED", "FAILED") and time.monotonic() < deadline:
        time.sleep(0.2)
        job = client.endpoint("echo").status(job.id)
    assert job.status == "COMPLETED"
    expected = job.execution_time / 1000 / 3600 * SERVERLESS_RATE

    def spent() -> Any:
        return client.billing.serverless(serverless_id="echo", last_n=2, bucket_size="hour")

    billed = spent()
    assert billed.metadata.totals.gpu_amount == pytest.approx(expected, abs=2e-6)
    assert billed.metadata.unique_serverless_count == 1
    # The broker forgets the job after its retention; its spend stays, across a restart too.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            client.endpoint("echo").status(job.id)
        except APIError:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the job was never forgotten")
    assert spent().metadata.totals.gpu_amount == pytest.approx(expected, abs=2e-6)
    billing_emulator.restart()
    assert spent().metadata.totals.gpu_amount == pytest.approx(expected, abs=2e-6)


def test_aggregate_buckets_add_up_and_match_the_kinds(billing_client: Client) -> None:
    client = billing_client
    window = {"start_time": "2026-01-01T00:00:00Z", "end_time": "2027-01-01T00:00:00Z"}
    pods_before = client.billing.pods(bucket_size="month", **window).metadata.totals.total_amount
    page = client.billing.list(bucket_size="month", **window)
    pods_after = client.billing.pods(bucket_size="month", **window).metadata.totals.total_amount
    for record in page.records:
        parts = record.model_dump(exclude={"start_time", "end_time", "total_amount"})
        assert record.total_amount == pytest.approx(sum(parts.values()), abs=1e-5)
    totals = page.metadata.totals
    assert totals.total_amount == pytest.approx(sum(r.total_amount for r in page.records), abs=1e-5)
    pod_total = totals.pod_gpu_amount + totals.pod_cpu_amount + totals.pod_disk_amount
    assert pods_before - 1e-5 <= pod_total <= pods_after + 1e-5
    serverless = client.billing.serverless(bucket_size="month", **window).metadata.totals
    assert totals.serverless_gpu_amount == pytest.approx(serverless.gpu_amount, abs=1e-5)
    assert len(page.records) == 12
    endpoints = client.billing.endpoints(bucket_size="month", **window)
    assert len(endpoints.records) == 12 and endpoints.metadata.totals.total_amount == 0
    assert client.billing.network_volumes(**window).metadata.unique_network_volume_count == 0
    assert client.billing.clusters(**window).records == []


@pytest.mark.anyio
async def test_async_client_reads_billing(billing_client: Client) -> None:
    from podbook.client import AsyncClient

    settings = billing_client.settings
    async with AsyncClient(settings=settings) as client:
        page = await client.billing.list(last_n=2, bucket_size="day")
        pods = await client.billing.pods(last_n=2, bucket_size="day")
    assert len(page.records) == 2
    assert pods.metadata.query.bucket_size == "day"


def test_network_volume_spend_follows_its_size_until_deleted(billing_client: Client) -> None:
    client = billing_client
    rate = 0.07 / 730  # standard storage, $/GB-hour
    before = time.time()
    volume = client.network_volumes.create(name="billed", size=100, data_center="US-TX-3")
    after_create = time.time()
    assert volume.type == "STANDARD"
    time.sleep(1.0)
    client.network_volumes.update(volume.id, size=200)
    time.sleep(1.0)
    before_delete = time.time()
    client.network_volumes.delete(volume.id)
    after = time.time()

    def spent() -> float:
        page = client.billing.network_volumes(
            network_volume_id=volume.id, last_n=2, bucket_size="hour"
        )
        return page.metadata.totals.standard_amount

    amount = spent()
    low = (before_delete - after_create) * 100 * rate / 3600
    high = (after - before) * 200 * rate / 3600
    assert low <= amount <= high
    time.sleep(0.5)
    assert spent() == amount, "a deleted volume costs nothing more"


def test_async_billing_mirrors_the_sync_face() -> None:
    import inspect

    from podbook.client import AsyncClient

    sync = Client(api_key="k", url="http://127.0.0.1:9")
    async_ = AsyncClient(api_key="k", url="http://127.0.0.1:9")
    names = {m for m in dir(sync.billing) if not m.startswith("_")}
    assert names == {m for m in dir(async_.billing) if not m.startswith("_")}
    assert all(inspect.iscoroutinefunction(getattr(async_.billing, m)) for m in names)
    sync.close()
