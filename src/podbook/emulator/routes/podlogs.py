"""``GET /v2/pods/{id}/logs``: a pod's log as Server-Sent Events.

The stream first sends the backfill — the lines after ``Last-Event-ID`` when that header is
given, else those stamped at or after ``since``, else the last ``tail`` lines (default 100) —
then follows new lines as they are produced. Each event is ``id: ts/seq`` plus a JSON
``data:`` line (``ts``, ``source``, ``line``); a ``: keep-alive`` comment goes out after
:data:`KEEPALIVE_SECONDS` of silence. The stream ends (the server closes it after the last
line) when the pod is terminated; a stopped pod's stream stays open, since the pod may be
started again. A bad ``source``, ``tail``, ``since`` or ``Last-Event-ID`` is a 400; an
``Accept`` that excludes ``text/event-stream`` (``application/json`` alone) is a 406.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass

from starlette.responses import StreamingResponse

from podbook.api.logs import LOG_SOURCES, TAIL_DEFAULT, TAIL_MAX, parse_event_id, parse_rfc3339
from podbook.emulator.context import Emulator
from podbook.emulator.podlogs import PodLogBook, StoredLine, iter_pages, log_book
from podbook.emulator.problems import Problem, not_found
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable

table = RouteTable()
"""The pod log route."""

POLL_SECONDS = 0.1
KEEPALIVE_SECONDS = 15.0
RETRY_MS = 1000

SSE_HEADERS = {"Cache-Control": "no-cache", "Connection": "keep-alive", "X-Accel-Buffering": "no"}


@dataclass(frozen=True)
class LogQuery:
    """Where a stream starts and what it includes."""

    source: str | None
    tail: int
    since: float | None
    after_seq: int | None
    after_ts: float | None


def _bad(name: str, message: str) -> Problem:
    return Problem(400, f"{name} {message}", errors=[f"{name}: {message}"])


def accepts_event_stream(accept: str | None) -> bool:
    """Whether an ``Accept`` header allows ``text/event-stream`` (absent: anything goes)."""
    if accept is None or not accept.strip():
        return True
    for item in accept.split(","):
        media, *params = (part.strip().lower() for part in item.split(";"))
        weight = next((p[2:] for p in params if p.startswith("q=")), "1")  # q=0, 0.0: refused
        if media in ("text/event-stream", "text/*", "*/*") and weight.strip("0.") != "":
            return True
    return False


def parse_log_query(req: ApiRequest) -> LogQuery:
    """The query and ``Last-Event-ID`` of a log request (400 naming the bad one; 406 when
    ``Accept`` excludes ``text/event-stream``, as a server negotiating strictly answers)."""
    accept = req.request.headers.get("accept")
    if not accepts_event_stream(accept):
        raise Problem(
            406,
            f"this route answers text/event-stream only, not {accept!r}; "
            "send Accept: text/event-stream",
        )
    query = req.request.query_params
    unknown = sorted(set(query) - {"source", "tail", "since"})
    if unknown:
        raise _bad(unknown[0], "is not a query parameter of this route; use source, tail, since")
    source = query.get("source") or None
    if source is not None and source not in LOG_SOURCES:
        raise _bad("source", f"must be one of {', '.join(LOG_SOURCES)}, not {source!r}")
    tail = TAIL_DEFAULT
    raw_tail = query.get("tail")
    if raw_tail is not None:
        if not raw_tail.strip().isdigit() or int(raw_tail) > TAIL_MAX:
            raise _bad("tail", f"must be an integer from 0 to {TAIL_MAX}, not {raw_tail!r}")
        tail = int(raw_tail)
    since = None
    raw_since = query.get("since")
    if raw_since is not None:
        since = parse_rfc3339(raw_since)
        if since is None:
            raise _bad("since", f"must be an RFC 3339 date-time, not {raw_since!r}")
    after_seq = after_ts = None
    last_id = req.request.headers.get("last-event-id")
    if last_id is not None and last_id.strip():
        cursor = parse_event_id(last_id)
        if cursor is None:
            raise _bad("Last-Event-ID", f"must be an event id of this stream, not {last_id!r}")
        after_seq, after_ts = cursor.seq, cursor.ts if cursor.seq is None else None
    return LogQuery(source, tail, since, after_seq, after_ts)


def _event(line: StoredLine) -> bytes:
    data = json.dumps(line.data(), separators=(",", ":"), ensure_ascii=False)
    return f"id: {line.event_id}\ndata: {data}\n\n".encode()


async def event_stream(
    lines: list[StoredLine],
    seq: int,
    live: Callable[[], bool],
    fresh: Callable[[int], Iterable[list[StoredLine]]],
) -> AsyncIterator[bytes]:
    """A log's Server-Sent Events: the ``retry`` hint, the backfill ``lines``, then every
    :data:`POLL_SECONDS` the pages ``fresh(seq)`` gives after the last line sent (``seq`` at
    first), with a keep-alive comment after :data:`KEEPALIVE_SECONDS` of silence. ``live()``
    is asked before each read; once it says no, the stream ends after that read's lines."""
    yield f"retry: {RETRY_MS}\n\n".encode()
    if lines:
        yield b"".join(_event(line) for line in lines)
    quiet_since = time.monotonic()
    while True:
        await asyncio.sleep(POLL_SECONDS)
        alive = live()
        sent = False
        for page in fresh(seq):
            yield b"".join(_event(line) for line in page)
            seq = page[-1].seq
            sent = True
        if not alive:
            return
        if sent:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
            yield b": keep-alive\n\n"
            quiet_since = time.monotonic()


def _backfill(book: PodLogBook, pod_id: str, q: LogQuery) -> tuple[list[StoredLine], int]:
    """The first lines to send and the sequence number the live part follows from."""
    if q.after_seq is not None:
        return book.after(pod_id, seq=q.after_seq, source=q.source, limit=TAIL_MAX), q.after_seq
    if q.after_ts is not None or q.since is not None:
        exclusive = q.after_ts is not None
        ts = q.after_ts if exclusive else q.since
        lines = book.after(pod_id, ts=ts, inclusive=not exclusive, source=q.source, limit=TAIL_MAX)
    else:
        lines = book.tail(pod_id, q.tail, q.source)
    return lines, book.last_seq(pod_id) if not lines else lines[-1].seq


def _stream(emulator: Emulator, account_id: str, pod_id: str, q: LogQuery) -> AsyncIterator[bytes]:
    book = log_book(emulator)

    def live() -> bool:
        """Whether the pod still exists (its new lines written first); terminated: no."""
        record = emulator.store.pods.get(account_id, pod_id)
        if record is not None:
            book.materialize(record, emulator.clock())
        return record is not None

    lines, seq = _backfill(book, pod_id, q)
    return event_stream(lines, seq, live, lambda after: iter_pages(book, pod_id, after, q.source))


@table.get("/v2/pods/{id}/logs")
async def pod_logs(req: ApiRequest) -> StreamingResponse:
    """``GET /v2/pods/{id}/logs`` → ``text/event-stream``."""
    pod_id = req.param("id")
    record = req.store.pods.get(req.account_id, pod_id)
    if record is None:
        raise not_found("pod", pod_id)
    q = parse_log_query(req)
    log_book(req.emulator).materialize(record, req.emulator.clock())
    return StreamingResponse(
        _stream(req.emulator, req.account_id, pod_id, q),
        media_type="text/event-stream",
        headers=SSE_HEADERS,
    )
