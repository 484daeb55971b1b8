"""``client.catalog.gpu(id)``, ``cpu(id)``, ``datacenter(id)`` against a real emulator: one
entry, the same as in the list, filters passed on, an unknown id a clear 404."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from podbook import AsyncClient, Client
from podbook.api.catalog import CpuType, DataCenter, GpuType
from podbook.errors import InvalidRequest, NotFound

GPU = "NVIDIA GeForce RTX 4090"


def test_one_gpu_type_with_and_without_availability(client: Client) -> None:
    plain = client.catalog.gpu(GPU)
    assert isinstance(plain, GpuType) and plain.id == GPU
    assert plain == next(g for g in client.catalog.gpus() if g.id == GPU)
    secure = client.catalog.gpu(GPU, cloud="SECURE")
    listed = next(g for g in client.catalog.gpus(cloud="SECURE") if g.id == GPU)
    assert secure == listed  # the filters of the list apply to one entry too
    with pytest.raises(NotFound, match="no-such-gpu"):
        client.catalog.gpu("no-such-gpu")
    with pytest.raises(InvalidRequest, match="GPU type id"):
        client.catalog.gpu("")


def test_one_cpu_flavor_and_one_data_center(client: Client) -> None:
    flavor = client.catalog.cpus()[0]
    got = client.catalog.cpu(flavor)  # an object with .id works too
    assert isinstance(got, CpuType) and got == flavor
    with pytest.raises(NotFound):
        client.catalog.cpu("no-such-flavor")
    center = client.catalog.datacenter("EU-RO-1")
    assert isinstance(center, DataCenter) and center.id == "EU-RO-1"
    with_gpus = client.catalog.datacenter("EU-RO-1", include=["GPU_AVAILABILITY"])
    assert with_gpus.model_dump(by_alias=True).get("gpuAvailability") is not None
    with pytest.raises(NotFound, match="NOWHERE-1"):
        client.catalog.datacenter("NOWHERE-1")


def test_the_async_face(emulator: Any) -> None:
    async def run() -> None:
        async with AsyncClient(api_key=emulator.api_key, url=emulator.url) as c:
            assert (await c.catalog.gpu(GPU)).id == GPU
            assert (await c.catalog.datacenter("EU-RO-1")).id == "EU-RO-1"
            flavor = (await c.catalog.cpus())[0]
            assert (await c.catalog.cpu(flavor.id)).id == flavor.id

    asyncio.run(run())
