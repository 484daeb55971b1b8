"""Progress updates from inside a handler: :func:`progress` (like ``runpod``'s
``progress_update``).

While a job is IN_PROGRESS its ``/status`` ``output`` shows the latest update. Updates are
coalesced (a handler that reports faster than the broker answers sends only the latest
value) and every update is delivered before the job's result.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from podbook.errors import PodbookError
from podbook.worker._protocol import encode_body, log_undelivered

__all__ = ["ProgressReporter", "progress"]

logger = logging.getLogger("podbook.worker")

_ACTIVE: dict[str, ProgressReporter] = {}
_ACTIVE_LOCK = threading.Lock()


class ProgressReporter:
    """Sends one job's progress updates from any thread, latest value first-come."""

    def __init__(
        self,
        job_id: str,
        loop: asyncio.AbstractEventLoop,
        send: Callable[[str, Any], Awaitable[None]],
    ) -> None:
        self.job_id = job_id
        self._loop = loop
        self._send = send
        self._latest: Any = None
        self._dirty = False
        self._closed = False
        self._task: asyncio.Task[None] | None = None
        self._from_threads = False

    def __enter__(self) -> ProgressReporter:
        with _ACTIVE_LOCK:
            _ACTIVE[self.job_id] = self
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        with _ACTIVE_LOCK:
            if _ACTIVE.get(self.job_id) is self:
                del _ACTIVE[self.job_id]
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def report(self, value: Any) -> None:
        """Queue ``value`` as the job's latest progress (callable from any thread)."""
        encode_body(value)  # a value that is not JSON fails here, in the handler's frame
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._set(value)
        else:
            self._from_threads = True
            self._loop.call_soon_threadsafe(self._set, value)

    def _set(self, value: Any) -> None:
        if self._closed:
            return
        self._latest, self._dirty = value, True
        if self._task is None or self._task.done():
            self._task = self._loop.create_task(self._drain())

    async def _drain(self) -> None:
        while self._dirty and not self._closed:
            self._dirty = False
            try:
                await self._send(self.job_id, self._latest)
            except PodbookError as exc:
                log_undelivered(self.job_id, "progress update not delivered", exc)

    async def flush(self) -> None:
        """Wait until every update reported so far has been posted."""
        if self._from_threads:
            await asyncio.sleep(0)  # let updates queued from threads land first
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)


def progress(job: Mapping[str, Any] | str, value: Any) -> None:
    """Report ``value`` as the progress of ``job`` (the job object the handler received).

    Callable from sync handlers (their thread) and async handlers alike; returns at once.
    ``/status`` shows the latest value as the job's ``output`` while it is IN_PROGRESS.
    Outside a running podbook worker (a handler called directly, e.g. in a test) it does
    nothing. ``TypeError`` when ``value`` is not JSON.
    """
    job_id = job if isinstance(job, str) else job.get("id") if isinstance(job, Mapping) else None
    if not isinstance(job_id, str):
        raise TypeError("progress(job, value) takes the job object the handler received")
    with _ACTIVE_LOCK:
        reporter = _ACTIVE.get(job_id)
    if reporter is None:
        encode_body(value)
        logger.debug("progress for job %s outside a running worker: ignored", job_id)
        return
    reporter.report(value)
