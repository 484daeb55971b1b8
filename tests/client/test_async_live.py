"""The async face against the real emulator: same resources, awaitable methods."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from podbook import AsyncClient, Client
from podbook.api.pods import Pod
from podbook.errors import Forbidden, InvalidRequest, NotFound

GPU = "NVIDIA GeForce RTX 4090"
pytestmark = pytest.mark.anyio


@pytest.fixture
async def aclient(emulator):
    async with AsyncClient(api_key=emulator.api_key, url=emulator.url) as c:
        yield c


def test_async_face_mirrors_the_sync_face() -> None:
    sync = Client(api_key="k", url="http://127.0.0.1:9")
    async_ = AsyncClient(api_key="k", url="http://127.0.0.1:9")
    for name in ("pods", "clusters", "catalog", "registries"):
        sync_methods = {m for m in dir(getattr(sync, name)) if not m.startswith("_")}
        async_resource = getattr(async_, name)
        async_methods = {m for m in dir(async_resource) if not m.startswith("_")}
        assert sync_methods == async_methods, name
        for method in async_methods - {"logs"}:  # logs gives an async iterator (below)
            assert inspect.iscoroutinefunction(getattr(async_resource, method)), (name, method)
    assert hasattr(async_.pods.logs("pod-id"), "__aiter__")
    assert inspect.iscoroutinefunction(async_.account.ssh_keys.get)
    sync.close()


async def test_pod_lifecycle(paced_emulator) -> None:
    async with AsyncClient(api_key=paced_emulator.api_key, url=paced_emulator.url) as aclient:
        await _pod_lifecycle(aclient)


async def _pod_lifecycle(aclient: AsyncClient) -> None:
    pod = await aclient.pods.create(name="async", image="alpine", gpu=GPU)
    assert isinstance(pod, Pod) and pod.status == "PROVISIONING"
    seen: list[str] = []
    running = await aclient.pods.wait_for(
        pod, on_change=lambda p: seen.append(p.status), poll_interval=0.05, timeout=15
    )
    assert seen == ["PROVISIONING", "STARTING", "RUNNING"]
    assert (await aclient.pods.get(pod.id)).status == "RUNNING"
    assert pod.id in {p.id for p in await aclient.pods.list()}
    assert (await aclient.pods.update(pod, name="renamed")).name == "renamed"
    assert (await aclient.pods.stop(running)).status == "EXITED"
    await aclient.pods.terminate(pod)
    with pytest.raises(NotFound):
        await aclient.pods.get(pod.id)


async def test_concurrent_reads(aclient: AsyncClient) -> None:
    gpus, cpus, centers, keys = await asyncio.gather(
        aclient.catalog.gpus(),
        aclient.catalog.cpus(),
        aclient.catalog.datacenters(),
        aclient.account.ssh_keys.get(),
    )
    assert gpus and cpus and centers and isinstance(keys.keys, list)
    assert aclient.rate_limit is not None


async def test_async_errors(emulator, aclient: AsyncClient) -> None:
    with pytest.raises(InvalidRequest):
        await aclient.pods.create(name="x", image="alpine")  # neither gpu nor cpu
    async with AsyncClient(api_key=emulator.readonly_key, url=emulator.url) as reader:
        with pytest.raises(Forbidden):
            await reader.registries.create(name="n", username="u", password="p")
