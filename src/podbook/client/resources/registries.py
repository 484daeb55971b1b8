"""Container registry credentials: v2 list/get/create/delete, the v1 delete of the seed, and
ECR delegations (``/v2/registries/delegations``)."""

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
    from podbook.api.account import CreateRegistryRequest, Registry
    from podbook.api.delegations import CreateDelegationRequest, EcrDelegation

__all__ = ["AsyncRegistries", "Registries", "registry_calls"]


def _registry_model() -> type[Registry]:
    from podbook.api.account import Registry

    return Registry


def _delegation_model() -> type[EcrDelegation]:
    from podbook.api.delegations import EcrDelegation

    return EcrDelegation


class registry_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the registry credential calls (no I/O)."""

    @staticmethod
    def list() -> Call[list[Registry]]:
        """``GET /v2/registries``."""
        return Call("GET", "/v2/registries", parse=list_parser(_registry_model(), "registries"))

    @staticmethod
    def get(registry: Any) -> Call[Registry]:
        """``GET /v2/registries/{id}``."""
        registry_id = path_id(registry, "registry id")
        return Call("GET", f"/v2/registries/{registry_id}", parse=model_parser(_registry_model()))

    @staticmethod
    def create(
        request: CreateRegistryRequest | Mapping[str, Any] | None, fields: Mapping[str, Any]
    ) -> Call[Registry]:
        """``POST /v2/registries`` (the password is sent, never returned or logged)."""
        from podbook.api.account import CreateRegistryRequest

        body = prepare_body(CreateRegistryRequest, request, fields)
        return Call("POST", "/v2/registries", json=body, parse=model_parser(_registry_model()))

    @staticmethod
    def delete(registry: Any) -> Call[None]:
        """``DELETE /v2/registries/{id}``."""
        return Call("DELETE", f"/v2/registries/{path_id(registry, 'registry id')}")

    @staticmethod
    def delete_v1(registry: Any) -> Call[None]:
        """``DELETE /v1/containerregistryauth/{id}`` on the v1 base (the seed's operation)."""
        registry_id = path_id(registry, "registry id")
        return Call("DELETE", f"/v1/containerregistryauth/{registry_id}", base="v1")

    @staticmethod
    def list_delegations() -> Call[list[EcrDelegation]]:
        """``GET /v2/registries/delegations``."""
        parse = list_parser(_delegation_model(), "delegations")
        return Call("GET", "/v2/registries/delegations", parse=parse)

    @staticmethod
    def create_delegation(
        request: CreateDelegationRequest | Mapping[str, Any] | None, fields: Mapping[str, Any]
    ) -> Call[EcrDelegation]:
        """``POST /v2/registries/delegations``."""
        from podbook.api.delegations import CreateDelegationRequest

        body = prepare_body(CreateDelegationRequest, request, fields)
        parse = model_parser(_delegation_model())
        return Call("POST", "/v2/registries/delegations", json=body, parse=parse)

    @staticmethod
    def revoke_delegation(delegation: Any) -> Call[None]:
        """``DELETE /v2/registries/delegations/{id}``."""
        delegation_id = path_id(delegation, "delegation id")
        return Call("DELETE", f"/v2/registries/delegations/{delegation_id}")


class Registries(SyncResource):
    """``client.registries``: credentials for pulling private images."""

    def list(self) -> list[Registry]:
        """The account's registry credentials (names only; secrets are never returned)."""
        return self._request(registry_calls.list())

    def get(self, registry: Registry | str) -> Registry:
        """Read one registry credential."""
        return self._request(registry_calls.get(registry))

    def create(
        self, request: CreateRegistryRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> Registry:
        """Store a credential: ``create(name=..., username=..., password=...)``."""
        return self._request(registry_calls.create(request, fields))

    def delete(self, registry: Registry | str) -> None:
        """Delete a credential through REST v2."""
        self._request(registry_calls.delete(registry))

    def delete_v1(self, registry: Registry | str) -> None:
        """Delete a credential through the v1 interface the seed names."""
        self._request(registry_calls.delete_v1(registry))

    def list_delegations(self) -> list[EcrDelegation]:
        """The account's ECR delegations."""
        return self._request(registry_calls.list_delegations())

    def create_delegation(
        self, request: CreateDelegationRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> EcrDelegation:
        """Register one: ``create_delegation(resource="arn:aws:ecr:...", name=...)``."""
        return self._request(registry_calls.create_delegation(request, fields))

    def revoke_delegation(self, delegation: EcrDelegation | str) -> None:
        """Revoke an ECR delegation."""
        self._request(registry_calls.revoke_delegation(delegation))


class AsyncRegistries(AsyncResource):
    """``client.registries`` of the :class:`AsyncClient`."""

    async def list(self) -> list[Registry]:
        """The account's registry credentials."""
        return await self._request(registry_calls.list())

    async def get(self, registry: Registry | str) -> Registry:
        """Read one registry credential."""
        return await self._request(registry_calls.get(registry))

    async def create(
        self, request: CreateRegistryRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> Registry:
        """Store a credential."""
        return await self._request(registry_calls.create(request, fields))

    async def delete(self, registry: Registry | str) -> None:
        """Delete a credential through REST v2."""
        await self._request(registry_calls.delete(registry))

    async def delete_v1(self, registry: Registry | str) -> None:
        """Delete a credential through the v1 interface."""
        await self._request(registry_calls.delete_v1(registry))

    async def list_delegations(self) -> list[EcrDelegation]:
        """The account's ECR delegations."""
        return await self._request(registry_calls.list_delegations())

    async def create_delegation(
        self, request: CreateDelegationRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> EcrDelegation:
        """Register an ECR delegation."""
        return await self._request(registry_calls.create_delegation(request, fields))

    async def revoke_delegation(self, delegation: EcrDelegation | str) -> None:
        """Revoke an ECR delegation."""
        await self._request(registry_calls.revoke_delegation(delegation))
