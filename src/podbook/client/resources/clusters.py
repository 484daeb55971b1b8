"""Clusters: create, list, read, rename, delete, and the full member pods."""

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
    from podbook.api.clusters import Cluster, CreateClusterRequest, UpdateClusterRequest
    from podbook.api.pods import Pod

__all__ = ["AsyncClusters", "Clusters", "cluster_calls"]


def _cluster_model() -> type[Cluster]:
    from podbook.api.clusters import Cluster

    return Cluster


class cluster_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the cluster calls (no I/O)."""

    @staticmethod
    def create(
        request: CreateClusterRequest | Mapping[str, Any] | None, fields: Mapping[str, Any]
    ) -> Call[Cluster]:
        """``POST /v2/clusters`` with a locally validated body."""
        from podbook.api.clusters import CreateClusterRequest

        body = prepare_body(CreateClusterRequest, request, fields)
        return Call("POST", "/v2/clusters", json=body, parse=model_parser(_cluster_model()))

    @staticmethod
    def list() -> Call[list[Cluster]]:
        """``GET /v2/clusters``."""
        return Call("GET", "/v2/clusters", parse=list_parser(_cluster_model(), "clusters"))

    @staticmethod
    def get(cluster: Any) -> Call[Cluster]:
        """``GET /v2/clusters/{id}``."""
        cluster_id = path_id(cluster, "cluster id")
        return Call("GET", f"/v2/clusters/{cluster_id}", parse=model_parser(_cluster_model()))

    @staticmethod
    def pods(cluster: Any) -> Call[list[Pod]]:
        """``GET /v2/clusters/{id}/pods``: the full member pods."""
        from podbook.api.pods import Pod

        cluster_id = path_id(cluster, "cluster id")
        return Call("GET", f"/v2/clusters/{cluster_id}/pods", parse=list_parser(Pod, "pods"))

    @staticmethod
    def update(
        cluster: Any,
        request: UpdateClusterRequest | Mapping[str, Any] | None,
        fields: Mapping[str, Any],
    ) -> Call[Cluster]:
        """``PATCH /v2/clusters/{id}`` (today: a rename)."""
        from podbook.api.clusters import UpdateClusterRequest

        cluster_id = path_id(cluster, "cluster id")
        body = prepare_body(UpdateClusterRequest, request, fields)
        return Call(
            "PATCH", f"/v2/clusters/{cluster_id}", json=body, parse=model_parser(_cluster_model())
        )

    @staticmethod
    def delete(cluster: Any) -> Call[None]:
        """``DELETE /v2/clusters/{id}``: terminates every member."""
        return Call("DELETE", f"/v2/clusters/{path_id(cluster, 'cluster id')}")


class Clusters(SyncResource):
    """``client.clusters``: groups of identical pods in one data center."""

    def create(
        self, request: CreateClusterRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> Cluster:
        """Create a cluster (validated locally first)."""
        return self._request(cluster_calls.create(request, fields))

    def list(self) -> list[Cluster]:
        """The account's clusters."""
        return self._request(cluster_calls.list())

    def get(self, cluster: Cluster | str) -> Cluster:
        """Read one cluster."""
        return self._request(cluster_calls.get(cluster))

    def pods(self, cluster: Cluster | str) -> list[Pod]:
        """The cluster's member pods, in full."""
        return self._request(cluster_calls.pods(cluster))

    def update(
        self,
        cluster: Cluster | str,
        request: UpdateClusterRequest | Mapping[str, Any] | None = None,
        /,
        **fields: Any,
    ) -> Cluster:
        """Change a cluster (today only its ``name``)."""
        return self._request(cluster_calls.update(cluster, request, fields))

    def delete(self, cluster: Cluster | str) -> None:
        """Delete a cluster and its member pods."""
        self._request(cluster_calls.delete(cluster))


class AsyncClusters(AsyncResource):
    """``client.clusters`` of the :class:`AsyncClient`."""

    async def create(
        self, request: CreateClusterRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> Cluster:
        """Create a cluster (validated locally first)."""
        return await self._request(cluster_calls.create(request, fields))

    async def list(self) -> list[Cluster]:
        """The account's clusters."""
        return await self._request(cluster_calls.list())

    async def get(self, cluster: Cluster | str) -> Cluster:
        """Read one cluster."""
        return await self._request(cluster_calls.get(cluster))

    async def pods(self, cluster: Cluster | str) -> list[Pod]:
        """The cluster's member pods, in full."""
        return await self._request(cluster_calls.pods(cluster))

    async def update(
        self,
        cluster: Cluster | str,
        request: UpdateClusterRequest | Mapping[str, Any] | None = None,
        /,
        **fields: Any,
    ) -> Cluster:
        """Change a cluster (today only its ``name``)."""
        return await self._request(cluster_calls.update(cluster, request, fields))

    async def delete(self, cluster: Cluster | str) -> None:
        """Delete a cluster and its member pods."""
        await self._request(cluster_calls.delete(cluster))
