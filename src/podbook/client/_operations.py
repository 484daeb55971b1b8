"""Which client method performs each operation of the REST v2 reference document.

``CLIENT_METHODS`` maps every ``operationId`` of ``reference/runpod-rest-v2.openapi.json`` to
the attribute path of the :class:`~podbook.client.Client` method that sends it
(``"pods.create"`` is ``client.pods.create``; the :class:`~podbook.client.AsyncClient` has the
same names). It is the one list of that mapping: ``scripts/operations_table.py`` writes it
into ``docs/operations.md``, and ``tests/client/test_reference_coverage.py`` fails when an
operation has no entry, or when the named method is not the one that sends the operation.

Pure data (no import of httpx or pydantic).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ALSO_SENT_BY", "CLIENT_METHODS", "resolve_method"]

CLIENT_METHODS: dict[str, str] = {
    # account
    "getSshKeys": "account.ssh_keys.get",
    "updateSshKeys": "account.ssh_keys.put",
    # pods
    "listPods": "pods.list",
    "createPod": "pods.create",
    "getPod": "pods.get",
    "updatePod": "pods.update",
    "deletePod": "pods.terminate",
    "getPodLogs": "pods.logs",
    "podAction": "pods.stop",
    # clusters
    "listClusters": "clusters.list",
    "createCluster": "clusters.create",
    "getCluster": "clusters.get",
    "updateCluster": "clusters.update",
    "deleteCluster": "clusters.delete",
    "listClusterPods": "clusters.pods",
    # serverless endpoints
    "listEndpoints": "endpoints.list",
    "createEndpoint": "endpoints.create",
    "getEndpoint": "endpoints.get",
    "updateEndpoint": "endpoints.update",
    "deleteEndpoint": "endpoints.delete",
    "listEndpointWorkers": "endpoints.workers",
    "listEndpointReleases": "endpoints.releases",
    "getWorkerLogs": "endpoints.worker_logs",
    # templates
    "listTemplates": "templates.list",
    "createTemplate": "templates.create",
    "getTemplate": "templates.get",
    "updateTemplate": "templates.update",
    "deleteTemplate": "templates.delete",
    # network volumes
    "listNetworkVolumes": "network_volumes.list",
    "createNetworkVolume": "network_volumes.create",
    "getNetworkVolume": "network_volumes.get",
    "updateNetworkVolume": "network_volumes.update",
    "deleteNetworkVolume": "network_volumes.delete",
    # registries
    "listRegistries": "registries.list",
    "createRegistry": "registries.create",
    "getRegistry": "registries.get",
    "deleteRegistry": "registries.delete",
    "listDelegations": "registries.list_delegations",
    "createDelegation": "registries.create_delegation",
    "revokeDelegation": "registries.revoke_delegation",
    # catalog
    "listGpuTypes": "catalog.gpus",
    "getGpuType": "catalog.gpu",
    "listCpuTypes": "catalog.cpus",
    "getCpuType": "catalog.cpu",
    "listDataCenters": "catalog.datacenters",
    "getDataCenter": "catalog.datacenter",
    "listPublicTemplates": "catalog.templates",
    # billing
    "listBilling": "billing.list",
    "listPodBilling": "billing.pods",
    "listServerlessBilling": "billing.serverless",
    "listEndpointBilling": "billing.endpoints",
    "listNetworkVolumeBilling": "billing.network_volumes",
    "listClusterBilling": "billing.clusters",
}
"""``operationId`` → attribute path of the client method (below ``client.``)."""

ALSO_SENT_BY: dict[str, tuple[str, ...]] = {
    "podAction": ("pods.start", "pods.restart"),
}
"""Further client methods that send the same operation (``podAction`` has one per action)."""


def resolve_method(client: Any, path: str) -> Any:
    """The bound method ``path`` (e.g. ``"pods.create"``) of ``client``."""
    target = client
    for name in path.split("."):
        target = getattr(target, name)
    return target
