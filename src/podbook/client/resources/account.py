"""The account: its registered SSH public keys."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from podbook.client._core import Call
from podbook.client.resources.base import (
    AsyncResource,
    SyncResource,
    model_parser,
    prepare_body,
)
from podbook.errors import InvalidRequest

if TYPE_CHECKING:
    from podbook.api.account import SshKeys
    from podbook.client._async import AsyncClient
    from podbook.client._sync import Client

__all__ = ["Account", "AsyncAccount", "AsyncSshKeys", "SshKeysResource", "ssh_key_calls"]


class ssh_key_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the SSH key calls (no I/O)."""

    @staticmethod
    def get() -> Call[SshKeys]:
        """``GET /v2/account/ssh-keys``."""
        from podbook.api.account import SshKeys

        return Call("GET", "/v2/account/ssh-keys", parse=model_parser(SshKeys))

    @staticmethod
    def put(keys: Iterable[str]) -> Call[SshKeys]:
        """``PUT /v2/account/ssh-keys``: replaces the whole set (``[]`` removes all)."""
        from podbook.api.account import SshKeys, UpdateSshKeysRequest

        if isinstance(keys, str):
            raise InvalidRequest(
                "keys must be a list of public key lines, e.g. [open('id_ed25519.pub').read()]",
                status=400,
            )
        body = prepare_body(UpdateSshKeysRequest, {"keys": [k.strip() for k in keys]}, {})
        return Call("PUT", "/v2/account/ssh-keys", json=body, parse=model_parser(SshKeys))


class SshKeysResource(SyncResource):
    """``client.account.ssh_keys``."""

    def get(self) -> SshKeys:
        """The account's registered SSH public keys."""
        return self._request(ssh_key_calls.get())

    def put(self, keys: Iterable[str]) -> SshKeys:
        """Replace the account's SSH public keys with ``keys``."""
        return self._request(ssh_key_calls.put(keys))


class AsyncSshKeys(AsyncResource):
    """``client.account.ssh_keys`` of the :class:`AsyncClient`."""

    async def get(self) -> SshKeys:
        """The account's registered SSH public keys."""
        return await self._request(ssh_key_calls.get())

    async def put(self, keys: Iterable[str]) -> SshKeys:
        """Replace the account's SSH public keys with ``keys``."""
        return await self._request(ssh_key_calls.put(keys))


class Account:
    """``client.account``: account-level settings (today: ``ssh_keys``)."""

    def __init__(self, client: Client) -> None:
        self.ssh_keys = SshKeysResource(client)


class AsyncAccount:
    """``client.account`` of the :class:`AsyncClient`."""

    def __init__(self, client: AsyncClient) -> None:
        self.ssh_keys = AsyncSshKeys(client)
