"""The async queue client against a real emulator process: the same moves, awaited."""

from __future__ import annotations

import asyncio

import pytest

from podbook import AsyncClient
from podbook.errors import InvalidRequest, JobCancelled, JobFailed, NotFound

from .test_queue_support import ManualWorker, create_endpoint

pytestmark = pytest.mark.anyio


@pytest.fixture
async def aclient(emulator):
    async with AsyncClient(api_key=emulator.api_key, url=emulator.url) as c:
        yield c


@pytest.fixture
def manual(emulator):
    worker = ManualWorker(emulator, create_endpoint(emulator, "amanual"))
    yield worker
    worker.close()


async def test_run_output_and_runsync(aclient):
    endpoint = aclient.endpoint("echo")
    job = await endpoint.run({"hello": "async"})
    assert job.record.status == "IN_QUEUE"
    assert await job.output(timeout=30) == {"hello": "async"}
    finished = await endpoint.runsync({"n": 2}, wait=30_000)
    assert finished.done and await finished.output() == {"n": 2}


async def test_stream_demo(aclient):
    job = await aclient.endpoint("stream-demo").run({"prompt": "hi", "max_tokens": 6})
    outputs = [output async for output in job.stream()]
    assert outputs and all("text" in output for output in outputs)
    assert job.last_status == "COMPLETED"


async def test_progress_failure_and_retry(aclient, manual):
    endpoint = aclient.endpoint(manual.endpoint_id)
    job = await endpoint.run({"x": 1})
    seen: list[str] = []

    async def play():
        taken = await asyncio.to_thread(manual.take)
        await asyncio.to_thread(manual.progress, taken["id"], {"pct": 5})
        await asyncio.sleep(0.3)
        await asyncio.to_thread(manual.fail, taken["id"], "KeyError", "'k'", "Traceback ...")

    player = asyncio.create_task(play())
    with pytest.raises(JobFailed) as info:
        await job.output(timeout=20)
    await player
    assert info.value.error.type == "KeyError"
    retried = await job.retry()
    assert retried.status == "IN_QUEUE" and retried.id == job.id and job.record is retried
    taken = await asyncio.to_thread(manual.take)
    assert taken["id"] == job.id and taken["input"] == {"x": 1}
    await asyncio.to_thread(manual.finish, job.id, "ok")
    record = await job.wait(timeout=10, on_progress=lambda r: seen.append(r.status))
    assert record.output == "ok" and seen[-1] == "COMPLETED"


async def test_cancel_ends_stream_and_output(aclient, manual):
    endpoint = aclient.endpoint(manual.endpoint_id)
    job = await endpoint.run({"x": 1})
    await asyncio.to_thread(manual.take)
    await asyncio.to_thread(manual.chunk, job.id, "first")
    assert (await job.cancel()).status == "CANCELLED"
    assert [o async for o in endpoint.stream(job.id)] == ["first"]
    with pytest.raises(JobCancelled):
        await job.output(timeout=5)


async def test_health_purge_and_errors(aclient, manual):
    endpoint = aclient.endpoint(manual.endpoint_id)
    for i in range(2):
        await endpoint.run({"i": i})
    assert (await endpoint.health()).jobs.in_queue == 2
    assert (await endpoint.purge_queue()).removed == 2
    with pytest.raises(NotFound):
        await aclient.endpoint("no-such-endpoint").health()
    with pytest.raises(InvalidRequest):
        await endpoint.runsync({"x": 1}, wait=10)
