"""A queue job as the broker holds it: its fields, its wire views and its stored form."""

from __future__ import annotations

import asyncio
import contextlib
import operator
import uuid
from typing import Any

from podbook.emulator.broker.limits import TERMINAL
from podbook.emulator.lifecycle import iso

IN_QUEUE = "IN_QUEUE"
IN_PROGRESS = "IN_PROGRESS"
COMPLETED = "COMPLETED"
FAILED = "FAILED"
CANCELLED = "CANCELLED"
TIMED_OUT = "TIMED_OUT"

_MISSING: Any = object()

# Fields written to SQLite (everything but the live stream buffer and waiters).
_STORED = (
    "id",
    "account_id",
    "endpoint_id",
    "kind",
    "input",
    "webhook",
    "policy",
    "s3_config",
    "status",
    "submitted_at",
    "queued_at",
    "started_at",
    "finished_at",
    "worker_id",
    "output",
    "error",
    "low_priority",
    "execution_timeout_ms",
    "ttl_deadline",
    "retention_ms",
    "expires_at",
    "retried",
)
_stored_values = operator.attrgetter(*_STORED)
"""The stored fields of a job, as one tuple (``to_doc`` runs for every job a flush writes)."""


def _set_fields(**fields: Any) -> dict[str, Any]:
    """The ``fields`` whose value is set (not ``None``), in the order given."""
    return {name: value for name, value in fields.items() if value is not None}


def new_job_id(kind: str) -> str:
    """An opaque job id (``sync-`` prefix for ``/runsync``, as the service does)."""
    base = f"{uuid.uuid4()}-e1"
    return f"sync-{base}" if kind == "sync" else base


class Waiters:
    """The calls holding on a job until something happens to it (its end, a chunk).

    Like :class:`asyncio.Event` with a timeout, without the task ``asyncio.wait_for`` wraps
    around each wait: :meth:`wake` resumes every holder on the next loop step, before any
    callback scheduled after it (a ``/runsync`` answer leaves before the worker's ack).
    """

    __slots__ = ("_futures",)

    def __init__(self) -> None:
        self._futures: list[asyncio.Future[None]] = []

    async def wait(self, timeout: float) -> None:
        """Hold until :meth:`wake` or ``timeout`` seconds."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._futures.append(waiter)
        try:
            await hold(waiter, timeout)
        finally:
            with contextlib.suppress(ValueError):
                self._futures.remove(waiter)

    def wake(self) -> None:
        """Resume every holder."""
        futures, self._futures = self._futures, []
        for waiter in futures:
            _release(waiter)


def _release(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def hold(
    waiter: asyncio.Future[None], timeout: float, gone: asyncio.Future[None] | None = None
) -> bool:
    """Await ``waiter`` at most ``timeout`` seconds, or until ``gone`` resolves; True when
    its waker resolved it, False on the timeout or ``gone``.

    The future awaited is the one the waker resolves, so the holder resumes on the next loop
    step (``asyncio.wait`` takes two: its own callback, then the task).
    """
    expired = False

    def expire(_: object = None) -> None:
        nonlocal expired
        if not waiter.done():
            expired = True
            waiter.set_result(None)

    timer = asyncio.get_running_loop().call_later(timeout, expire)
    if gone is not None:
        gone.add_done_callback(expire)
    try:
        await waiter
    finally:
        timer.cancel()
        if gone is not None:
            gone.remove_done_callback(expire)
    return not expired


class Job:
    """One job. Times are wall-clock milliseconds; deadlines too (``ttl_deadline``,
    ``expires_at`` = end of retention once finished)."""

    __slots__ = (
        *_STORED,
        "progress",
        "chunks",
        "chunk_base",
        "chunk_event",
        "done_event",
        "timers",
    )

    def __init__(self, **fields: Any) -> None:
        self.output: Any = _MISSING
        self.error: Any = None
        self.webhook: str | None = None
        self.policy: dict[str, Any] | None = None
        self.s3_config: dict[str, Any] | None = None
        self.started_at: int | None = None
        self.finished_at: int | None = None
        self.worker_id: str | None = None
        self.low_priority = False
        self.expires_at: int | None = None
        self.retried = 0
        for name, value in fields.items():
            setattr(self, name, value)
        self.progress: Any = _MISSING
        self.chunks: list[dict[str, Any]] = []  # /stream items not yet drained
        self.chunk_base = 0  # stream index of chunks[0] (the resumable cursor's origin)
        self.chunk_event: Waiters | None = None
        self.done_event: Waiters | None = None
        self.timers: dict[str, asyncio.TimerHandle] = {}

    @property
    def key(self) -> tuple[str, str]:
        """``(account_id, endpoint_id)``: the queue this job belongs to."""
        return (self.account_id, self.endpoint_id)

    @property
    def terminal(self) -> bool:
        """Whether the job has ended (COMPLETED, FAILED, CANCELLED, TIMED_OUT)."""
        return self.status in TERMINAL

    def has_output(self) -> bool:
        """Whether the job has a final output (absent until a result says so)."""
        return self.output is not _MISSING

    def clear_result(self) -> None:
        """Forget output, error, progress and the stream (for a retry)."""
        self.output = _MISSING
        self.error = None
        self.progress = _MISSING
        self.chunk_base += len(self.chunks)  # a retry's chunks go on numbering after these
        self.chunks = []
        self.started_at = None
        self.finished_at = None
        self.worker_id = None
        self.expires_at = None

    def status_record(self, now_ms: int) -> dict[str, Any]:
        """The ``/status`` body: id, status, delayTime, executionTime, output, error, workerId."""
        started = self.started_at
        delay = (started if started is not None else now_ms) - self.queued_at
        execution = 0
        if started is not None:
            execution = (self.finished_at if self.finished_at is not None else now_ms) - started
        record: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "delayTime": max(0, delay),
            "executionTime": max(0, execution),
        }
        if self.status == IN_PROGRESS:
            if self.progress is not _MISSING:
                record["output"] = self.progress
        elif self.output is not _MISSING:
            record["output"] = self.output
        record.update(_set_fields(error=self.error, workerId=self.worker_id))
        return record

    def request_record(self, now_ms: int) -> dict[str, Any]:
        """The ``/requests`` item: id, status, times (RFC 3339 and ms), the OpenAI route."""
        timing = self.status_record(now_ms)
        record: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "createdAt": iso(self.submitted_at / 1000),
        }
        if self.started_at is not None:
            record["startedAt"] = iso(self.started_at / 1000)
        if self.finished_at is not None and self.terminal:
            record["completedAt"] = iso(self.finished_at / 1000)
        record["delayTime"] = timing["delayTime"]
        record["executionTime"] = timing["executionTime"]
        route = self.input.get("openai_route") if isinstance(self.input, dict) else None
        if isinstance(route, str):
            record["route"] = route
        return record

    def work_item(self) -> dict[str, Any]:
        """What a worker receives from job-take: the whole job object."""
        given = _set_fields(webhook=self.webhook, policy=self.policy, s3Config=self.s3_config)
        return {"id": self.id, "input": self.input, **given}

    def to_doc(self) -> dict[str, Any]:
        """The stored form (JSON-ready)."""
        doc = dict(zip(_STORED, _stored_values(self), strict=True))
        if doc["output"] is _MISSING:
            del doc["output"]
        return doc

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Job:
        """Rebuild a job from its stored form."""
        return cls(**{name: doc[name] for name in _STORED if name in doc})
