"""A deadline never fires early: uvloop (the emulator's loop) rounds timers to the
millisecond and may run one up to a millisecond before the wall clock reaches it, and an
``executionTimeout`` of N ms must not end a job after N - 1.

The broker runs in-process on uvloop with a real SQLite file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import uvloop

from podbook.emulator.broker.config import BrokerSettings
from podbook.emulator.broker.core import Broker
from podbook.emulator.broker.jobs import TIMED_OUT
from podbook.emulator.broker.persistence import BrokerTables
from podbook.emulator.store import Store

TIMEOUT_MS = 7
JOBS = 300


def test_execution_timeouts_end_jobs_at_their_deadline_never_before(tmp_path: Path) -> None:
    async def main() -> list[int]:
        broker = Broker(BrokerSettings(), BrokerTables(Store(tmp_path / "state.db")))
        broker.start()
        try:
            queue = broker.create_endpoint("acct-deadlines", "deadlines", None, {})
            policy = {"executionTimeout": TIMEOUT_MS}
            jobs = [
                broker.submit(queue, {"input": {}, "policy": policy}, "run") for _ in range(JOBS)
            ]
            for _ in jobs:  # started at spread-out moments within the wall clock's milliseconds
                await broker.take(queue, "w1", 1, 0.1)
                await asyncio.sleep(0.0013)
            await asyncio.sleep(0.1)
            assert {job.status for job in jobs} == {TIMED_OUT}
            return [job.finished_at - job.started_at for job in jobs]  # type: ignore[operator]
        finally:
            await broker.stop()

    ran = uvloop.run(main())
    assert min(ran) >= TIMEOUT_MS, sorted(ran)[:10]
