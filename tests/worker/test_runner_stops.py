"""The runner's bookkeeping when the broker stops a job (cancel, timeout) at awkward moments."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from podbook.worker.config import WorkerConfig
from podbook.worker.protocol import WorkerChannel
from podbook.worker.runner import Runner

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
    assert runner.counts == {"completed": 0, "failed": 0, "stopped": 1}
    assert not ran.is_set()
