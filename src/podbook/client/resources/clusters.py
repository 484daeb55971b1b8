"""Clusters: create, list, read, rename, delete, and the full member pods."""

from __future__ import annotations

from typing import TYPE_CHECKING

from podbook.client._core import Call
from podbook.client.resources.base import AsyncResource, SyncResource, list_parser
from podbook.client.resources.crud import Crud

if TYPE_CHECKING:
    from podbook.api.clusters import Cluster, CreateClusterRequest, UpdateClusterRequest
    from podbook.api.pods import Pod

__all__ = ["CLUSTERS", "AsyncClusters", "Clusters"]

CLUSTERS: Crud[Cluster, CreateClusterRequest, UpdateClusterRequest] = Crud(
    "/v2/clusters", "podbook.api.clusters:Cluster", item="cluster"
)


def member_pods(item: Cluster | str) -> Call[list[Pod]]:
    """``GET /v2/clusters/{id}/pods``: the full member pods."""
    from podbook.api.pods import Pod

    return Call("GET", f"{CLUSTERS.item_path(item)}/pods", parse=list_parser(Pod, "pods"))


class _ClusterOperations:
    create = CLUSTERS.op(CLUSTERS.create, "Create a cluster (validated locally first).")
    list = CLUSTERS.op(CLUSTERS.list, "The account's clusters.")
    get = CLUSTERS.op(CLUSTERS.get, "Read one cluster.")
    pods = CLUSTERS.op(member_pods, "The cluster's member pods, in full.")
    update = CLUSTERS.op(CLUSTERS.update, "Change a cluster (today only its ``name``).")
    delete = CLUSTERS.op(CLUSTERS.delete, "Delete a cluster and its member pods.")


class Clusters(_ClusterOperations, SyncResource):
    """``client.clusters``: groups of identical pods in one data center."""


class AsyncClusters(_ClusterOperations, AsyncResource):
    """``client.clusters`` of the :class:`AsyncClient`."""
