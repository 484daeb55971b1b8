"""``GET /v2/billing/clusters`` through the client: a cluster's spend is what its member pods
really ran (their price × their RUNNING time), billed under the cluster and not as pods; it
stops growing once the cluster is deleted and stays in the history."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from podbook import Client

GPU = "NVIDIA GeForce RTX 4090"
WINDOW = {"last_n": 2, "bucket_size": "hour"}


@pytest.fixture(scope="module")
def own_client(start_emulator: Any) -> Iterator[Client]:
    """A client of an emulator of this module's own (its spend is only what ran here)."""
    emu = start_emulator()
    with Client(api_key=emu.api_key, rest_url=emu.url, v1_url=emu.url) as client:
        yield client


def _members_running(client: Client, cluster_id: str) -> list[Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        members = client.clusters.pods(cluster_id)
        if members and all(p.status == "RUNNING" and p.started_at for p in members):
            return members
        time.sleep(0.1)
    raise AssertionError(f"the members of cluster {cluster_id} never all ran")


def test_cluster_spend_is_its_members_running_time(own_client: Client) -> None:
    client = own_client
    before = time.time()
    cluster = client.clusters.create(
        name="billed",
        type="TRAINING",
        image="alpine",
        compute={"gpu_type_id": GPU, "gpu_count_per_pod": 1, "pod_count": 2},
    )
    members = _members_running(client, cluster.id)
    last_started = max(p.started_at.timestamp() for p in members)
    per_hour = sum(p.cost for p in members)
    time.sleep(1.5)
    before_delete = time.time()
    client.clusters.delete(cluster)
    after_delete = time.time()

    def spent() -> Any:
        return client.billing.clusters(cluster_id=cluster.id, **WINDOW)

    page = spent()
    gpu = page.metadata.totals.gpu_amount
    assert (before_delete - last_started) * per_hour / 3600 - 1e-5 <= gpu
    assert gpu <= (after_delete - before) * per_hour / 3600 + 1e-5
    assert page.records and all(r.cluster_id == cluster.id for r in page.records)
    # Members bill under their cluster, not as pods; the aggregate carries the same amount.
    assert client.billing.pods(**WINDOW).metadata.totals.gpu_amount == 0
    totals = client.billing.list(**WINDOW).metadata.totals
    assert totals.cluster_gpu_amount == pytest.approx(gpu, abs=1e-5)
    time.sleep(0.5)
    assert spent().metadata.totals.gpu_amount == gpu, "a deleted cluster costs nothing more"
