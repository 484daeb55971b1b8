"""When the broker writes a job to the SQLite file: before any answer that gives its id out,
except a ``/runsync`` job nobody outside knows yet, which is written within
``LAZY_WRITE_SECONDS`` (so a /runsync round trip costs no commit on its way).

The broker runs in-process on a real SQLite file; a second connection reads the file as a
restarted emulator would.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

from podbook.emulator.broker.config import BrokerSettings
from podbook.emulator.broker.core import Broker
from podbook.emulator.broker.persistence import LAZY_WRITE_SECONDS, BrokerTables
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.store import Store

ACCOUNT = "acct-lazy"
Scenario = Callable[[Broker, EndpointQueue, Path], Awaitable[None]]


def stored_status(path: Path, job_id: str) -> str | None:
    """The job's status as written in the file (None when it has no row)."""
    with sqlite3.connect(path) as reader:
        row = reader.execute(
            "SELECT json_extract(doc, '$.status') FROM queue_jobs WHERE id = ?", (job_id,)
        ).fetchone()
    return row[0] if row else None


def run_broker(tmp_path: Path, scenario: Scenario) -> None:
    """Run ``scenario`` against a started broker on a fresh file, then stop the broker."""
    path = tmp_path / "state.db"
    broker = Broker(BrokerSettings(), BrokerTables(Store(path)))

    async def main() -> None:
        broker.start()
        try:
            queue = broker.create_endpoint(ACCOUNT, "lazy", None, {})
            await scenario(broker, queue, path)
        finally:
            await broker.stop()

    asyncio.run(main())


def test_a_run_job_is_written_before_its_id_is_answered(tmp_path: Path) -> None:
    async def scenario(broker: Broker, queue: EndpointQueue, path: Path) -> None:
        job = broker.submit(queue, {"input": {"n": 1}}, "run")
        assert stored_status(path, job.id) == "IN_QUEUE"
        (taken,) = await broker.take(queue, "w1", 1, 0.1)
        assert stored_status(path, taken.id) == "IN_PROGRESS"  # before the take answers
        broker.result(queue, "w1", job.id, {"output": "ok"})
        assert stored_status(path, job.id) == "COMPLETED"  # before the result is acknowledged

    run_broker(tmp_path, scenario)


def test_a_runsync_job_answered_with_its_result_is_written_soon_after(tmp_path: Path) -> None:
    async def scenario(broker: Broker, queue: EndpointQueue, path: Path) -> None:
        job = broker.submit(queue, {"input": {"n": 1}}, "sync")
        await broker.take(queue, "w1", 1, 0.1)
        broker.result(queue, "w1", job.id, {"output": "ok"})
        broker.commit_answered(job)  # what /runsync does before it answers
        # Nothing of it in the file yet: a crash now cannot make it run again.
        assert stored_status(path, job.id) is None
        await asyncio.sleep(LAZY_WRITE_SECONDS + 0.05)
        assert stored_status(path, job.id) == "COMPLETED"  # readable after a restart

    run_broker(tmp_path, scenario)


def test_a_runsync_job_answered_with_only_its_id_is_written_first(tmp_path: Path) -> None:
    async def scenario(broker: Broker, queue: EndpointQueue, path: Path) -> None:
        job = broker.submit(queue, {"input": {"n": 1}}, "sync")
        await broker.take(queue, "w1", 1, 0.1)
        broker.commit_answered(job)  # its wait ran out: the caller goes on with the id
        assert stored_status(path, job.id) == "IN_PROGRESS"
        # Written now, so its result is committed before it is acknowledged, as any job's.
        broker.result(queue, "w1", job.id, {"output": "ok"})
        assert stored_status(path, job.id) == "COMPLETED"

    run_broker(tmp_path, scenario)


def test_a_runsync_job_running_longer_than_the_lazy_delay_is_written(tmp_path: Path) -> None:
    async def scenario(broker: Broker, queue: EndpointQueue, path: Path) -> None:
        job = broker.submit(queue, {"input": {"n": 1}}, "sync")
        await broker.take(queue, "w1", 1, 0.1)
        await asyncio.sleep(LAZY_WRITE_SECONDS + 0.05)
        # On its worker after a crash, like any running job.
        assert stored_status(path, job.id) == "IN_PROGRESS"
        broker.result(queue, "w1", job.id, {"output": "ok"})
        assert stored_status(path, job.id) == "COMPLETED"

    run_broker(tmp_path, scenario)
