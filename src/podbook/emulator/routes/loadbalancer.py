"""The load balancer's routes: the pass-through, and how a worker joins and leaves a pool.

``/lb/{endpoint_id}`` and ``/lb/{endpoint_id}/{path}`` (every method) go to
:class:`~podbook.emulator.routes.lbproxy.LoadBalancerProxy`.

A worker-protocol extension, authenticated with a worker key of the endpoint as the other
worker routes are: ``POST /v2/{endpoint_id}/lb-worker/{worker_id}`` with
``{"port": N, "healthPort": M, "healthPath": "/ping"}`` registers (or renews) a worker
listening on loopback ``port``; the answer says what its first health poll found
(``{"workerId", "state", "detail", "renewSeconds"}``). ``DELETE`` on the same path takes it
out of the pool at once (a worker that stops without saying so is removed after failed
polls). Only loopback addresses are used: a worker names ports, never a host.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from podbook.api.endpoints import LB_HEALTH_PATH
from podbook.emulator.broker.errors import QueueRefusal
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.broker.service import QueueService
from podbook.emulator.loadbalancer.pool import LbWorker
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.lbproxy import LOAD_BALANCER, LoadBalancerProxy
from podbook.emulator.routes.worker import worker_route

RENEW_SECONDS = 5.0
"""How often a worker renews its registration (so an emulator restart finds it again)."""


def _port(body: dict[str, Any], name: str, default: int | None = None) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise QueueRefusal(400, f"{name} must be a TCP port number from 1 to 65535")
    return value


def _health_path(body: dict[str, Any]) -> str:
    path = body.get("healthPath", LB_HEALTH_PATH)
    if not isinstance(path, str) or not path.startswith("/") or len(path) > 200:
        raise QueueRefusal(400, "healthPath must be a path starting with '/' (e.g. /ping)")
    return path


def _load_balancer(queue: EndpointQueue) -> None:
    if queue.record.get("type") != LOAD_BALANCER:
        endpoint_id = queue.endpoint_id
        raise QueueRefusal(
            400,
            f"endpoint {endpoint_id!r} is a QUEUE endpoint: serve a handler with `podbook "
            f"worker handler.py --endpoint {endpoint_id}`, or serve the app on an endpoint "
            'created with "type": "LOAD_BALANCER"',
        )


async def register(request: Request, queue: EndpointQueue, service: QueueService) -> Response:
    """Register or renew a worker; answer what its health poll found."""
    _load_balancer(queue)
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError as exc:
        raise QueueRefusal(400, f"body is not valid JSON ({exc}); post a JSON object") from None
    if not isinstance(body, dict):
        raise QueueRefusal(400, 'post a JSON object such as {"port": 8000}')
    port = _port(body, "port")
    worker = LbWorker(
        worker_id=request.path_params["worker_id"],
        port=port,
        health_port=_port(body, "healthPort", port),
        health_path=_health_path(body),
    )
    worker = await service.balancer.register(queue.key, worker)
    return json_response(
        {
            "workerId": worker.worker_id,
            "state": worker.state,
            "detail": worker.detail,
            "renewSeconds": RENEW_SECONDS,
        }
    )


async def deregister(request: Request, queue: EndpointQueue, service: QueueService) -> Response:
    """Take a worker out of the pool."""
    service.balancer.deregister(queue.key, request.path_params["worker_id"])
    return Response(status_code=204)


def routes() -> list[BaseRoute]:
    """The pass-through routes and the registration routes."""
    proxy = LoadBalancerProxy()
    worker = "/v2/{endpoint_id:endpoint}/lb-worker/{worker_id}"
    return [
        Route("/lb/{endpoint_id}", proxy),
        Route("/lb/{endpoint_id}/{path:path}", proxy),
        worker_route(worker, register, ["POST"]),
        worker_route(worker, deregister, ["DELETE"]),
    ]
