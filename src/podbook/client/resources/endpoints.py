"""Serverless endpoints (``/v2/serverless``): create, list, get, update, delete, workers,
releases and a worker's log (SSE, as the pod logs). Jobs on an endpoint go through
``client.endpoint(ID)`` (:mod:`.queue`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from podbook.client.core import Call
from podbook.client.resources.base import (
    AsyncResource,
    SyncResource,
    list_parser,
    model_parser,
    path_id,
    prepare_body,
)

if TYPE_CHECKING:
    from podbook.api.endpoints import (
        CreateEndpointRequest,
        Endpoint,
        ListEndpointReleasesResponse,
        ListEndpointWorkersResponse,
        UpdateEndpointRequest,
    )
    from podbook.client.resources.podlogs import AsyncLogStream, LogFollower, LogStream

__all__ = ["AsyncEndpoints", "Endpoints", "endpoint_calls"]


def _api() -> Any:
    from podbook.api import endpoints

    return endpoints


def _path(endpoint: Any) -> str:
    return f"/v2/serverless/{path_id(endpoint, 'endpoint id')}"


class endpoint_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the endpoint calls (no I/O)."""

    @staticmethod
    def list() -> Call[list[Endpoint]]:
        """``GET /v2/serverless``."""
        return Call("GET", "/v2/serverless", parse=list_parser(_api().Endpoint, "endpoints"))

    @staticmethod
    def get(endpoint: Any) -> Call[Endpoint]:
        """``GET /v2/serverless/{id}``."""
        return Call("GET", _path(endpoint), parse=model_parser(_api().Endpoint))

    @staticmethod
    def create(
        request: CreateEndpointRequest | Mapping[str, Any] | None, fields: Mapping[str, Any]
    ) -> Call[Endpoint]:
        """``POST /v2/serverless`` (``type`` is QUEUE unless given; ``scaling`` is that
        type's default unless given: the service requires both)."""
        body = prepare_body(_api().CreateEndpointRequest, request, fields)
        body.setdefault("type", "QUEUE")
        body.setdefault("scaling", dict(_api().DEFAULT_SCALING[body["type"]]))
        return Call("POST", "/v2/serverless", json=body, parse=model_parser(_api().Endpoint))

    @staticmethod
    def update(
        endpoint: Any,
        request: UpdateEndpointRequest | Mapping[str, Any] | None,
        fields: Mapping[str, Any],
    ) -> Call[Endpoint]:
        """``PATCH /v2/serverless/{id}``: only the fields given change."""
        body = prepare_body(_api().UpdateEndpointRequest, request, fields)
        return Call("PATCH", _path(endpoint), json=body, parse=model_parser(_api().Endpoint))

    @staticmethod
    def delete(endpoint: Any) -> Call[None]:
        """``DELETE /v2/serverless/{id}`` (its queued and running jobs are cancelled)."""
        return Call("DELETE", _path(endpoint))

    @staticmethod
    def workers(endpoint: Any) -> Call[ListEndpointWorkersResponse]:
        """``GET /v2/serverless/{id}/workers``."""
        return Call(
            "GET",
            _path(endpoint) + "/workers",
            parse=model_parser(_api().ListEndpointWorkersResponse),
        )

    @staticmethod
    def releases(endpoint: Any) -> Call[ListEndpointReleasesResponse]:
        """``GET /v2/serverless/{id}/releases``."""
        return Call(
            "GET",
            _path(endpoint) + "/releases",
            parse=model_parser(_api().ListEndpointReleasesResponse),
        )


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
    path = f"{_path(endpoint)}/workers/{path_id(worker, 'worker id')}/logs"
    follower.call = Call("GET", path, params=follower.call.params)
    return follower


class Endpoints(SyncResource):
    """``client.endpoints``: define, change and remove serverless endpoints."""

    def list(self) -> list[Endpoint]:
        """The account's endpoints."""
        return self._request(endpoint_calls.list())

    def get(self, endpoint: Endpoint | str) -> Endpoint:
        """Read one endpoint."""
        return self._request(endpoint_calls.get(endpoint))

    def create(
        self, request: CreateEndpointRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> Endpoint:
        """Create an endpoint: ``create(name="demo", image=..., workers={"max": 2})``."""
        return self._request(endpoint_calls.create(request, fields))

    def update(
        self,
        endpoint: Endpoint | str,
        request: UpdateEndpointRequest | Mapping[str, Any] | None = None,
        /,
        **fields: Any,
    ) -> Endpoint:
        """Change the given fields (a new release when the container config changes)."""
        return self._request(endpoint_calls.update(endpoint, request, fields))

    def delete(self, endpoint: Endpoint | str) -> None:
        """Delete an endpoint; its queued and running jobs end CANCELLED."""
        self._request(endpoint_calls.delete(endpoint))

    def workers(self, endpoint: Endpoint | str) -> ListEndpointWorkersResponse:
        """The workers serving the endpoint now, with a summary by status."""
        return self._request(endpoint_calls.workers(endpoint))

    def releases(self, endpoint: Endpoint | str) -> ListEndpointReleasesResponse:
        """The endpoint's release history (newest first) and the rollout's progress."""
        return self._request(endpoint_calls.releases(endpoint))

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
    ) -> LogStream:
        """One worker's log lines, oldest first (arguments as :meth:`Pods.logs`);
        ``follow=True`` keeps yielding until the worker is gone."""
        from podbook.client.resources.podlogs import LogStream

        follower = worker_log_follower(
            endpoint, worker, source=source, tail=tail, since=since, follow=follow, idle=idle
        )
        return LogStream(self._client, follower)


class AsyncEndpoints(AsyncResource):
    """``client.endpoints`` of the :class:`AsyncClient`."""

    async def list(self) -> list[Endpoint]:
        """The account's endpoints."""
        return await self._request(endpoint_calls.list())

    async def get(self, endpoint: Endpoint | str) -> Endpoint:
        """Read one endpoint."""
        return await self._request(endpoint_calls.get(endpoint))

    async def create(
        self, request: CreateEndpointRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> Endpoint:
        """Create an endpoint."""
        return await self._request(endpoint_calls.create(request, fields))

    async def update(
        self,
        endpoint: Endpoint | str,
        request: UpdateEndpointRequest | Mapping[str, Any] | None = None,
        /,
        **fields: Any,
    ) -> Endpoint:
        """Change the given fields."""
        return await self._request(endpoint_calls.update(endpoint, request, fields))

    async def delete(self, endpoint: Endpoint | str) -> None:
        """Delete an endpoint; its queued and running jobs end CANCELLED."""
        await self._request(endpoint_calls.delete(endpoint))

    async def workers(self, endpoint: Endpoint | str) -> ListEndpointWorkersResponse:
        """The workers serving the endpoint now."""
        return await self._request(endpoint_calls.workers(endpoint))

    async def releases(self, endpoint: Endpoint | str) -> ListEndpointReleasesResponse:
        """The endpoint's release history and the rollout's progress."""
        return await self._request(endpoint_calls.releases(endpoint))

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
    ) -> AsyncLogStream:
        """``async for line in client.endpoints.worker_logs(ep, worker)``."""
        from podbook.client.resources.podlogs import AsyncLogStream

        follower = worker_log_follower(
            endpoint, worker, source=source, tail=tail, since=since, follow=follow, idle=idle
        )
        return AsyncLogStream(self._client, follower)
