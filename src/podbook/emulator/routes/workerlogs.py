"""``GET /v2/serverless/{id}/workers/{workerId}/logs``: one worker's log as Server-Sent Events.

Query and resumption as the pod logs have them (``source``, ``tail``, ``since``,
``Last-Event-ID``; a bad one is a 400): the backfill first, then new lines as the broker
writes them. The stream ends once the worker is gone (no contact within the gone timeout)
or its endpoint is deleted, after its last line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.responses import StreamingResponse

from podbook.api.logs import TAIL_MAX
from podbook.emulator.broker.queues import EndpointQueue, WorkerState
from podbook.emulator.broker.service import QueueService
from podbook.emulator.podlogs import StoredLine
from podbook.emulator.problems import not_found
from podbook.emulator.routes.podlogs import (
    SSE_HEADERS,
    LogQuery,
    event_stream,
    parse_log_query,
)
from podbook.emulator.routes.queue import queue_service
from podbook.emulator.routes.rest import ApiRequest


def _backfill(state: WorkerState, q: LogQuery) -> list[StoredLine]:
    log = state.log
    if q.after_seq is not None:
        return log.after_seq(q.after_seq, q.source)[:TAIL_MAX]
    if q.after_ts is not None:
        return log.from_time(q.after_ts, inclusive=False, source=q.source)[:TAIL_MAX]
    if q.since is not None:
        return log.from_time(q.since, inclusive=True, source=q.source)[:TAIL_MAX]
    return log.tail(q.tail, q.source)


def _present(service: QueueService, queue: EndpointQueue, state: WorkerState) -> bool:
    """Whether the worker is still listed on a live endpoint."""
    live = service.broker.queues.get(queue.key) is queue
    return live and queue.workers.get(state.worker_id) is state


def _stream(
    service: QueueService, queue: EndpointQueue, state: WorkerState, q: LogQuery
) -> AsyncIterator[bytes]:
    def fresh(seq: int) -> list[list[StoredLine]]:
        page = state.log.after_seq(seq, q.source)
        return [page] if page else []

    lines = _backfill(state, q)
    seq = lines[-1].seq if lines else max(state.log.seq, q.after_seq or 0)
    return event_stream(lines, seq, lambda: _present(service, queue, state), fresh)


async def worker_logs(req: ApiRequest) -> StreamingResponse:
    """``GET /v2/serverless/{id}/workers/{workerId}/logs`` → ``text/event-stream``."""
    service = queue_service(req.request)
    queue = service.broker.endpoint(req.account_id, req.param("id"))
    if queue is None:
        raise not_found("endpoint", req.param("id"))
    state = queue.workers.get(req.param("workerId"))
    if state is None:
        raise not_found("worker", req.param("workerId"))
    q = parse_log_query(req)
    return StreamingResponse(
        _stream(service, queue, state, q), media_type="text/event-stream", headers=SSE_HEADERS
    )
