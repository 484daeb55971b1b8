"""Container configuration shared by pods, clusters and templates: mounts and common fields."""

from __future__ import annotations

from pydantic import Field

from .base import Omittable, RequestModel, ResponseModel
from .types import PortSpec

__all__ = [
    "PersistentMount",
    "NetworkMount",
    "Mounts",
    "TemplateMounts",
    "PodPersistentMount",
    "PodNetworkMount",
    "PodMounts",
    "ContainerFields",
    "mount_kind",
]


class PersistentMount(RequestModel):
    """Host-local storage pinned to the pod's machine (deprecated in favour of network mounts)."""

    size: int = Field(ge=10, description="GB of host-local storage; at least 10.")
    path: str = Field(description="Mount path inside the container; changeable by PATCH.")


class NetworkMount(RequestModel):
    """A network volume mounted into the container."""

    volume_id: str = Field(description="Existing network volume in the pod's data center.")
    path: str = Field(description="Mount path inside the container; changeable by PATCH.")


class Mounts(RequestModel):
    """Storage mounts of a pod: at most one of ``persistent`` or ``network``.

    The same shape is used in requests and in the pod record (the contract forbids extra
    properties here in both directions).
    """

    persistent: Omittable[PersistentMount] = None
    network: Omittable[list[NetworkMount]] = Field(default=None, max_length=1)


class TemplateMounts(RequestModel):
    """Mounts of a template: a single persistent mount at most."""

    persistent: Omittable[PersistentMount] = None


class PodPersistentMount(ResponseModel):
    """A persistent mount as a pod or template record shows it."""

    size: int
    path: str


class PodNetworkMount(ResponseModel):
    """A network mount as a pod record shows it."""

    volume_id: str
    path: str


class PodMounts(ResponseModel):
    """The ``mounts`` of a pod or template record.

    The response twin of :class:`Mounts`: like every response model it keeps what it does
    not know and accepts ``null``, so a record read back from ``model_dump()`` validates again.
    """

    persistent: PodPersistentMount | None = None
    network: list[PodNetworkMount] | None = None


def mount_kind(mounts: Mounts | PodMounts | None) -> str | None:
    """``"persistent"``, ``"network"`` or ``None`` (no mount) for a pod's mounts."""
    if mounts is None:
        return None
    if mounts.persistent is not None:
        return "persistent"
    if mounts.network:
        return "network"
    return None


class ContainerFields(RequestModel):
    """Container fields every containerized request may carry (all optional)."""

    image: Omittable[str] = Field(default=None, description="Container image reference.")
    args: Omittable[str] = Field(default=None, description="Entrypoint arguments.")
    disk: Omittable[int] = Field(default=None, ge=1, description="Container disk in GB.")
    ports: Omittable[list[PortSpec]] = Field(default=None, description="'port/protocol' items.")
    env: Omittable[dict[str, str]] = Field(default=None, description="Environment variables.")
