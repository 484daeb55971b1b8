"""``/v2/serverless``: queue endpoints (REST, problem+json) and their worker keys.

``POST /v2/serverless`` creates an endpoint in the reference's shape; the emulator-only
``handler`` field (``path/to/handler.py[:fn]`` or ``package.module:fn``) makes the emulator
start and supervise podbook workers for it on first use. ``GET`` lists (built-ins ``echo``
and ``stream-demo`` included) or reads one; ``DELETE`` removes one with its jobs (204).
``POST /v2/serverless/{id}/worker-keys`` (full key) answers ``{"workerKey": "wk_..."}``, a
key that lets a worker serve that endpoint of that account and nothing else.
"""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import BaseRoute

from podbook.emulator.broker.endpoints import create_body_errors
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.broker.service import queue_service
from podbook.emulator.context import ApiRequest, api_route
from podbook.emulator.jsonresp import json_response
from podbook.emulator.problems import Problem, not_found


def _endpoint(req: ApiRequest) -> EndpointQueue:
    queue = queue_service(req.request).broker.endpoint(req.account_id, req.param("id"))
    if queue is None:
        raise not_found("endpoint", req.param("id"))
    return queue


async def list_endpoints(req: ApiRequest) -> Response:
    """``GET /v2/serverless``."""
    broker = queue_service(req.request).broker
    return json_response({"endpoints": broker.list_endpoints(req.account_id)})


async def create_endpoint(req: ApiRequest) -> Response:
    """``POST /v2/serverless``: 201 with the endpoint."""
    body = await req.json()
    errors = create_body_errors(body)
    if errors:
        raise Problem(422, f"the endpoint is invalid: {errors[0]}", errors=errors)
    fields = {k: v for k, v in body.items() if k not in ("name", "handler")}
    queue = queue_service(req.request).broker.create_endpoint(
        req.account_id, body["name"].strip(), body.get("handler"), fields
    )
    return json_response(queue.record, status=201)


async def get_endpoint(req: ApiRequest) -> Response:
    """``GET /v2/serverless/{id}``."""
    return json_response(_endpoint(req).record)


async def delete_endpoint(req: ApiRequest) -> Response:
    """``DELETE /v2/serverless/{id}``: 204; its jobs and worker keys go with it."""
    queue = _endpoint(req)
    if queue.record.get("builtin"):
        raise Problem(409, f"{queue.endpoint_id!r} is a built-in endpoint and cannot be deleted")
    service = queue_service(req.request)
    await service.supervisor.drop(queue.key)
    service.broker.delete_endpoint(queue)
    return Response(status_code=204)


async def create_worker_key(req: ApiRequest) -> Response:
    """``POST /v2/serverless/{id}/worker-keys``: a worker key for this endpoint."""
    queue = _endpoint(req)
    worker_key = queue_service(req.request).broker.mint_worker_key(queue)
    return json_response({"workerKey": worker_key, "endpointId": queue.endpoint_id}, status=201)


def routes() -> list[BaseRoute]:
    """The ``/v2/serverless`` routes (mounted with the REST prefixes, before the queue)."""
    return [
        api_route("/v2/serverless", list_endpoints, ["GET"]),
        api_route("/v2/serverless", create_endpoint, ["POST"]),
        api_route("/v2/serverless/{id}", get_endpoint, ["GET"]),
        api_route("/v2/serverless/{id}", delete_endpoint, ["DELETE"]),
        api_route("/v2/serverless/{id}/worker-keys", create_worker_key, ["POST"]),
    ]
