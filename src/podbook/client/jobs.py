"""The handle of one queue job: :class:`Job` (sync) and :class:`AsyncJob`.

``endpoint.run(...)`` and ``endpoint.runsync(...)`` return one; ``endpoint.job(id)`` makes
one for a job submitted earlier. A handle keeps the latest record it saw (``job.record``)
and talks to the service only through its endpoint's methods.

Waiting holds a status read open until the job ends (``status(wait=ms)``, the service's
``/status-sync``), so the end is seen at once with one request per hold; with
``on_progress`` it polls ``/status`` instead, to see each change on the way.

:class:`JobWatch` holds the I/O-free part of waiting (how long to hold, when to poll again,
when to report progress, when to give up), shared by both faces; :class:`StatusPoll` paces
a ``status(wait=...)`` done by polling, against a service without ``/status-sync``.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from podbook.errors import InvalidRequest, JobCancelled, JobFailed, JobTimedOut, WaitTimeout

if TYPE_CHECKING:
    from podbook.api.queue import JobRecord, StreamChunk
    from podbook.client.resources.queue import AsyncEndpointClient, EndpointClient

__all__ = ["AsyncJob", "Job", "JobWatch", "StatusPoll", "outcome"]

FIRST_POLL_INTERVAL = 0.05
"""Seconds before the first ``/status`` poll of a wait; the interval then grows."""
MAX_POLL_INTERVAL = 1.0
"""Longest pause between two ``/status`` polls of a wait."""
POLL_GROWTH = 1.5


class JobWatch:
    """The I/O-free logic of :meth:`Job.wait`: report changes, pace polls, give up in time.

    ``observe(record)`` returns True once the job has ended and calls ``on_progress`` with
    every record whose status or progress output differs from the previous one;
    ``next_hold()`` returns how long (ms) the next status read may be held open (None: poll);
    ``next_sleep()`` returns the pause before the next poll, growing from
    ``FIRST_POLL_INTERVAL`` to ``max_interval`` (and back to the first after a change), or
    raises :class:`~podbook.errors.WaitTimeout` once ``timeout`` seconds have passed.
    """

    def __init__(
        self,
        label: str,
        timeout: float | None = None,
        on_progress: Callable[[JobRecord], Any] | None = None,
        *,
        max_interval: float = MAX_POLL_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if timeout is not None and timeout < 0:
            raise InvalidRequest(f"timeout must be >= 0 seconds, not {timeout!r}", status=400)
        if max_interval <= 0:
            raise InvalidRequest("poll interval must be positive", status=400)
        self.label = label
        self.timeout = timeout
        self.on_progress = on_progress
        self.max_interval = max_interval
        self._clock = clock
        self._deadline = None if timeout is None else clock() + timeout
        self._interval = min(FIRST_POLL_INTERVAL, max_interval)
        self._seen: tuple[str, Any] | None = None
        self.last_status = "unknown"

    def observe(self, record: JobRecord) -> bool:
        """Take a fresh record; True when the job has ended."""
        self.last_status = record.status
        key = (record.status, record.output)
        if key != self._seen:
            self._seen = key
            self._interval = min(FIRST_POLL_INTERVAL, self.max_interval)
            if self.on_progress is not None:
                self.on_progress(record)
        return record.is_terminal

    def next_hold(self) -> int | None:
        """Milliseconds the next status read may be held open: the service's default
        ``wait`` (90 s, the JS SDK's cap too) at most, never past the deadline; None when less
        than the shortest ``wait`` (1 s) is left, or when ``on_progress`` is to see every change:
        the next read is then a plain poll."""
        from podbook.api.queue import WAIT_DEFAULT_MS, WAIT_MIN_MS

        if self.on_progress is not None:  # every change is to be seen: plain polls
            return None
        if self._deadline is None:
            return WAIT_DEFAULT_MS
        remaining_ms = int((self._deadline - self._clock()) * 1000)
        return None if remaining_ms < WAIT_MIN_MS else min(WAIT_DEFAULT_MS, remaining_ms)

    def next_sleep(self) -> float:
        """Seconds to pause before the next poll; raises ``WaitTimeout`` when time is up."""
        delay = self._interval
        self._interval = min(self.max_interval, self._interval * POLL_GROWTH)
        if self._deadline is None:
            return delay
        remaining = self._deadline - self._clock()
        if remaining <= 0:
            raise WaitTimeout(self.label, "a final status", self.last_status, self.timeout or 0.0)
        return min(delay, remaining)


class StatusPoll:
    """A held status read done by polling ``/status`` (for a service without
    ``/status-sync``): ``pause(record)`` is the pause before the next poll, or None once the
    job has ended or ``wait_ms`` have passed (then that record is the answer)."""

    def __init__(self, wait_ms: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._deadline = clock() + wait_ms / 1000
        self._watch = JobWatch("", clock=clock)

    def pause(self, record: JobRecord) -> float | None:
        """Seconds until the next poll, or None when ``record`` is the answer."""
        remaining = self._deadline - self._clock()
        if self._watch.observe(record) or remaining <= 0:
            return None
        return min(self._watch.next_sleep(), remaining)


def outcome(job_id: str, endpoint_id: str, record: JobRecord) -> Any:
    """The output of an ended job, or the exception that says why there is none.

    COMPLETED → ``record.output``; FAILED → :class:`JobFailed` (with the handler's error);
    TIMED_OUT → :class:`JobTimedOut`; CANCELLED → :class:`JobCancelled`.
    """
    if record.status == "FAILED":
        raise JobFailed(job_id, endpoint_id, record.job_error, record)
    if record.status == "TIMED_OUT":
        raise JobTimedOut(job_id, endpoint_id, record)
    if record.status == "CANCELLED":
        raise JobCancelled(job_id, endpoint_id, record)
    return record.output


class _Runs:
    """How many times one job was retried through any handle of one client (shared)."""

    __slots__ = ("__weakref__", "count")

    def __init__(self) -> None:
        self.count = 0


_runs: weakref.WeakValueDictionary[tuple[int, str, str], _Runs] = weakref.WeakValueDictionary()
_runs_lock = threading.Lock()


def _shared_runs(endpoint: Any, endpoint_id: str, job_id: str) -> _Runs:
    """The retry count shared by every handle of this job on this client (``%job retry``
    or a panel's Retry button use a handle of their own). A handle keeps its endpoint, which
    keeps the client, so the client's ``id`` is not reused while the entry lives."""
    owner = getattr(endpoint, "_client", endpoint)
    key = (id(owner), endpoint_id, job_id)
    with _runs_lock:
        runs = _runs.get(key)
        if runs is None:
            runs = _runs[key] = _Runs()
        return runs


E = TypeVar("E", "EndpointClient", "AsyncEndpointClient")


class _JobBase(Generic[E]):
    def __init__(self, endpoint: E, job_id: str, record: JobRecord | None = None) -> None:
        self._endpoint = endpoint
        self.id = job_id
        self.endpoint_id = endpoint.id
        self._record: JobRecord | None = record
        self._streamed_status: str | None = None
        self._runs = _shared_runs(endpoint, endpoint.id, job_id)
        self._run = self._runs.count  # the run `_record` belongs to
        self._retrying = False

    @property
    def record(self) -> JobRecord | None:
        """The latest record seen (from submission, status, wait, cancel or retry)."""
        return self._record

    @record.setter
    def record(self, record: JobRecord | None) -> None:
        self._record = record
        self._run = self._runs.count

    def _final_record(self) -> JobRecord | None:
        """The final record kept, while it still is the job's latest word: None once the job
        was retried (through this handle or any other of the same client), while a retry's
        answer is awaited or was lost, or when a stream read since saw it running again."""
        record = self._record
        if record is None or not record.is_terminal or self._streamed_status is not None:
            return None
        if self._retrying or self._run != self._runs.count:
            return None
        return record

    def _start_wait(
        self,
        timeout: float | None,
        on_progress: Callable[[JobRecord], Any] | None,
        poll_interval: float,
    ) -> tuple[JobWatch, JobRecord | None]:
        """The watch of one wait, and the final record kept when it is still the job's latest
        word (the wait is then over: ``on_progress`` has seen it)."""
        watch = JobWatch(self.label, timeout, on_progress, max_interval=poll_interval)
        final = self._final_record()
        if final is not None:
            watch.observe(final)
        return watch, final

    @property
    def last_status(self) -> str:
        """The latest status seen, without asking the service (``"unknown"`` before any)."""
        if self._streamed_status is not None:
            return self._streamed_status
        return self.record.status if self.record is not None else "unknown"

    @property
    def done(self) -> bool:
        """Whether the latest status seen is final (COMPLETED, FAILED, CANCELLED, TIMED_OUT)."""
        from podbook.api.queue import TERMINAL_JOB_STATUSES

        return self.last_status in TERMINAL_JOB_STATUSES

    @property
    def label(self) -> str:
        """How this job is named in messages."""
        return f"job {self.id} on endpoint {self.endpoint_id}"

    def _keep(self, record: JobRecord) -> JobRecord:
        self.record = record
        self._streamed_status = None
        self._retrying = False
        return record

    def _retry_started(self) -> None:
        # Until the answer is in, the final record kept may be stale (the service may have
        # queued the job again even if the answer is lost): wait() asks again.
        self._retrying = True

    def _retry_answered(self, record: JobRecord) -> JobRecord:
        with _runs_lock:
            self._runs.count += 1
        self._retrying = False
        return self._keep(record)

    def _note_stream_status(self, status: str) -> None:
        self._streamed_status = status

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} on {self.endpoint_id}: {self.last_status}>"


class Job(_JobBase["EndpointClient"]):
    """A queue job: status, wait, output, stream, cancel and retry."""

    def status(self, *, ttl: int | None = None, wait: int | None = None) -> JobRecord:
        """The job's current record (``GET /status``); ``ttl`` ms sets its time to live;
        ``wait`` ms holds the read until the job ends (see :meth:`EndpointClient.status`)."""
        return self._keep(self._endpoint.status(self.id, ttl=ttl, wait=wait))

    def wait(
        self,
        timeout: float | None = None,
        *,
        on_progress: Callable[[JobRecord], Any] | None = None,
        poll_interval: float = MAX_POLL_INTERVAL,
    ) -> JobRecord:
        """Wait until the job has ended and return its final record (it does not raise
        for FAILED and friends: :meth:`output` does).

        Each read is held open until the job ends (``status(wait=...)``, up to 90 s a
        read), so the end is seen at once. ``on_progress(record)`` sees every change of
        status or progress output (the wait then polls ``/status``, ``poll_interval``
        seconds apart at most). ``timeout`` (seconds, None = no limit) raises
        :class:`~podbook.errors.WaitTimeout`; the job keeps running.
        """
        watch, final = self._start_wait(timeout, on_progress, poll_interval)
        if final is not None:
            return final
        while True:
            hold = watch.next_hold()
            if watch.observe(self.status(wait=hold)):
                return self.record  # type: ignore[return-value]
            if hold is None:
                time.sleep(watch.next_sleep())

    def output(self, timeout: float | None = None) -> Any:
        """Wait for the job and return its output; raises :class:`~podbook.errors.JobFailed`
        (``.error`` has the handler's type, message and traceback),
        :class:`~podbook.errors.JobTimedOut` or :class:`~podbook.errors.JobCancelled`."""
        return outcome(self.id, self.endpoint_id, self.wait(timeout))

    def stream(self, *, cursor: int = 0) -> Iterator[Any]:
        """The streamed outputs as they arrive; ends when the job has ended and all is drained.
        A dropped connection is ridden out when the server offers the resumable cursor;
        ``cursor`` starts after that many chunks (``StreamInterrupted.cursor``)."""
        for chunk in self.stream_chunks(cursor=cursor):
            yield chunk.output

    def stream_chunks(self, *, cursor: int = 0) -> Iterator[StreamChunk]:
        """The streamed chunks (``output`` and ``metrics``) as they arrive."""
        for batch in self._endpoint.stream_batches(self.id, cursor=cursor):
            self._note_stream_status(batch.status)
            yield from batch.stream

    def cancel(self) -> JobRecord:
        """Cancel the job (queued: dropped; running: stopped). Answers at once."""
        return self._keep(self._endpoint.cancel(self.id))

    def retry(self) -> JobRecord:
        """Queue a FAILED or TIMED_OUT job again (same id, original input); its new record
        (IN_QUEUE). Then :meth:`wait`, :meth:`output` and :meth:`stream` follow the new run,
        in this handle and in every other handle of the job on the same client."""
        self._retry_started()
        return self._retry_answered(self._endpoint.retry(self.id))


class AsyncJob(_JobBase["AsyncEndpointClient"]):
    """The async twin of :class:`Job`: the same methods, awaitable."""

    async def status(self, *, ttl: int | None = None, wait: int | None = None) -> JobRecord:
        """The job's current record (``GET /status``); see :meth:`Job.status`."""
        return self._keep(await self._endpoint.status(self.id, ttl=ttl, wait=wait))

    async def wait(
        self,
        timeout: float | None = None,
        *,
        on_progress: Callable[[JobRecord], Any] | None = None,
        poll_interval: float = MAX_POLL_INTERVAL,
    ) -> JobRecord:
        """Wait until the job has ended; see :meth:`Job.wait`."""
        watch, final = self._start_wait(timeout, on_progress, poll_interval)
        if final is not None:
            return final
        while True:
            hold = watch.next_hold()
            if watch.observe(await self.status(wait=hold)):
                return self.record  # type: ignore[return-value]
            if hold is None:
                await asyncio.sleep(watch.next_sleep())

    async def output(self, timeout: float | None = None) -> Any:
        """Wait for the job and return its output; see :meth:`Job.output`."""
        return outcome(self.id, self.endpoint_id, await self.wait(timeout))

    async def stream(self, *, cursor: int = 0) -> AsyncIterator[Any]:
        """The streamed outputs as they arrive; see :meth:`Job.stream`."""
        async for chunk in self.stream_chunks(cursor=cursor):
            yield chunk.output

    async def stream_chunks(self, *, cursor: int = 0) -> AsyncIterator[StreamChunk]:
        """The streamed chunks (``output`` and ``metrics``) as they arrive."""
        async for batch in self._endpoint.stream_batches(self.id, cursor=cursor):
            self._note_stream_status(batch.status)
            for chunk in batch.stream:
                yield chunk

    async def cancel(self) -> JobRecord:
        """Cancel the job."""
        return self._keep(await self._endpoint.cancel(self.id))

    async def retry(self) -> JobRecord:
        """Queue a FAILED or TIMED_OUT job again; its new record (IN_QUEUE). See
        :meth:`Job.retry`."""
        self._retry_started()
        return self._retry_answered(await self._endpoint.retry(self.id))
