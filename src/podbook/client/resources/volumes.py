"""Network volumes: storage in one data center that pods there can mount."""

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
    from podbook.api.account import CreateNetworkVolumeRequest, NetworkVolume
    from podbook.api.templates import UpdateNetworkVolumeRequest

__all__ = ["AsyncNetworkVolumes", "NetworkVolumes", "volume_calls"]

Body = Mapping[str, Any] | None


def _volume_model() -> type[NetworkVolume]:
    from podbook.api.account import NetworkVolume

    return NetworkVolume


class volume_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the network volume calls (no I/O)."""

    @staticmethod
    def list() -> Call[list[NetworkVolume]]:
        """``GET /v2/network-volumes``."""
        return Call(
            "GET", "/v2/network-volumes", parse=list_parser(_volume_model(), "networkVolumes")
        )

    @staticmethod
    def get(volume: Any) -> Call[NetworkVolume]:
        """``GET /v2/network-volumes/{id}``."""
        volume_id = path_id(volume, "network volume id")
        return Call("GET", f"/v2/network-volumes/{volume_id}", parse=model_parser(_volume_model()))

    @staticmethod
    def create(
        request: CreateNetworkVolumeRequest | Body, fields: Mapping[str, Any]
    ) -> Call[NetworkVolume]:
        """``POST /v2/network-volumes``."""
        from podbook.api.account import CreateNetworkVolumeRequest

        body = prepare_body(CreateNetworkVolumeRequest, request, fields)
        return Call("POST", "/v2/network-volumes", json=body, parse=model_parser(_volume_model()))

    @staticmethod
    def update(
        volume: Any, request: UpdateNetworkVolumeRequest | Body, fields: Mapping[str, Any]
    ) -> Call[NetworkVolume]:
        """``PATCH /v2/network-volumes/{id}``: a new name and/or a larger size."""
        from podbook.api.templates import UpdateNetworkVolumeRequest

        volume_id = path_id(volume, "network volume id")
        body = prepare_body(UpdateNetworkVolumeRequest, request, fields)
        return Call(
            "PATCH",
            f"/v2/network-volumes/{volume_id}",
            json=body,
            parse=model_parser(_volume_model()),
        )

    @staticmethod
    def delete(volume: Any) -> Call[None]:
        """``DELETE /v2/network-volumes/{id}``."""
        return Call("DELETE", f"/v2/network-volumes/{path_id(volume, 'network volume id')}")


class NetworkVolumes(SyncResource):
    """``client.network_volumes``."""

    def list(self) -> list[NetworkVolume]:
        """Your network volumes."""
        return self._request(volume_calls.list())

    def get(self, volume: NetworkVolume | str) -> NetworkVolume:
        """Read one network volume."""
        return self._request(volume_calls.get(volume))

    def create(
        self, request: CreateNetworkVolumeRequest | Body = None, /, **fields: Any
    ) -> NetworkVolume:
        """Create a volume: ``create(name=..., size=50, data_center="EU-RO-1")``."""
        return self._request(volume_calls.create(request, fields))

    def update(
        self, volume: NetworkVolume | str, request: Body = None, /, **fields: Any
    ) -> NetworkVolume:
        """Rename and/or grow a volume (``size`` never shrinks)."""
        return self._request(volume_calls.update(volume, request, fields))

    def delete(self, volume: NetworkVolume | str) -> None:
        """Delete a volume and its data."""
        self._request(volume_calls.delete(volume))


class AsyncNetworkVolumes(AsyncResource):
    """``client.network_volumes`` of the :class:`AsyncClient`."""

    async def list(self) -> list[NetworkVolume]:
        """Your network volumes."""
        return await self._request(volume_calls.list())

    async def get(self, volume: NetworkVolume | str) -> NetworkVolume:
        """Read one network volume."""
        return await self._request(volume_calls.get(volume))

    async def create(
        self, request: CreateNetworkVolumeRequest | Body = None, /, **fields: Any
    ) -> NetworkVolume:
        """Create a volume."""
        return await self._request(volume_calls.create(request, fields))

    async def update(
        self, volume: NetworkVolume | str, request: Body = None, /, **fields: Any
    ) -> NetworkVolume:
        """Rename and/or grow a volume."""
        return await self._request(volume_calls.update(volume, request, fields))

    async def delete(self, volume: NetworkVolume | str) -> None:
        """Delete a volume."""
        await self._request(volume_calls.delete(volume))
