"""Resource classes of the client: one module per area, each with a sync and async face."""

from podbook.client.resources.account import Account, AsyncAccount
from podbook.client.resources.catalog import AsyncCatalog, Catalog
from podbook.client.resources.clusters import AsyncClusters, Clusters
from podbook.client.resources.pods import AsyncPods, Pods
from podbook.client.resources.registries import AsyncRegistries, Registries
from podbook.client.resources.templates import AsyncTemplates, Templates
from podbook.client.resources.volumes import AsyncNetworkVolumes, NetworkVolumes

__all__ = [
    "Account",
    "AsyncAccount",
    "AsyncCatalog",
    "AsyncClusters",
    "AsyncNetworkVolumes",
    "AsyncPods",
    "AsyncRegistries",
    "AsyncTemplates",
    "Catalog",
    "Clusters",
    "NetworkVolumes",
    "Pods",
    "Registries",
    "Templates",
]
