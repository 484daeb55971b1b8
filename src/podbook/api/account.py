"""Account-level resources: SSH keys, registry credentials and network volumes."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from .base import Omittable, RequestModel, ResponseModel
from .types import VolumeType, WireSecret

__all__ = [
    "SshKeys",
    "UpdateSshKeysRequest",
    "Registry",
    "CreateRegistryRequest",
    "ListRegistriesResponse",
    "NetworkVolume",
    "CreateNetworkVolumeRequest",
    "ListNetworkVolumesResponse",
]

_SSH_KEY = re.compile(r"^(ssh|ecdsa|sk)-\S+ \S+([ \t][^\n\r]*)?$")


def _check_ssh_key(value: str) -> str:
    if not _SSH_KEY.match(value):
        raise PydanticCustomError(
            "ssh_key",
            "must be an authorized_keys line '<type> <base64-key> [comment]'"
            " (e.g. the content of ~/.ssh/id_ed25519.pub)",
        )
    return value


SshPublicKey = Annotated[str, AfterValidator(_check_ssh_key)]


class SshKeys(ResponseModel):
    """The account's registered SSH public keys."""

    keys: list[str]


class UpdateSshKeysRequest(RequestModel):
    """Body of ``PUT /v2/account/ssh-keys``: the complete new set (``[]`` removes all)."""

    keys: list[SshPublicKey]


class Registry(ResponseModel):
    """A container registry credential (username and password are never returned)."""

    id: str
    name: str


class CreateRegistryRequest(RequestModel):
    """Body of ``POST /v2/registries``. The password is hidden from ``repr``."""

    name: str = Field(min_length=1)
    username: str = Field(min_length=1)
    password: WireSecret


class ListRegistriesResponse(ResponseModel):
    """``{"registries": [...]}``."""

    registries: list[Registry]


class NetworkVolume(ResponseModel):
    """A network volume in one data center."""

    id: str
    name: str
    size: int
    data_center: str
    type: VolumeType | None = None


class CreateNetworkVolumeRequest(RequestModel):
    """Body of ``POST /v2/network-volumes``."""

    name: str = Field(min_length=1)
    size: int = Field(ge=10, le=4096)
    data_center: str = Field(min_length=1)
    type: Omittable[VolumeType] = None


class ListNetworkVolumesResponse(ResponseModel):
    """``{"networkVolumes": [...]}``."""

    network_volumes: list[NetworkVolume]
