"""What each subcommand of ``%template``, ``%volume``, ``%registry`` and ``%sshkey`` does:
call the client, show a static view, return the object. One small function per subcommand."""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from typing import TypeVar

from IPython.core.error import UsageError

from podbook.notebook.account import sshkeys, views
from podbook.notebook.account.commands import AccountCommand
from podbook.notebook.session import NotebookSession

Handler = Callable[[NotebookSession, AccountCommand], object]
T = TypeVar("T")


def _show(session: NotebookSession, obj: T, view: Callable[[T], object]) -> T:
    return session.show(obj, view, view)


def _deleted(session: NotebookSession, obj: T, kind: str, ident: str) -> T:
    """Note the delete in the cell and return the object as it was."""
    if session._show_panels():
        session.presenter.present(obj, views.deleted_view(kind, ident))
    return obj


# ---------------------------------------------------------------------------- templates


def create_template(session: NotebookSession, command: AccountCommand) -> object:
    """``%template create``."""
    from podbook.api.templates import CreateTemplateRequest

    template = session.client.templates.create(command.request(CreateTemplateRequest))
    return _show(session, template, views.template_view)


def list_templates(session: NotebookSession, command: AccountCommand) -> views.TemplateRows:
    """``%template list [--public]``."""
    public = bool(command.options.get("public"))
    client = session.client
    rows = views.TemplateRows(client.catalog.templates() if public else client.templates.list())
    rows.public = public
    return _show(session, rows, views.template_list_view)


def show_template(session: NotebookSession, command: AccountCommand) -> object:
    """``%template show ID`` (own or public)."""
    return _show(session, session.client.templates.get(command.ident), views.template_view)


def update_template(session: NotebookSession, command: AccountCommand) -> object:
    """``%template update ID --flag ...``."""
    from podbook.api.templates import UpdateTemplateRequest

    request = command.request(UpdateTemplateRequest)
    template = session.client.templates.update(command.ident, request)
    return _show(session, template, views.template_view)


def delete_template(session: NotebookSession, command: AccountCommand) -> object:
    """``%template delete ID``: returns the template as it was."""
    template = session.client.templates.get(command.ident)
    session.client.templates.delete(command.ident)
    return _deleted(session, template, "template", command.ident or "")


# ---------------------------------------------------------------------------- volumes


def create_volume(session: NotebookSession, command: AccountCommand) -> object:
    """``%volume create``."""
    from podbook.api.account import CreateNetworkVolumeRequest

    volume = session.client.network_volumes.create(command.request(CreateNetworkVolumeRequest))
    return _show(session, volume, views.volume_view)


def list_volumes(session: NotebookSession, command: AccountCommand) -> views.VolumeRows:
    """``%volume list``."""
    rows = views.VolumeRows(session.client.network_volumes.list())
    return _show(session, rows, views.volume_list_view)


def show_volume(session: NotebookSession, command: AccountCommand) -> object:
    """``%volume show ID``."""
    return _show(session, session.client.network_volumes.get(command.ident), views.volume_view)


def update_volume(session: NotebookSession, command: AccountCommand) -> object:
    """``%volume update ID [--name] [--size]``."""
    from podbook.api.templates import UpdateNetworkVolumeRequest

    request = command.request(UpdateNetworkVolumeRequest)
    volume = session.client.network_volumes.update(command.ident, request)
    return _show(session, volume, views.volume_view)


def delete_volume(session: NotebookSession, command: AccountCommand) -> object:
    """``%volume delete ID``: returns the volume as it was."""
    volume = session.client.network_volumes.get(command.ident)
    session.client.network_volumes.delete(command.ident)
    return _deleted(session, volume, "network volume", command.ident or "")


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
    from podbook.api.account import CreateRegistryRequest

    password = read_password(command.options.get("password_env"), command.fields["username"])
    request = command.request(CreateRegistryRequest, password=password)
    del password
    return _show(session, session.client.registries.create(request), views.registry_view)


def list_registries(session: NotebookSession, command: AccountCommand) -> views.RegistryRows:
    """``%registry list``."""
    rows = views.RegistryRows(session.client.registries.list())
    return _show(session, rows, views.registry_list_view)


def delete_registry(session: NotebookSession, command: AccountCommand) -> object:
    """``%registry delete ID`` (refused while a pod uses it)."""
    registry = session.client.registries.get(command.ident)
    session.client.registries.delete(command.ident)
    return _deleted(session, registry, "registry credential", command.ident or "")


def delegate(session: NotebookSession, command: AccountCommand) -> object:
    """``%registry delegate --resource ARN [--name N]``: register an ECR delegation."""
    from podbook.api.delegations import CreateDelegationRequest

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
        "create": create_template,
        "list": list_templates,
        "show": show_template,
        "update": update_template,
        "delete": delete_template,
    },
    "volume": {
        "create": create_volume,
        "list": list_volumes,
        "show": show_volume,
        "update": update_volume,
        "delete": delete_volume,
    },
    "registry": {
        "create": create_registry,
        "list": list_registries,
        "delete": delete_registry,
        "delegate": delegate,
        "delegations": list_delegations,
        "revoke": revoke_delegation,
    },
    "sshkey": {"list": list_keys, "add": add_keys, "remove": remove_keys, "set": set_keys},
}
