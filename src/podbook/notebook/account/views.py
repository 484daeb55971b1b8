"""Static text + HTML views of templates, network volumes, registry credentials and SSH keys
(no widget: these records change only when the user changes them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING

from podbook.notebook.display import StaticView
from podbook.notebook.panels.data import to_wire
from podbook.notebook.panels.snapshot import BOX_STYLE, table_html, table_text

if TYPE_CHECKING:
    from pydantic import BaseModel

    from podbook.api.account import SshKeys
    from podbook.api.catalog import Template
    from podbook.notebook.panels.data import JsonDict


class TemplateRows(list):
    """``%template list``: a list of templates that displays as a table."""

    public: bool = False


class VolumeRows(list):
    """``%volume list``: a list of network volumes that displays as a table."""


class RegistryRows(list):
    """``%registry list``: a list of registry credentials (names only) as a table."""


class DelegationRows(list):
    """``%registry delegations``: the account's ECR delegations as a table."""


def _template_row(template: JsonDict) -> dict[str, object]:
    return {
        "id": template.get("id"),
        "name": template.get("name"),
        "image": template.get("image"),
        "for": "serverless" if template.get("serverless") else "pods",
        "disk GB": template.get("disk"),
        "ports": template.get("ports"),
        "registry": template.get("registry"),
        "public": template.get("public"),
    }


def _volume_row(volume: JsonDict) -> dict[str, object]:
    return {
        "id": volume.get("id"),
        "name": volume.get("name"),
        "size GB": volume.get("size"),
        "data center": volume.get("dataCenter"),
        "type": volume.get("type"),
    }


def _registry_row(registry: JsonDict) -> dict[str, object]:
    return {"id": registry.get("id"), "name": registry.get("name")}


def _table(title: str, rows: Sequence[Mapping[str, object]], empty: str) -> StaticView:
    columns = list(rows[0]) if rows else ["id"]
    if not rows:
        return StaticView(
            f"{title}\n{empty}",
            f'<div class="podbook-account" style="{BOX_STYLE}"><b>{escape(title)}</b>'
            f"<div><i>{escape(empty)}</i></div></div>",
        )
    html = table_html(rows, columns, title).replace("podbook-catalog", "podbook-account", 1)
    return StaticView(f"{title}\n{table_text(rows, columns)}", html)


def _record(title: str, fields: Mapping[str, object]) -> StaticView:
    return _table(title, [fields], "")


def template_list_view(rows: TemplateRows) -> StaticView:
    """A table of templates."""
    title = "Public templates" if rows.public else "Your templates"
    flat = [_template_row(to_wire(t)) for t in rows]
    return _table(f"{title} ({len(flat)})", flat, "none yet: %template create --name N --image I")


def template_view(template: Template) -> StaticView:
    """One template."""
    record = to_wire(template)
    fields = {
        **_template_row(record),
        "env": sorted((record.get("env") or {}).keys()),
        "CUDA": record.get("allowedCudaVersions"),
        "ssh": record.get("startSsh"),
        "jupyter": record.get("startJupyter"),
    }
    return _record(f"Template {record.get('id')}", fields)


def _list_view(
    title: str, row: Callable[[JsonDict], dict[str, object]], hint: str
) -> Callable[[Sequence[BaseModel]], StaticView]:
    """A view of a list of records as a table titled ``title (N)``."""

    def view(rows: Sequence[BaseModel]) -> StaticView:
        flat = [row(to_wire(r)) for r in rows]
        return _table(f"{title} ({len(flat)})", flat, hint)

    return view


def _one_view(
    title: str, row: Callable[[JsonDict], dict[str, object]]
) -> Callable[[BaseModel], StaticView]:
    """A view of one record titled ``title ID``."""

    def view(obj: BaseModel) -> StaticView:
        record = to_wire(obj)
        return _record(f"{title} {record.get('id')}", row(record))

    return view


volume_list_view = _list_view(
    "Network volumes", _volume_row, "none yet: %volume create --name N --size GB --dc DC_ID"
)
"""A table of network volumes."""
volume_view = _one_view("Network volume", _volume_row)
"""One network volume."""
registry_list_view = _list_view(
    "Registry credentials", _registry_row, "none yet: %registry create --name N --username U"
)
"""A table of registry credentials (the secrets are never returned, nor shown)."""
registry_view = _one_view("Registry credential", _registry_row)
"""One registry credential."""


def _delegation_row(delegation: JsonDict) -> dict[str, object]:
    return {
        "id": delegation.get("id"),
        "name": delegation.get("name"),
        "repository": f"{delegation.get('repository')}:{delegation.get('tag')}",
        "registry": delegation.get("dockerRegistryUri"),
        "created": delegation.get("createdAt"),
    }


delegation_list_view = _list_view(
    "ECR delegations",
    _delegation_row,
    "none yet: %registry delegate --resource arn:aws:ecr:REGION:ACCOUNT:repository/NAME",
)
"""A table of ECR delegations."""
delegation_view = _one_view("ECR delegation", _delegation_row)
"""One ECR delegation."""


def sshkeys_view(keys: SshKeys) -> StaticView:
    """The account's SSH keys, numbered as ``%sshkey remove N`` expects."""
    lines = list(to_wire(keys).get("keys") or [])
    rows = [
        {"#": str(i), "type": key.split()[0], "key": _short(key), "comment": _comment(key)}
        for i, key in enumerate(lines, 1)
    ]
    hint = "none yet: %sshkey add --from-home (reads ~/.ssh/*.pub)"
    return _table(f"SSH public keys ({len(rows)})", rows, hint)


def deleted_view(kind: str, ident: str) -> StaticView:
    """The note shown after a delete."""
    text = f"Deleted {kind} {ident}."
    return StaticView(
        text, f'<div class="podbook-account" style="{BOX_STYLE}">{escape(text)}</div>'
    )


def _short(key: str) -> str:
    body = key.split()[1] if len(key.split()) > 1 else ""
    return f"{body[:12]}…{body[-8:]}" if len(body) > 24 else body


def _comment(key: str) -> str:
    parts = key.split(None, 2)
    return parts[2] if len(parts) > 2 else ""
