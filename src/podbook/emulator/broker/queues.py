"""One endpoint's queue: its jobs waiting, its workers, the takers waiting for work.

Everything here runs on the emulator's event loop (no locks). Waiting takers are futures in
FIFO order: an enqueued job wakes exactly one of them, which then takes from the queue; a
stop signal wakes the worker's waiting job-stop request. Nothing polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from podbook.emulator.broker.jobs import COMPLETED, FAILED, IN_PROGRESS, IN_QUEUE, Job
from podbook.emulator.broker.workerlogs import WorkerLog

MAX_REMEMBERED_STOPS = 1000
"""Stopped job ids kept per worker for :meth:`WorkerState.resend_stops` (a worker that never
pings must not make the set grow without bound)."""


@dataclass
class WorkerState:
    """A worker as the broker sees it: when it was last heard from, what it runs."""

    worker_id: str
    last_seen: float = field(default_factory=time.monotonic)
    running: set[str] = field(default_factory=set)
    stop_ids: list[str] = field(default_factory=list)
    stop_waiter: asyncio.Future[None] | None = None
    in_flight: int = 0
    last_done: float = 0.0
    """When (monotonic) a job of this worker last ended (its idle time counts from then)."""
    version: int | None = None
    """The endpoint's configuration version when this worker first called in."""
    started_at: float = field(default_factory=time.time)
    log: WorkerLog = field(default_factory=WorkerLog)
    """What the broker saw of this worker (``/workers/{workerId}/logs``)."""
    stopped: dict[str, None] = field(default_factory=dict)
    """Jobs this worker was told to stop, until a ping no longer lists them (oldest first)."""

    def touch(self) -> None:
        """Record contact now."""
        self.last_seen = time.monotonic()

    def signal_stop(self, job_id: str) -> None:
        """Queue a stop signal for ``job_id`` and wake the waiting job-stop request."""
        self.log.note(f"told to stop job {job_id}")
        self.stopped[job_id] = None
        while len(self.stopped) > MAX_REMEMBERED_STOPS:
            del self.stopped[next(iter(self.stopped))]
        if job_id not in self.stop_ids:
            self.stop_ids.append(job_id)
        waiter = self.stop_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def resend_stops(self, listed: list[str]) -> list[str]:
        """A ping listed ``listed`` as running: stop again every one of them this worker was
        already told to stop (the ``runpod`` SDK drops a stop that arrives before the job's
        task exists, and would run it to the end); forget stopped jobs no longer listed.
        Returns the ids stopped again."""
        running = set(listed)
        again = [job_id for job_id in self.stopped if job_id in running]
        self.stopped = dict.fromkeys(again)
        for job_id in again:
            self.signal_stop(job_id)
        return again


@dataclass
class EndpointQueue:
    """The jobs and workers of one endpoint of one account."""

    account_id: str
    endpoint_id: str
    record: dict[str, Any]
    queued: OrderedDict[str, Job] = field(default_factory=OrderedDict)
    """Jobs waiting, oldest first. An ``OrderedDict``: its oldest is found and popped in
    O(1), where a dict's first entry after k pops from its front costs O(k) to find."""
    queued_low: OrderedDict[str, Job] = field(default_factory=OrderedDict)
    takers: deque[asyncio.Future[None]] = field(default_factory=deque)
    workers: dict[str, WorkerState] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    """The retries of the jobs held (``/health``'s ``retried``), kept as they happen."""
    parked: set[str] = field(default_factory=set)
    """Workers frozen by FlashBoot or being stopped (``autoscaler.py``): they get no job and
    are not counted."""

    @property
    def key(self) -> tuple[str, str]:
        """``(account_id, endpoint_id)``."""
        return (self.account_id, self.endpoint_id)

    # counts ------------------------------------------------------------------------------

    def count_move(self, old: str | None, new: str | None) -> None:
        """Keep per-status counts current when a job moves from ``old`` to ``new``."""
        if old is not None:
            self.counts[old] = self.counts.get(old, 0) - 1
        if new is not None:
            self.counts[new] = self.counts.get(new, 0) + 1

    def count_retry(self, job: Job) -> None:
        """``job`` runs again: one more retry of it and of this endpoint."""
        job.retried += 1
        self.retries += 1

    def health(self) -> dict[str, Any]:
        """The ``/health`` body."""
        running = sum(1 for w in self.workers.values() if w.running)
        return {
            "jobs": {
                "completed": self.counts.get(COMPLETED, 0),
                "failed": self.counts.get(FAILED, 0),
                "inProgress": self.counts.get(IN_PROGRESS, 0),
                "inQueue": self.counts.get(IN_QUEUE, 0),
                "retried": self.retries,
            },
            "workers": {"idle": len(self.workers) - running, "running": running},
        }

    # waiting jobs ------------------------------------------------------------------------

    def push(self, job: Job) -> None:
        """Put a job at the end of its queue and wake one waiting taker."""
        (self.queued_low if job.low_priority else self.queued)[job.id] = job
        self.pass_wakeup()

    def drop_taker(self, taker: asyncio.Future[None]) -> None:
        """Forget a taker that stopped waiting (timed out)."""
        with contextlib.suppress(ValueError):
            self.takers.remove(taker)

    def pass_wakeup(self) -> None:
        """Wake the first waiting taker when a job waits (also when a woken one was gone)."""
        if self.waiting():
            while self.takers:
                taker = self.takers.popleft()
                if not taker.done():
                    taker.set_result(None)
                    break

    def push_first(self, job: Job) -> None:
        """Put a job back at the front of its queue (it goes before every other) and wake
        one waiting taker."""
        pending = self.queued_low if job.low_priority else self.queued
        pending[job.id] = job
        pending.move_to_end(job.id, last=False)
        self.pass_wakeup()

    def pop(self) -> Job | None:
        """The oldest waiting job (low-priority ones only when no other waits)."""
        for pending in (self.queued, self.queued_low):
            if pending:
                return pending.popitem(last=False)[1]
        return None

    def oldest_queued_at(self) -> int | None:
        """When (ms) the first job in line (not low priority) was queued; None when none
        waits."""
        first = next(iter(self.queued.values()), None)
        return None if first is None else first.queued_at

    def remove(self, job: Job) -> bool:
        """Take ``job`` out of the waiting line; whether it was there."""
        return (
            self.queued.pop(job.id, None) is not None
            or self.queued_low.pop(job.id, None) is not None
        )

    def waiting(self) -> int:
        """How many jobs wait."""
        return len(self.queued) + len(self.queued_low)

    # workers -----------------------------------------------------------------------------

    def worker(self, worker_id: str) -> WorkerState:
        """The worker's state, registering it on first contact."""
        state = self.workers.get(worker_id)
        if state is None:
            state = self.workers[worker_id] = WorkerState(worker_id)
            state.version = self.record.get("version")
            state.log.note(
                f"worker {worker_id} connected to {self.endpoint_id} "
                f"(endpoint version {state.version or 1})"
            )
        state.touch()
        return state
