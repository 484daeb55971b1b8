"""Client-facing queue operations under ``/v2/{endpoint_id}/...``.

run, runsync, status, status-sync, stream, cancel, retry, purge-queue, health, requests — with the seed's
per-operation rate limits and ``{"error": ...}`` bodies (not problem+json). Both
``Authorization: Bearer <key>`` and a bare key are accepted. These routes must be mounted
after every explicit REST prefix.
"""

from __future__ import annotations

import heapq
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from podbook.api.queue import REQUESTS_MAX_ITEMS, parse_ms_query
from podbook.emulator.auth import Caller, authenticate
from podbook.emulator.broker.core import now_ms
from podbook.emulator.broker.endpoints import start_command
from podbook.emulator.broker.errors import QueueRefusal
from podbook.emulator.broker.jobs import Job
from podbook.emulator.broker.limits import (
    STREAM_WAIT_DEFAULT_MS,
    WAIT_DEFAULT_MS,
)
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.broker.ratelimit import Counted
from podbook.emulator.broker.service import EXTRAS_KEY, QueueService
from podbook.emulator.broker.streams import parse_cursor
from podbook.emulator.broker.submission import parse_submission
from podbook.emulator.routes.errors import ErrorFormat, queue_error, use_format
from podbook.emulator.routes.jsonresp import json_response


@dataclass
class QueueRequest:
    """What a queue handler receives: the request, its endpoint and the queue service."""

    request: Request
    queue: EndpointQueue
    service: QueueService
    counter: Counted | None = None

    def job(self) -> Job:
        """The job named in the path (404 when unknown or expired)."""
        return self.service.broker.find_job(self.queue, self.request.path_params["job_id"])

    def hold_concurrency(self) -> Callable[[], None]:
        """Keep this request counted as concurrent after its handler returns (for a response
        that goes on streaming); the returned function ends it (call it once)."""
        counter, self.counter = self.counter, None
        return lambda: self.service.limiter.release(counter)


QueueHandler = Callable[[QueueRequest], Awaitable[Response]]


def queue_service(connection: HTTPConnection) -> QueueService:
    """The queue service of the emulator serving ``connection``."""
    service: QueueService = connection.app.state.emulator.extras[EXTRAS_KEY]
    if not service.url:  # embedded without a known URL: learn it from the first request
        service.url = str(connection.base_url).rstrip("/")
    return service


def queue_caller(request: Request) -> Caller:
    """The caller of a queue-style route: ``Bearer`` or a bare key (401 otherwise, answered in
    the route's error format)."""
    caller = authenticate(
        request.app.state.emulator.store, request.headers.get("authorization"), allow_bare=True
    )
    if caller.pod_id is not None:
        raise QueueRefusal(403, "a pod-scoped key cannot call endpoints; use an account API key")
    return caller


def refuse_load_balancer(queue: EndpointQueue, emulator_url: str) -> None:
    """400 for a queue operation on a load-balancing endpoint (it has no queue)."""
    if queue.record.get("type") == "LOAD_BALANCER":
        from podbook.api.endpoints import load_balancer_url

        base = load_balancer_url(emulator_url, queue.endpoint_id)
        raise QueueRefusal(
            400,
            f"endpoint {queue.endpoint_id!r} is a LOAD_BALANCER endpoint: it has no queue; "
            f"send requests to its workers' own routes at {base}/...",
        )


def queue_route(
    path: str,
    handler: QueueHandler,
    methods: Sequence[str],
    operation: str,
    *,
    write: bool,
    render_error: ErrorFormat = queue_error,
) -> Route:
    """A route: authenticate (401), find the endpoint (404), count the operation (429).

    ``render_error`` shapes the error answers (the queue's ``{"error": ...}`` by default).
    """

    async def endpoint(request: Request) -> Response:
        use_format(request, render_error)
        service = queue_service(request)
        counter = None
        req: QueueRequest | None = None
        try:
            caller = queue_caller(request)
            queue = service.broker.require_endpoint(
                caller.account_id, request.path_params["endpoint_id"]
            )
            refuse_load_balancer(queue, service.url)
            counter = service.limiter.acquire(
                caller.account_id, queue.endpoint_id, operation, len(queue.workers)
            )
            req = QueueRequest(request, queue, service, counter)
            if write and not caller.can_write:
                raise QueueRefusal(403, "this API key is read-only; use a full-access key")
            return await handler(req)
        finally:
            service.limiter.release(req.counter if req is not None else counter)

    endpoint.__name__ = handler.__name__
    return Route(path, endpoint, methods=list(methods))


async def run(req: QueueRequest) -> Response:
    """``POST /run``: queue a job; ``{"id", "status": "IN_QUEUE"}``."""
    body = parse_submission(await req.request.body(), "run")
    job = req.service.broker.submit(req.queue, body, "run")
    return json_response({"id": job.id, "status": job.status})


async def runsync(req: QueueRequest) -> Response:
    """``POST /runsync``: hold until the job ends or ``wait`` ms pass."""
    raw_wait = req.request.query_params.get("wait")
    wait_ms = parse_ms_query("wait", raw_wait, default=WAIT_DEFAULT_MS) or 0
    body = parse_submission(await req.request.body(), "runsync")
    broker = req.service.broker
    # Retention is 1 min; only a ``wait`` asked for stretches it (up to 5 min).
    job = broker.submit(req.queue, body, "sync", wait_ms if raw_wait is not None else 0)
    await broker.wait_done(job, wait_ms / 1000)
    broker.commit_answered(job)
    _refuse_expired(req, job)
    if job.terminal:
        return json_response(job.status_record(now_ms()))
    return json_response({"id": job.id, "status": job.status})


def _refuse_expired(req: QueueRequest, job: Job) -> None:
    """404 for a job deleted while a call held (TTL); a job of an endpoint deleted meanwhile
    ended CANCELLED first and is answered as such."""
    if job.id not in req.service.broker.jobs and not job.terminal:
        raise QueueRefusal(404, f"job {job.id} expired (TTL) before it finished")


async def status(req: QueueRequest) -> Response:
    """``GET /status/{id}`` (``?ttl=`` sets the job's time to live)."""
    job = req.job()
    ttl = req.request.query_params.get("ttl")
    if ttl is not None:
        req.service.broker.set_ttl(job, parse_ms_query("ttl", ttl) or 0)
        job = req.job()
    return json_response(job.status_record(now_ms()))


async def status_sync(req: QueueRequest) -> Response:
    """``GET /status-sync/{id}?wait=ms``: hold until the job ends or ``wait`` ms pass
    (1000..300000, default 90000), then answer its record as ``/status`` does. The service's
    JS SDK goes on with it when a ``/runsync`` answered before the job ended."""
    wait_ms = (
        parse_ms_query("wait", req.request.query_params.get("wait"), default=WAIT_DEFAULT_MS) or 0
    )
    job = req.job()
    await req.service.broker.wait_done(job, wait_ms / 1000)
    _refuse_expired(req, job)
    return json_response(job.status_record(now_ms()))


async def stream(req: QueueRequest) -> Response:
    """``GET /stream/{id}``: long-poll, then drain the chunks buffered since the last call;
    ``?cursor=N`` (extension) answers the chunks from index ``N`` on without draining."""
    wait_ms = (
        parse_ms_query("wait", req.request.query_params.get("wait"), default=STREAM_WAIT_DEFAULT_MS)
        or 0
    )
    try:
        cursor = parse_cursor(req.request.query_params.get("cursor"))
    except ValueError as exc:
        raise QueueRefusal(400, str(exc)) from None
    job = req.job()
    return json_response(await req.service.broker.drain_stream(job, wait_ms / 1000, cursor))


async def cancel(req: QueueRequest) -> Response:
    """``POST /cancel/{id}``: a queued job is dropped, a running one stopped."""
    job = req.job()
    req.service.broker.cancel(job)
    return json_response({"id": job.id, "status": job.status})


async def retry(req: QueueRequest) -> Response:
    """``POST /retry/{id}``: FAILED or TIMED_OUT back to the queue."""
    job = req.job()
    req.service.broker.retry(job)
    return json_response({"id": job.id, "status": job.status})


async def purge_queue(req: QueueRequest) -> Response:
    """``POST /purge-queue``: remove the jobs waiting (running ones go on)."""
    removed = req.service.broker.purge(req.queue)
    return json_response({"removed": removed, "status": "completed"})


async def health(req: QueueRequest) -> Response:
    """``GET /health``: job counts and workers idle/running (an endpoint whose workers the
    emulator starts from its start command also counts them ``initializing`` and
    ``throttled``, as the service's SDKs know them)."""
    body = req.queue.health()
    if start_command(req.queue.record) is not None:
        scaler = req.service.autoscaler
        body["workers"]["initializing"] = scaler.starting(req.queue.key)
        body["workers"]["throttled"] = scaler.throttled(req.queue.key)
    return json_response(body)


async def requests(req: QueueRequest) -> Response:
    """``GET /requests``: the endpoint's recent jobs, newest first (at most
    ``REQUESTS_MAX_ITEMS``; an emulator-defined shape, see ``api.queue.RequestRecord``)."""
    now = now_ms()
    # Ties (two jobs in the same millisecond) go by submission order: the dict keeps it.
    newest = heapq.nlargest(
        REQUESTS_MAX_ITEMS,
        enumerate(req.queue.jobs.values()),
        key=lambda pair: (pair[1].submitted_at, pair[0]),
    )
    return json_response({"requests": [job.request_record(now) for _, job in newest]})


def routes() -> list[BaseRoute]:
    """The client-facing queue routes."""
    base = "/v2/{endpoint_id:endpoint}"
    job = "{job_id}"
    return [
        queue_route(f"{base}/run", run, ["POST"], "run", write=True),
        queue_route(f"{base}/runsync", runsync, ["POST"], "runsync", write=True),
        queue_route(f"{base}/status/{job}", status, ["GET", "POST"], "status", write=False),
        # Counted with /status: the seed's limits name no status-sync of their own.
        queue_route(f"{base}/status-sync/{job}", status_sync, ["GET"], "status", write=False),
        queue_route(f"{base}/stream/{job}", stream, ["GET", "POST"], "stream", write=False),
        queue_route(f"{base}/cancel/{job}", cancel, ["POST"], "cancel", write=True),
        queue_route(f"{base}/retry/{job}", retry, ["POST"], "retry", write=True),
        queue_route(f"{base}/purge-queue", purge_queue, ["POST"], "purge-queue", write=True),
        queue_route(f"{base}/health", health, ["GET"], "health", write=False),
        queue_route(f"{base}/requests", requests, ["GET"], "requests", write=False),
    ]
