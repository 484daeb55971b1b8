"""Pod logs: ``client.pods.logs(pod, ...)`` — typed lines from the SSE stream, resumable.

``GET /v2/pods/{id}/logs`` answers Server-Sent Events. :class:`LogStream` (sync iterator)
and :class:`AsyncLogStream` (async iterator) yield :class:`~podbook.api.logs.LogLine` s. When
the connection drops (reset, cut, read timeout), they reconnect with ``Last-Event-ID`` set to
the last event seen, and drop any event at or before it, so no line is lost or repeated.
A connection that delivered events is resumed at once; one that failed before any is tried
again with a growing pause, and after :attr:`LogFollower.max_failures` such failures in a
row :class:`~podbook.errors.ConnectionFailed` is raised.

``follow=True`` follows new lines until the stream ends (the pod was terminated) or the
iterator is closed. ``follow=False`` returns the backfill: it ends after ``tail`` lines,
once no event arrived for ``idle`` seconds after the answer (a slow first answer is waited
for again, as a dropped connection is), or before the first line stamped more than
:data:`SNAPSHOT_SLACK` seconds after the first answer arrived (a line the server wrote while it
picked the backfill still belongs to it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import httpx

from podbook.api.logs import LOG_SOURCES, TAIL_MAX, LogLine, parse_event_id, parse_rfc3339
from podbook.client._core import Call, RetryPolicy
from podbook.client._sse import SseEvent, SseParser
from podbook.client.resources.base import AsyncResource, path_id
from podbook.errors import ConnectionFailed, InvalidRequest

if TYPE_CHECKING:
    from podbook.client._async import AsyncClient
    from podbook.client._sync import Client

__all__ = ["AsyncLogStream", "LogFollower", "LogStream", "SseParser", "log_call", "log_stream"]

FOLLOW_READ_TIMEOUT = 60.0  # the emulator sends a keep-alive comment every 15 s
DEFAULT_IDLE = 1.0
SNAPSHOT_SLACK = 0.5
"""Seconds after the first answer within which a line still belongs to the backfill: the
server picks its backfill just after it answers, and stamps what it writes then."""
EVENT_STREAM_ACCEPT = "text/event-stream, application/problem+json"
"""``Accept`` of a log request: the route serves only SSE (and problem+json errors); the
client's default ``application/json`` is refused with 406 by a strict server."""


def log_call(pod: Any, source: str | None, tail: int | None, since: Any) -> Call[None]:
    """The ``GET /v2/pods/{id}/logs`` call (query checked locally: a bad one is not sent)."""
    params: dict[str, str] = {}
    if source is not None:
        if source not in LOG_SOURCES:
            raise InvalidRequest(
                f"source must be one of {', '.join(LOG_SOURCES)}, not {source!r}", status=400
            )
        params["source"] = source
    if tail is not None:
        if isinstance(tail, bool) or not isinstance(tail, int) or not 0 <= tail <= TAIL_MAX:
            raise InvalidRequest(f"tail must be an integer from 0 to {TAIL_MAX}", status=400)
        params["tail"] = str(tail)
    if since is not None:
        text = since.isoformat() if hasattr(since, "isoformat") else str(since)
        if parse_rfc3339(text) is None:
            raise InvalidRequest(f"since must be an RFC 3339 date-time, not {since!r}", status=400)
        params["since"] = text
    return Call("GET", f"/v2/pods/{path_id(pod, 'pod id')}/logs", params=params or None)


@dataclass
class LogFollower:
    """The I/O-free state of one log stream: requests to send, events to keep."""

    call: Call[None]
    follow: bool
    idle: float = DEFAULT_IDLE
    max_failures: int = 8
    parser: SseParser = field(default_factory=SseParser)
    failures: int = 0
    started: float = field(default_factory=time.time)
    answered: bool = False
    resume_id: str | None = None
    kept: int = 0
    _last_seq: int | None = None
    _last_ts: float | None = None

    @property
    def last_event_id(self) -> str | None:
        """The id of the last line kept (the resume cursor)."""
        return self.resume_id

    def request_call(self) -> Call[None]:
        """The call of the next connection: the SSE ``Accept``, the resume header, the
        stream's read timeout (the idle bound without follow, a keep-alive margin with it),
        and one try (the follower reconnects on its own)."""
        headers = {"Accept": EVENT_STREAM_ACCEPT}
        if self.resume_id:
            headers["Last-Event-ID"] = self.resume_id
        read = FOLLOW_READ_TIMEOUT if self.follow else self.idle
        return replace(self.call, headers=headers, read_timeout=read, retry=ONE_TRY)

    def answer_arrived(self) -> None:
        """The first 200 arrived: the backfill is what was written up to just after it."""
        if not self.answered:
            self.answered = True
            self.started = max(self.started, time.time() + SNAPSHOT_SLACK)

    def feed(self, text: str) -> LogLine | None:
        """The new line that one line of the body completes, if any."""
        event = self.parser.feed(text)
        return self.take(event) if event else None

    def take(self, event: SseEvent) -> LogLine | None:
        """The line an event carries, or None for one already seen (or not a log line)."""
        cursor = parse_event_id(event.id) if event.id else None
        if cursor is not None:
            if cursor.seq is not None and self._last_seq is not None:
                if cursor.seq <= self._last_seq:
                    return None
            elif cursor.seq is None and self._last_ts is not None and cursor.ts <= self._last_ts:
                return None
            self._last_seq = cursor.seq if cursor.seq is not None else self._last_seq
            self._last_ts = cursor.ts
        try:
            body = json.loads(event.data)
        except ValueError:
            body = {"line": event.data}
        if not isinstance(body, dict):
            body = {"line": str(body)}
        body.setdefault("ts", event.id or "")
        body["id"] = event.id
        if event.id:
            self.resume_id = event.id
        return LogLine.model_validate(body)

    def finish(self) -> LogLine | None:
        """At the clean end of a stream: the line of an event the server sent complete but
        without its closing blank line (the reference's own example ends so), unless it is
        past the backfill. A stream that broke off raises instead and never gets here."""
        line = self.feed("")
        return None if line is None or self.past_snapshot(line) else line

    def past_snapshot(self, line: LogLine) -> bool:
        """Without follow: whether ``line`` is past the backfill (stop before it): the
        ``tail`` lines were all received, or it was written after the backfill was taken."""
        if self.follow:
            return False
        self.kept += 1
        tail = (self.call.params or {}).get("tail")
        if tail is not None and "since" not in (self.call.params or {}) and self.kept > int(tail):
            return True
        ts = parse_rfc3339(line.ts)
        return ts is not None and ts > self.started

    def retry_delay(self, progressed: bool) -> float:
        """Seconds to wait before reconnecting; raise-worthy when None."""
        if progressed:
            self.failures = 0
            return 0.0
        self.failures += 1
        if self.failures > self.max_failures:
            return -1.0
        return min(5.0, 0.1 * 2 ** (self.failures - 1))

    def after_failure(
        self, error: ConnectionFailed, *, answered: bool, progressed: bool
    ) -> float | None:
        """Seconds to wait before reconnecting after ``error`` (a connection that failed,
        dropped or went quiet), or None when the stream is over (a backfill that went idle once
        answered); raises ``error`` when it cannot go on."""
        cause = error.__cause__
        if isinstance(cause, httpx.TimeoutException) and not self.follow and answered:
            if isinstance(cause, httpx.ReadTimeout):
                return None  # no event for ``idle`` seconds: the backfill is over
            raise error
        # Before the answer, a timeout only says the server is slow (``idle`` bounds the
        # gaps between events, not the wait for the first answer): tried again, as a drop.
        if not isinstance(cause, (httpx.TimeoutException, *_DROPPED)):
            raise error
        delay = self.retry_delay(progressed)
        if delay < 0:
            raise error
        return delay


_DROPPED = (httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError, httpx.WriteError)
ONE_TRY = RetryPolicy(max_attempts=1)


class LogStream:
    """A pod's log lines (sync iterator); see the module docstring. Close it when done."""

    def __init__(self, client: Client, follower: LogFollower) -> None:
        self._client = client
        self._follower = follower
        self._response: httpx.Response | None = None
        self._closed = False
        self._lines = self._run()

    @property
    def last_event_id(self) -> str | None:
        """The resume cursor: the id of the last line yielded."""
        return self._follower.last_event_id

    def __iter__(self) -> Iterator[LogLine]:
        return self

    def __next__(self) -> LogLine:
        return next(self._lines)

    def _run(self) -> Iterator[LogLine]:
        f = self._follower
        while not self._closed:
            answered = progressed = False
            try:
                with self._client.stream(f.request_call()) as response:
                    self._response = response
                    answered = True
                    f.answer_arrived()
                    for text in response.iter_lines():
                        line = f.feed(text)
                        if line is None:
                            continue
                        if f.past_snapshot(line):
                            return
                        progressed = True
                        yield line
                    if (last := f.finish()) is not None:
                        yield last
                    return  # the server ended the stream: the pod is gone
            except ConnectionFailed as error:
                if self._closed:
                    return
                delay = f.after_failure(error, answered=answered, progressed=progressed)
                if delay is None:
                    return  # idle: the backfill is over
            finally:
                self._response = None
                f.parser.reset_event()
            time.sleep(delay)

    def close(self) -> None:
        """Stop following and release the connection (may be called from another thread:
        the iterator then ends at its next event)."""
        self._closed = True
        response = self._response
        if response is not None:
            response.close()
        with contextlib.suppress(ValueError):  # "generator already executing": another thread
            self._lines.close()

    def __enter__(self) -> LogStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncLogStream:
    """The async twin of :class:`LogStream` (``async for line in client.pods.logs(...)``)."""

    def __init__(self, client: AsyncClient, follower: LogFollower) -> None:
        self._client = client
        self._follower = follower
        self._lines = self._run()

    @property
    def last_event_id(self) -> str | None:
        """The resume cursor: the id of the last line yielded."""
        return self._follower.last_event_id

    def __aiter__(self) -> AsyncIterator[LogLine]:
        return self

    async def __anext__(self) -> LogLine:
        return await self._lines.__anext__()

    async def _run(self) -> AsyncIterator[LogLine]:
        f = self._follower
        while True:
            answered = progressed = False
            try:
                async with self._client.stream(f.request_call()) as response:
                    answered = True
                    f.answer_arrived()
                    async for text in response.aiter_lines():
                        line = f.feed(text)
                        if line is None:
                            continue
                        if f.past_snapshot(line):
                            return
                        progressed = True
                        yield line
                    if (last := f.finish()) is not None:
                        yield last
                    return
            except ConnectionFailed as error:
                delay = f.after_failure(error, answered=answered, progressed=progressed)
                if delay is None:
                    return
            finally:
                f.parser.reset_event()
            await asyncio.sleep(delay)

    async def aclose(self) -> None:
        """Stop following and release the connection."""
        await self._lines.aclose()

    async def __aenter__(self) -> AsyncLogStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def log_stream(resource: Any, follower: LogFollower) -> Any:
    """The stream of ``follower`` for the face of ``resource``: an :class:`AsyncLogStream` on
    the :class:`~podbook.client.AsyncClient`, a :class:`LogStream` on the sync client."""
    if isinstance(resource, AsyncResource):
        return AsyncLogStream(resource._client, follower)
    return LogStream(resource._client, follower)


def open_logs(
    pod: Any,
    *,
    source: str | None = None,
    tail: int | None = None,
    since: Any = None,
    follow: bool = False,
    idle: float = DEFAULT_IDLE,
) -> LogFollower:
    """The follower state for one ``logs(...)`` call (arguments checked here)."""
    if idle <= 0:
        raise InvalidRequest("idle must be more than 0 seconds", status=400)
    return LogFollower(log_call(pod, source, tail, since), follow=bool(follow), idle=idle)
