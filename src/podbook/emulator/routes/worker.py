"""Worker-facing routes: the protocol unmodified ``runpod.serverless.start`` workers speak.

take ``GET /v2/{ep}/job-take/{worker_id}?``, batch ``GET /v2/{ep}/job-take-batch/{worker_id}?
&batch_size=N``, stop ``GET /v2/{ep}/job-stop/{worker_id}?``, result ``POST
/v2/{ep}/job-done/{worker_id}/{job_id}?&isStream=...``, stream ``POST
/v2/{ep}/job-stream/{worker_id}/{job_id}?``, ping ``GET /v2/{ep}/ping/{worker_id}``.
Bodies are JSON text whatever the content type (the SDK sends form-encoded JSON). Workers
authenticate with a worker key of that endpoint (bare or ``Bearer``); the ``Authorization``
value is never logged. Take and stop long-poll and answer 204 when nothing came.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import orjson
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from podbook.emulator.auth import extract_key
from podbook.emulator.broker.errors import QueueRefusal, endpoint_not_found
from podbook.emulator.broker.jobs import Job
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.broker.service import QueueService
from podbook.emulator.routes.errors import queue_error, use_format
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.queue import queue_service

_OK = b'{"ok":true}'

T = TypeVar("T")

WorkerHandler = Callable[[Request, EndpointQueue, QueueService], Awaitable[Response]]


def worker_queue(request: HTTPConnection, service: QueueService) -> EndpointQueue:
    """The endpoint a worker key serves, checked against the path (401/403/404)."""
    worker_key = extract_key(
        request.headers.get("authorization"), allow_bare=True, refuse=QueueRefusal
    )
    scope = service.broker.worker_scope(worker_key)
    endpoint_id = request.path_params["endpoint_id"]
    if scope is None:
        raise QueueRefusal(
            401,
            "invalid worker key; get one with POST /v2/serverless/{endpoint}/worker-keys "
            "(or run 'podbook worker-env ENDPOINT')",
        )
    if scope[1] != endpoint_id:
        if service.broker.endpoint(scope[0], endpoint_id) is None:
            # Not this key's account's endpoint: the same 404 whether another account has it.
            raise endpoint_not_found(endpoint_id)
        raise QueueRefusal(
            403, f"this worker key serves endpoint {scope[1]!r}, not {endpoint_id!r}"
        )
    queue = service.broker.endpoint(*scope)
    if queue is None:
        raise QueueRefusal(404, f"endpoint {endpoint_id!r} no longer exists")
    return queue


def worker_route(path: str, handler: WorkerHandler, methods: list[str]) -> Route:
    """A worker route with worker-key authentication and ``{"error"}`` answers."""

    async def endpoint(request: Request) -> Response:
        use_format(request, queue_error)
        service = queue_service(request)
        return await handler(request, worker_queue(request, service), service)

    endpoint.__name__ = handler.__name__
    return Route(path, endpoint, methods=methods)


def _json(raw: bytes) -> object:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise QueueRefusal(400, f"body is not valid JSON ({exc}); post JSON text") from None


def watch_disconnect(request: Request) -> asyncio.Future[None]:
    """A future that resolves when the worker's connection closes (cancel it when done)."""

    async def wait() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    return asyncio.ensure_future(wait())


async def _long_poll(request: Request, wait: Callable[[asyncio.Future[None]], Awaitable[T]]) -> T:
    """``wait(gone)``, where ``gone`` resolves if the worker's connection closes meanwhile."""
    gone = watch_disconnect(request)
    try:
        return await wait(gone)
    finally:
        gone.cancel()


def _batch_size(request: Request) -> int:
    raw = request.query_params.get("batch_size", "1")
    if not raw.isdigit() or int(raw) < 1:
        raise QueueRefusal(400, "batch_size must be a positive integer")
    return min(int(raw), 1000)


async def _take(
    request: Request, queue: EndpointQueue, service: QueueService, size: int
) -> list[Job]:
    """Up to ``size`` jobs for the worker, after a long-poll when none is waiting.

    ``job_in_progress=0`` says the worker runs nothing (it is idle).
    """
    idle = request.query_params.get("job_in_progress") == "0"
    return await _long_poll(
        request,
        lambda gone: service.broker.take(
            queue,
            request.path_params["worker_id"],
            size,
            service.settings.take_wait_seconds,
            gone,
            idle=idle,
        ),
    )


async def take(request: Request, queue: EndpointQueue, service: QueueService) -> Response:
    """One job (200 JSON object) or 204 after the long-poll."""
    jobs = await _take(request, queue, service, 1)
    return json_response(jobs[0].work_item()) if jobs else Response(status_code=204)


async def take_batch(request: Request, queue: EndpointQueue, service: QueueService) -> Response:
    """Up to ``batch_size`` jobs (200 JSON list) or 204 after the long-poll."""
    jobs = await _take(request, queue, service, _batch_size(request))
    return json_response([job.work_item() for job in jobs]) if jobs else Response(status_code=204)


async def stop(request: Request, queue: EndpointQueue, service: QueueService) -> Response:
    """``{"jobsToStop": [...]}`` or 204 after the long-poll."""
    ids = await _long_poll(
        request,
        lambda gone: service.broker.stop_signals(
            queue, request.path_params["worker_id"], service.settings.stop_wait_seconds, gone
        ),
    )
    return json_response({"jobsToStop": ids}) if ids else Response(status_code=204)


async def done(request: Request, queue: EndpointQueue, service: QueueService) -> Response:
    """A result or a progress update (an empty body is ``{}``)."""
    raw = await request.body()
    body = _json(raw) if raw.strip() else {}
    service.broker.result(
        queue, request.path_params["worker_id"], request.path_params["job_id"], body
    )
    return Response(_OK, media_type="application/json")


async def stream(request: Request, queue: EndpointQueue, service: QueueService) -> Response:
    """One stream chunk ``{"output": chunk}``."""
    raw = await request.body()
    service.broker.stream_chunk(
        queue, request.path_params["worker_id"], request.path_params["job_id"], _json(raw), len(raw)
    )
    return Response(_OK, media_type="application/json")


async def ping(request: Request, queue: EndpointQueue, service: QueueService) -> Response:
    """A heartbeat (``status=unhealthy`` marks the worker gone); ``job_id=a,b`` lists the
    jobs it runs (a stopped one among them is told to stop again)."""
    healthy = request.query_params.get("status", "healthy") != "unhealthy"
    listed = request.query_params.get("job_id")
    running = None if listed is None else [i for i in listed.split(",") if i.strip()]
    service.broker.ping(queue, request.path_params["worker_id"], healthy, running)
    return json_response({"ok": True})


def routes() -> list[BaseRoute]:
    """The worker-facing routes."""
    base = "/v2/{endpoint_id:endpoint}"
    return [
        worker_route(f"{base}/job-take/{{worker_id}}", take, ["GET"]),
        worker_route(f"{base}/job-take-batch/{{worker_id}}", take_batch, ["GET"]),
        worker_route(f"{base}/job-stop/{{worker_id}}", stop, ["GET"]),
        worker_route(f"{base}/job-done/{{worker_id}}/{{job_id}}", done, ["POST"]),
        worker_route(f"{base}/job-stream/{{worker_id}}/{{job_id}}", stream, ["POST"]),
        worker_route(f"{base}/ping/{{worker_id}}", ping, ["GET"]),
    ]
