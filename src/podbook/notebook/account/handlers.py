"""What each subcommand of ``%template``, ``%volume``, ``%registry`` and ``%sshkey`` does:
call the client, show a static view, return the object. A :class:`Resource` does what is the
same for templates, volumes and registries (create, list, show, update, delete); one small
function each of the others."""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from IPython.core.error import UsageError

from podbook.api.account import CreateNetworkVolumeRequest, CreateRegistryRequest
from podbook.api.delegations import CreateDelegationRequest
from podbook.api.templates import (
    CreateTemplateRequest,
    UpdateNetworkVolumeRequest,
    UpdateTemplateRequest,
)
from podbook.notebook.account import sshkeys, views
from podbook.notebook.account.commands import AccountCommand
from podbook.notebook.session import NotebookSession

if TYPE_CHECKING:
    from pydantic import BaseModel

Handler = Callable[[NotebookSession, AccountCommand], object]
T = TypeVar("T")


def _show(session: NotebookSession, obj: T, view: Callable[[T], object]) -> T:
    return session.show(obj, view, view)


def _deleted(session: NotebookSession, obj: T, kind: str, ident: str) -> T:
    """Note the delete in the cell and return the object as it was."""
    if session._show_panels():
        session.presenter.present(obj, views.deleted_view(kind, ident))
    return obj


@dataclass(frozen=True)
class Resource:
    """An account resource as its magic handles it: the client's resource (``attr``), what a
    delete notes (``kind``), how one and a list show, and the request models."""

    attr: str
    kind: str
    view: Callable[[Any], object]
    list_view: Callable[[Any], object]
    rows: type[list]
    create_model: type[BaseModel] | None = None
    update_model: type[BaseModel] | None = None

    def of(self, session: NotebookSession) -> Any:
        """The client's resource."""
        return getattr(session.client, self.attr)

    def create(self, session: NotebookSession, command: AccountCommand) -> object:
        """``create``: the request from the command's fields."""
        made = self.of(session).create(command.request(self.create_model))
        return _show(session, made, self.view)

    def listing(self, session: NotebookSession, command: AccountCommand) -> object:
        """``list``."""
        return _show(session, self.rows(self.of(session).list()), self.list_view)

    def show(self, session: NotebookSession, command: AccountCommand) -> object:
        """``show ID``."""
        return _show(session, self.of(session).get(command.ident), self.view)

    def update(self, session: NotebookSession, command: AccountCommand) -> object:
        """``update ID --flag ...``."""
        request = command.request(self.update_model)
        return _show(session, self.of(session).update(command.ident, request), self.view)

    def delete(self, session: NotebookSession, command: AccountCommand) -> object:
        """``delete ID``: notes the delete and returns the object as it was."""
        resource = self.of(session)
        gone = resource.get(command.ident)
        resource.delete(command.ident)
        return _deleted(session, gone, self.kind, command.ident or "")


TEMPLATES = Resource(
    "templates",
    "template",
    views.template_view,
    views.template_list_view,
    views.TemplateRows,
    CreateTemplateRequest,
    UpdateTemplateRequest,
)
VOLUMES = Resource(
    "network_volumes",
    "network volume",
    views.volume_view,
    views.volume_list_view,
    views.VolumeRows,
    CreateNetworkVolumeRequest,
    UpdateNetworkVolumeRequest,
)
REGISTRIES = Resource(
    "registries",
    "registry credential",
    views.registry_view,
    views.registry_list_view,
    views.RegistryRows,
)


def list_templates(session: NotebookSession, command: AccountCommand) -> views.TemplateRows:
    """``%template list [--public]``."""
    public = bool(command.options.get("public"))
    client = session.client
    rows = views.TemplateRows(client.catalog.templates() if public else client.templates.list())
    rows.public = public
    return _show(session, rows, views.template_list_view)


# ---------------------------------------------------------------------------- registries


def read_password(env_var: str | None, username: str) -> str:
    """The registry password from ``$env_var``, else asked for with a hidden prompt."""
    if env_var:
        value = os.environ.get(env_var)
        if not value:
            raise UsageError(
                f"%registry create: ${env_var} is not set or empty; set it in the kernel's "
                "environment, or leave out --password-env to be asked."
            )
        return value
    try:
        value = getpass.getpass(f"Password for {username} (hidden): ")
    except (EOFError, KeyboardInterrupt):
        value = ""
    except Exception:  # a frontend that cannot prompt
        raise UsageError(
            "%registry create: this frontend cannot ask for a password; use "
            "--password-env VAR with the password in $VAR."
        ) from None
    if not value:
        raise UsageError("%registry create: no password given; run it again and type one.")
    return value


def create_registry(session: NotebookSession, command: AccountCommand) -> object:
    """``%registry create --name N --username U [--password-env VAR]``."""
    password = read_password(command.options.get("password_env"), command.fields["username"])
    request = command.request(CreateRegistryRequest, password=password)
    del password
    return _show(session, session.client.registries.create(request), views.registry_view)


def delegate(session: NotebookSession, command: AccountCommand) -> object:
    """``%registry delegate --resource ARN [--name N]``: register an ECR delegation."""
    made = session.client.registries.create_delegation(command.request(CreateDelegationRequest))
    return _show(session, made, views.delegation_view)


def list_delegations(session: NotebookSession, command: AccountCommand) -> views.DelegationRows:
    """``%registry delegations``."""
    rows = views.DelegationRows(session.client.registries.list_delegations())
    return _show(session, rows, views.delegation_list_view)


def revoke_delegation(session: NotebookSession, command: AccountCommand) -> object:
    """``%registry revoke ID``: revoke an ECR delegation."""
    ident = command.ident or ""
    found = next((d for d in session.client.registries.list_delegations() if d.id == ident), None)
    session.client.registries.revoke_delegation(ident)
    return _deleted(session, found, "ECR delegation", ident)


# ---------------------------------------------------------------------------- ssh keys


def list_keys(session: NotebookSession, command: AccountCommand) -> object:
    """``%sshkey list``."""
    return _show(session, session.client.account.ssh_keys.get(), views.sshkeys_view)


def add_keys(session: NotebookSession, command: AccountCommand) -> object:
    """``%sshkey add PATH... [--key LINE] [--from-home]``: added to the registered ones."""
    options = command.options
    new = sshkeys.gather(options["files"], options["keys"], options["from_home"])
    current = list(session.client.account.ssh_keys.get().keys)
    keys = session.client.account.ssh_keys.put(sshkeys.unique(current + new))
    return _show(session, keys, views.sshkeys_view)


def set_keys(session: NotebookSession, command: AccountCommand) -> object:
    """``%sshkey set ...``: these keys replace all registered ones (none given: removes all)."""
    options = command.options
    new = sshkeys.gather(options["files"], options["keys"], options["from_home"])
    return _show(session, session.client.account.ssh_keys.put(new), views.sshkeys_view)


def remove_keys(session: NotebookSession, command: AccountCommand) -> object:
    """``%sshkey remove N|COMMENT ...``."""
    current = list(session.client.account.ssh_keys.get().keys)
    kept = sshkeys.remaining(current, command.options["which"])
    return _show(session, session.client.account.ssh_keys.put(kept), views.sshkeys_view)


HANDLERS: dict[str, dict[str, Handler]] = {
    "template": {
        "create": TEMPLATES.create,
        "list": list_templates,
        "show": TEMPLATES.show,
        "update": TEMPLATES.update,
        "delete": TEMPLATES.delete,
    },
    "volume": {
        "create": VOLUMES.create,
        "list": VOLUMES.listing,
        "show": VOLUMES.show,
        "update": VOLUMES.update,
        "delete": VOLUMES.delete,
    },
    "registry": {
        "create": create_registry,
        "list": REGISTRIES.listing,
        "delete": REGISTRIES.delete,  # refused while a pod uses it
        "delegate": delegate,
        "delegations": list_delegations,
        "revoke": revoke_delegation,
    },
    "sshkey": {"list": list_keys, "add": add_keys, "remove": remove_keys, "set": set_keys},
}
