"""Container registry credentials: v2 list/get/create/delete, the v1 delete of the seed, and
ECR delegations (``/v2/registries/delegations``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podbook.client._core import Call
from podbook.client.resources.base import AsyncResource, SyncResource, path_id
from podbook.client.resources.crud import Crud

if TYPE_CHECKING:
    from podbook.api.account import CreateRegistryRequest, Registry
    from podbook.api.delegations import CreateDelegationRequest, EcrDelegation

__all__ = ["DELEGATIONS", "REGISTRIES", "AsyncRegistries", "Registries"]

REGISTRIES: Crud[Registry, CreateRegistryRequest, Any] = Crud(
    "/v2/registries", "podbook.api.account:Registry", item="registry"
)
DELEGATIONS: Crud[EcrDelegation, CreateDelegationRequest, Any] = Crud(
    "/v2/registries/delegations",
    "podbook.api.delegations:EcrDelegation",
    item="delegation",
    create="podbook.api.delegations:CreateDelegationRequest",
)


def v1_delete(item: Registry | str) -> Call[None]:
    """``DELETE /v1/containerregistryauth/{id}`` on the v1 base (the seed's operation)."""
    registry_id = path_id(item, REGISTRIES.what)
    return Call("DELETE", f"/v1/containerregistryauth/{registry_id}", base="v1")


class _RegistryOperations:
    list = REGISTRIES.op(
        REGISTRIES.list,
        "The account's registry credentials (names only; secrets are never returned).",
    )
    get = REGISTRIES.op(REGISTRIES.get, "Read one registry credential.")
    create = REGISTRIES.op(
        REGISTRIES.create,
        "Store a credential: ``create(name=..., username=..., password=...)`` (the password "
        "is sent, never returned or logged).",
    )
    delete = REGISTRIES.op(REGISTRIES.delete, "Delete a credential through REST v2.")
    delete_v1 = REGISTRIES.op(
        v1_delete, "Delete a credential through the v1 interface the seed names."
    )
    list_delegations = DELEGATIONS.op(DELEGATIONS.list, "The account's ECR delegations.")
    create_delegation = DELEGATIONS.op(
        DELEGATIONS.create,
        'Register one: ``create_delegation(resource="arn:aws:ecr:...", name=...)``.',
    )
    revoke_delegation = DELEGATIONS.op(DELEGATIONS.delete, "Revoke an ECR delegation.")


class Registries(_RegistryOperations, SyncResource):
    """``client.registries``: credentials for pulling private images."""


class AsyncRegistries(_RegistryOperations, AsyncResource):
    """``client.registries`` of the :class:`AsyncClient`."""
