"""Serverless endpoints (``/v2/serverless``): create, list, get, update, delete, workers,
releases and a worker's log (SSE, as the pod logs). Jobs on an endpoint go through
``client.endpoint(ID)`` (:mod:`.queue`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from podbook.client._core import Call
from podbook.client.resources.base import AsyncResource, SyncResource, model_parser, path_id
from podbook.client.resources.crud import Crud

if TYPE_CHECKING:
    from podbook.api.endpoints import (
        CreateEndpointRequest,
        Endpoint,
        ListEndpointReleasesResponse,
        ListEndpointWorkersResponse,
        UpdateEndpointRequest,
    )
    from podbook.client.resources.podlogs import AsyncLogStream, LogFollower, LogStream

__all__ = ["ENDPOINTS", "AsyncEndpoints", "Endpoints", "endpoint_calls"]


def _service_defaults(body: dict[str, Any]) -> None:
    """``type`` is QUEUE unless given; ``scaling`` is that type's default unless given (the
    service requires both)."""
    from podbook.api.endpoints import DEFAULT_SCALING

    body.setdefault("type", "QUEUE")
    body.setdefault("scaling", dict(DEFAULT_SCALING[body["type"]]))


ENDPOINTS: Crud[Endpoint, CreateEndpointRequest, UpdateEndpointRequest] = Crud(
    "/v2/serverless",
    "podbook.api.endpoints:Endpoint",
    item="endpoint",
    list_key="endpoints",
    complete=_service_defaults,
)


class endpoint_calls:  # noqa: N801 - the former namespace of call builders, used like a module
    """Pure builders of the endpoint calls (no I/O) by their former signatures."""

    @staticmethod
    def create(
        request: CreateEndpointRequest | Mapping[str, Any] | None, fields: Mapping[str, Any]
    ) -> Call[Endpoint]:
        """``POST /v2/serverless`` (:meth:`Crud.create` of :data:`ENDPOINTS`)."""
        return ENDPOINTS.create(request, **fields)


def endpoint_workers(item: Endpoint | str) -> Call[ListEndpointWorkersResponse]:
    """``GET /v2/serverless/{id}/workers``."""
    from podbook.api.endpoints import ListEndpointWorkersResponse

    path = ENDPOINTS.item_path(item) + "/workers"
    return Call("GET", path, parse=model_parser(ListEndpointWorkersResponse))


def endpoint_releases(item: Endpoint | str) -> Call[ListEndpointReleasesResponse]:
    """``GET /v2/serverless/{id}/releases``."""
    from podbook.api.endpoints import ListEndpointReleasesResponse

    path = ENDPOINTS.item_path(item) + "/releases"
    return Call("GET", path, parse=model_parser(ListEndpointReleasesResponse))


def worker_log_follower(
    endpoint: Any,
    worker: Any,
    *,
    source: str | None,
    tail: int | None,
    since: Any,
    follow: bool,
    idle: float,
) -> LogFollower:
    """The log follower of ``GET /v2/serverless/{id}/workers/{workerId}/logs`` (the query is
    checked as for pod logs)."""
    from podbook.client.resources.podlogs import open_logs

    follower = open_logs("-", source=source, tail=tail, since=since, follow=follow, idle=idle)
    path = f"{ENDPOINTS.item_path(endpoint)}/workers/{path_id(worker, 'worker id')}/logs"
    follower.call = Call("GET", path, params=follower.call.params)
    return follower


S = TypeVar("S", "LogStream", "AsyncLogStream")


class _EndpointOperations(Generic[S]):
    list = ENDPOINTS.op(ENDPOINTS.list, "The account's endpoints.")
    get = ENDPOINTS.op(ENDPOINTS.get, "Read one endpoint.")
    create = ENDPOINTS.op(
        ENDPOINTS.create,
        'Create an endpoint: ``create(name="demo", image=..., workers={"max": 2})`` (``type`` '
        "is QUEUE unless given; ``scaling`` is that type's default unless given).",
    )
    update = ENDPOINTS.op(
        ENDPOINTS.update,
        "Change the given fields (a new release when the container config changes).",
    )
    delete = ENDPOINTS.op(
        ENDPOINTS.delete, "Delete an endpoint; its queued and running jobs end CANCELLED."
    )
    workers = ENDPOINTS.op(
        endpoint_workers, "The workers serving the endpoint now, with a summary by status."
    )
    releases = ENDPOINTS.op(
        endpoint_releases,
        "The endpoint's release history (newest first) and the rollout's progress.",
    )

    def worker_logs(
        self,
        endpoint: Endpoint | str,
        worker: Any,
        *,
        source: str | None = None,
        tail: int | None = None,
        since: Any = None,
        follow: bool = False,
        idle: float = 1.0,
    ) -> S:
        """One worker's log lines, oldest first (arguments as :meth:`Pods.logs`);
        ``follow=True`` keeps yielding until the worker is gone (``async for`` on the async
        client)."""
        from podbook.client.resources.podlogs import log_stream

        follower = worker_log_follower(
            endpoint, worker, source=source, tail=tail, since=since, follow=follow, idle=idle
        )
        return log_stream(self, follower)


class Endpoints(_EndpointOperations["LogStream"], SyncResource):
    """``client.endpoints``: define, change and remove serverless endpoints."""


class AsyncEndpoints(_EndpointOperations["AsyncLogStream"], AsyncResource):
    """``client.endpoints`` of the :class:`AsyncClient`."""
