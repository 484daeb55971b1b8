"""The runner's bookkeeping when the broker stops a job (cancel, timeout) at awkward moments,
and what a worker logs about a post that came after its job ended."""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from podbook.errors import PodbookError
from podbook.worker._config import WorkerConfig
from podbook.worker._protocol import WorkerChannel, log_undelivered
from podbook.worker._runner import Runner

from .conftest import worker_key

BASE = "http://127.0.0.1:9/v2/ep"  # nothing listens: nothing here may reach a broker


def runner_of(handler: Any) -> Runner:
    config = WorkerConfig(
        take_url=f"{BASE}/job-take/w1?",
        output_url=f"{BASE}/job-done/w1/$ID?",
        stream_url=f"{BASE}/job-stream/w1/$ID?",
        ping_url="",
        worker_key="wk_test",
        worker_id="w1",
    )
    return Runner(handler, config)


def test_a_job_stopped_before_its_first_step_frees_its_slot():
    # A cancel right after /run: the stop answer can be handled in the same loop turn as the
    # take that started the job, before the job's task has run at all. Its slot must come
    # back, or the worker counts the job as running for ever and takes no other job.
    ran = threading.Event()
    runner = runner_of(lambda job: ran.set())

    async def scenario() -> None:
        runner._slot_free = asyncio.Event()
        runner._job_started = asyncio.Event()
        channel = WorkerChannel(runner.config)
        with ThreadPoolExecutor(1) as executor:
            runner._start({"id": "j1", "input": {}}, channel, executor)
            assert runner.running_jobs == ["j1"]
            runner._stop_jobs(["j1"])
            for _ in range(3):
                await asyncio.sleep(0)
        assert runner._slot_free.is_set()

    asyncio.run(scenario())
    assert runner.running_jobs == []
    assert runner.counts == {"completed": 0, "failed": 0, "stopped": 1, "abandoned": 0}
    assert not ran.is_set()


def test_a_post_for_a_job_cancelled_meanwhile_is_logged_as_info_not_a_warning(
    broker: Any, endpoint: Any, caplog: Any
) -> None:
    # A chunk the worker posts just after the job was cancelled (its stop still on the way)
    # is refused with 409. No news for the user: a kernel serving the handler must not print
    # a warning into a notebook cell for it. Other refusals stay warnings.
    config = WorkerConfig.for_endpoint(
        broker.url, endpoint.id, worker_key(broker, endpoint.id), worker_id="w-late"
    )
    job_id = endpoint.run({"n": 1})
    refused: list[PodbookError] = []

    async def scenario() -> None:
        channel = WorkerChannel(config)
        try:
            taken = await channel.take(1, in_progress=False)
            assert [job["id"] for job in taken] == [job_id]
            assert endpoint.cancel(job_id)["status"] == "CANCELLED"
            try:
                await channel.post_chunk(job_id, b'{"output": "late"}')
            except PodbookError as exc:
                refused.append(exc)
        finally:
            await channel.aclose()

    asyncio.run(scenario())
    assert len(refused) == 1 and "409" in str(refused[0]), refused
    with caplog.at_level(logging.INFO, logger="podbook.worker"):
        log_undelivered(job_id, "chunks no longer delivered", refused[0])
        log_undelivered(job_id, "result not delivered", PodbookError("connection refused"))
    levels = [
        (record.levelname, record.getMessage().split(":")[1].strip()) for record in caplog.records
    ]
    assert levels == [("INFO", "chunks no longer delivered"), ("WARNING", "result not delivered")]
