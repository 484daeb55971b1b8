"""Network volumes: storage in one data center that pods there can mount."""

from __future__ import annotations

from typing import TYPE_CHECKING

from podbook.client.resources.base import AsyncResource, SyncResource
from podbook.client.resources.crud import Crud

if TYPE_CHECKING:
    from podbook.api.account import CreateNetworkVolumeRequest, NetworkVolume
    from podbook.api.templates import UpdateNetworkVolumeRequest

__all__ = ["NETWORK_VOLUMES", "AsyncNetworkVolumes", "NetworkVolumes"]

NETWORK_VOLUMES: Crud[NetworkVolume, CreateNetworkVolumeRequest, UpdateNetworkVolumeRequest] = Crud(
    "/v2/network-volumes",
    "podbook.api.account:NetworkVolume",
    item="volume",
    what="network volume id",
    update="podbook.api.templates:UpdateNetworkVolumeRequest",
)


class _NetworkVolumeOperations:
    list = NETWORK_VOLUMES.op(NETWORK_VOLUMES.list, "Your network volumes.")
    get = NETWORK_VOLUMES.op(NETWORK_VOLUMES.get, "Read one network volume.")
    create = NETWORK_VOLUMES.op(
        NETWORK_VOLUMES.create,
        'Create a volume: ``create(name=..., size=50, data_center="EU-RO-1")``.',
    )
    update = NETWORK_VOLUMES.op(
        NETWORK_VOLUMES.update, "Rename and/or grow a volume (``size`` never shrinks)."
    )
    delete = NETWORK_VOLUMES.op(NETWORK_VOLUMES.delete, "Delete a volume and its data.")


class NetworkVolumes(_NetworkVolumeOperations, SyncResource):
    """``client.network_volumes``."""


class AsyncNetworkVolumes(_NetworkVolumeOperations, AsyncResource):
    """``client.network_volumes`` of the :class:`AsyncClient`."""
