"""``/v2/serverless``: queue endpoints (REST, problem+json) and their worker keys.

``POST /v2/serverless`` creates an endpoint in the reference's shape; the emulator-only
``handler`` field (``path/to/handler.py[:fn]`` or ``package.module:fn``) makes the emulator
start and supervise podbook workers for it on first use. ``GET`` lists (built-ins ``echo``
and ``stream-demo`` included) or reads one; ``PATCH`` changes the given fields (a new
release when the container or handler configuration changes); ``templateId`` on either is
resolved once into container settings (``emulator/templates.py``); ``DELETE`` removes one (204),
its queued and running jobs ending CANCELLED and its supervised worker stopped.
``GET .../workers`` lists the workers connected now; ``GET .../releases`` the release history;
``GET .../workers/{workerId}/logs`` streams what the broker saw of one worker (SSE).
``POST /v2/serverless/{id}/worker-keys`` (full key) answers ``{"workerKey": "wk_..."}``, a
key that lets a worker serve that endpoint of that account and nothing else.
``"type": "LOAD_BALANCER"`` makes a load-balancing endpoint (no handler: the user's own HTTP
workers register with it, see :mod:`podbook.emulator.loadbalancer`); its body carries
``requestUrls`` (``base``, ``health``) and its ``/workers`` lists the registered workers.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from podbook.api.endpoints import (
    HANDLER_CODE_ENV,
    LB_HEALTH_PATH,
    CreateEndpointRequest,
    UpdateEndpointRequest,
    load_balancer_url,
)
from podbook.emulator.broker import releases
from podbook.emulator.broker.endpoints import (
    absolute_handler,
    check_handler_spec,
    compute_errors,
    cpu_configs,
    create_body_errors,
    gpu_config,
    start_command,
)
from podbook.emulator.broker.limits import EXECUTION_TIMEOUT_MAX_MS, EXECUTION_TIMEOUT_MIN_MS
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.loadbalancer.listing import lb_workers_body
from podbook.emulator.problems import Problem, not_found
from podbook.emulator.registries import check_registry
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.queue import queue_service
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable
from podbook.emulator.routes.workerlogs import worker_logs
from podbook.emulator.templates import apply_endpoint_template, find_template
from podbook.emulator.validation import validate

table = RouteTable()
"""The ``/v2/serverless`` routes (mounted with the REST prefixes, before the queue)."""


def _endpoint(req: ApiRequest) -> EndpointQueue:
    queue = queue_service(req.request).broker.endpoint(req.account_id, req.param("id"))
    if queue is None:
        raise not_found("endpoint", req.param("id"))
    return queue


def _public(req: ApiRequest, record: dict[str, Any]) -> dict[str, Any]:
    """The Endpoint body of ``record``; a LOAD_BALANCER endpoint's has ``requestUrls``
    (``base``: where its requests go, ``health``: the route its workers serve)."""
    body = releases.public(record)
    if record.get("type") == "LOAD_BALANCER":
        base = load_balancer_url(queue_service(req.request).url, record["id"])
        body["requestUrls"] = {"base": base, "health": base + LB_HEALTH_PATH}
    return body


@table.get("/v2/serverless")
async def list_endpoints(req: ApiRequest) -> Response:
    """``GET /v2/serverless``."""
    broker = queue_service(req.request).broker
    records = broker.list_endpoints(req.account_id)
    return json_response({"endpoints": [_public(req, r) for r in records]})


@table.post("/v2/serverless")
async def create_endpoint(req: ApiRequest) -> Response:
    """``POST /v2/serverless``: 201 with the endpoint."""
    body = await req.json()
    errors = create_body_errors(body)
    if errors:
        raise Problem(422, f"the endpoint is invalid: {errors[0]}", errors=errors)
    validate(CreateEndpointRequest, body)
    body = _with_template(req, body, create=True)
    _check_references(req, body)
    if errors := compute_errors({"gpu": body.get("gpu"), "cpu": body.get("cpu")}):
        raise Problem(400, f"the endpoint is invalid: {errors[0]}", errors=errors)
    fields = {k: v for k, v in body.items() if k not in ("name", "handler")}
    queue = queue_service(req.request).broker.create_endpoint(
        req.account_id, body["name"].strip(), body.get("handler"), fields
    )
    return json_response(_public(req, queue.record), status=201)


def _check_references(req: ApiRequest, body: dict[str, Any]) -> None:
    """404 unless the registry credential and network volumes ``body`` names are the caller's
    (another account's are answered exactly like ones that do not exist)."""
    check_registry(req.store, req.account_id, body.get("registry"))
    for volume_id in body.get("networkVolumes") or []:
        if req.store.network_volumes.get(req.account_id, volume_id) is None:
            raise Problem(
                404,
                f"network volume {volume_id!r} not found; name one of your volumes "
                "(GET /v2/network-volumes)",
                errors=[f"$.networkVolumes: network volume {volume_id!r} not found"],
            )


def _with_template(req: ApiRequest, body: dict[str, Any], *, create: bool) -> dict[str, Any]:
    """``body`` with its ``templateId`` (if any) resolved into container settings."""
    if "templateId" not in body:
        return body
    template = find_template(req.store, req.account_id, body["templateId"], serverless=True)
    return apply_endpoint_template(template, body, create=create)


@table.get("/v2/serverless/{id}")
async def get_endpoint(req: ApiRequest) -> Response:
    """``GET /v2/serverless/{id}``."""
    return json_response(_public(req, _endpoint(req).record))


def _update_errors(body: dict[str, Any]) -> list[str]:
    """The emulator's own limits on an update (the schema was checked already)."""
    errors = []
    timeout = body.get("timeout")
    if timeout is not None and not EXECUTION_TIMEOUT_MIN_MS <= timeout <= EXECUTION_TIMEOUT_MAX_MS:
        errors.append(
            f"$.timeout: milliseconds between {EXECUTION_TIMEOUT_MIN_MS} and "
            f"{EXECUTION_TIMEOUT_MAX_MS}"
        )
    handler = body.get("handler")
    if handler is not None and (problem := check_handler_spec(handler)):
        errors.append(f"$.handler: {problem}")
    return errors


@table.patch("/v2/serverless/{id}")
async def update_endpoint(req: ApiRequest) -> Response:
    """``PATCH /v2/serverless/{id}``: 200 with the endpoint; given fields replace the old
    (``workers`` is merged); a changed container or handler configuration is a release."""
    queue = _endpoint(req)
    body = await req.json()
    validate(UpdateEndpointRequest, body)
    if queue.record.get("builtin"):
        raise Problem(409, f"{queue.endpoint_id!r} is a built-in endpoint and cannot be changed")
    errors = _update_errors(body)
    if body.get("handler") and queue.record.get("type") == "LOAD_BALANCER":
        errors.append("$.handler: a LOAD_BALANCER endpoint serves your own HTTP app, not a handler")
    if errors:
        raise Problem(400, f"the update is invalid: {errors[0]}", errors=errors)
    body = _with_template(req, body, create=False)
    _check_references(req, body)
    old = queue.record
    new = {**old, **body}
    if "workers" in body:
        new["workers"] = {**(old.get("workers") or {}), **body["workers"]}
    if "gpu" in body:
        new["gpu"] = gpu_config(body["gpu"], old.get("gpu"))
        new.pop("cpu", None)
    if "cpu" in body:
        new["cpu"] = cpu_configs(body["cpu"])
        new["gpu"] = None
    if errors := compute_errors({k: new.get(k) for k in ("gpu", "cpu") if k in body}):
        raise Problem(400, f"the update is invalid: {errors[0]}", errors=errors)
    if body.get("handler"):
        new["handler"] = absolute_handler(body["handler"])
    if new["workers"].get("min", 0) > new["workers"].get("max", 0):
        raise Problem(400, "the update is invalid: $.workers: min is more than max")
    diff = releases.config_diff(old, new)
    if diff:
        new = releases.add_release(new, diff)
    service = queue_service(req.request)
    service.broker.update_endpoint(queue, **new)
    if diff and _handler_code_only(old, new) and not start_command(new):
        for worker in queue.workers.values():  # a hot reload: they already run the new code
            worker.version = new.get("version")
    if new.get("handler") != old.get("handler"):
        await service.supervisor.drop(queue.key)
    return json_response(_public(req, queue.record))


def _handler_code_only(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether the update changes nothing but the served handler's code (its release):
    the workers connected now are the ones that reloaded it."""

    def rest(record: dict[str, Any]) -> dict[str, Any]:
        env = {k: v for k, v in (record.get("env") or {}).items() if k != HANDLER_CODE_ENV}
        return {k: v for k, v in record.items() if k not in ("env", "version", "releases")} | {
            "env": env
        }

    return rest(old) == rest(new) and (old.get("env") or {}).get(HANDLER_CODE_ENV) != (
        new.get("env") or {}
    ).get(HANDLER_CODE_ENV)


@table.delete("/v2/serverless/{id}")
async def delete_endpoint(req: ApiRequest) -> Response:
    """``DELETE /v2/serverless/{id}``: 204; its jobs and worker keys go with it."""
    queue = _endpoint(req)
    if queue.record.get("builtin"):
        raise Problem(409, f"{queue.endpoint_id!r} is a built-in endpoint and cannot be deleted")
    service = queue_service(req.request)
    await service.supervisor.drop(queue.key)
    service.balancer.drop(queue.key)
    service.broker.delete_endpoint(queue)
    return Response(status_code=204)


@table.get("/v2/serverless/{id}/workers")
async def list_workers(req: ApiRequest) -> Response:
    """``GET /v2/serverless/{id}/workers``: the workers connected now, with their status
    (a LOAD_BALANCER endpoint's: its registered HTTP workers and their health)."""
    queue = _endpoint(req)
    if queue.record.get("type") == "LOAD_BALANCER":
        pool = queue_service(req.request).balancer.pool(queue.key)
        return json_response(lb_workers_body(queue.record, pool))
    starting = queue_service(req.request).autoscaler.starting_workers(queue.key)
    return json_response(releases.workers_body(queue, starting))


@table.get("/v2/serverless/{id}/releases")
async def list_releases(req: ApiRequest) -> Response:
    """``GET /v2/serverless/{id}/releases``: newest first, with the rollout's progress."""
    return json_response(releases.releases_body(_endpoint(req)))


table.add("/v2/serverless/{id}/workers/{workerId}/logs", worker_logs, "GET")


@table.post("/v2/serverless/{id}/worker-keys")
async def create_worker_key(req: ApiRequest) -> Response:
    """``POST /v2/serverless/{id}/worker-keys``: a worker key for this endpoint."""
    queue = _endpoint(req)
    worker_key = queue_service(req.request).broker.mint_worker_key(queue)
    return json_response({"workerKey": worker_key, "endpointId": queue.endpoint_id}, status=201)
