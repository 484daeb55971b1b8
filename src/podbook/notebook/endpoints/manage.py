"""``%endpoint create|list|show|update|delete|logs``: serverless endpoints as objects and
tables (beside ``%endpoint health|purge|serve``, :mod:`.commands`; :mod:`.magic` routes a
line to either).

Each handler calls ``client.endpoints``, shows a static table (text and HTML, the same in a
live notebook and a saved one; secret-looking env values masked) and returns the object.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from podbook.api.secrets import mask_env
from podbook.notebook import parsing
from podbook.notebook.display import StaticView
from podbook.notebook.request import request_model
from podbook.notebook.values import COMMA_LIST, ENV, POSITIVE_INT, value_type

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic import BaseModel

    from podbook.api.endpoints import (
        CreateEndpointRequest,
        Endpoint,
        ListEndpointReleasesResponse,
        ListEndpointWorkersResponse,
        UpdateEndpointRequest,
    )
    from podbook.notebook.dispatch import Handler
    from podbook.notebook.panels.data import JsonDict
    from podbook.notebook.session import NotebookSession


def _non_negative(text: str) -> int:
    value = int(text.replace("_", ""))
    if value < 0:
        raise ValueError(text)
    return value


COUNT = value_type(_non_negative, "a whole number >= 0")
_FLASHBOOT_MODES = {"off": "OFF", "on": "FLASHBOOT", "priority": "PRIORITY_FLASHBOOT"}


def _flashboot(text: str) -> str:
    mode = _FLASHBOOT_MODES.get(text.strip().lower())
    if mode is None:
        raise ValueError(text)
    return mode


FLASHBOOT = value_type(_flashboot, "off, on or priority")


@dataclass(frozen=True)
class EndpointCommand:
    """A parsed ``%endpoint create|list|show|update|delete`` line: ``fields`` are those of
    the create or update request the line gave (by their Python names)."""

    verb: str
    endpoint_id: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    output: str | None = None

    def create_request(self) -> CreateEndpointRequest:
        """The create request (:class:`~podbook.errors.InvalidRequest` for a refused value)."""
        from podbook.api.endpoints import CreateEndpointRequest

        return request_model(CreateEndpointRequest, **self.fields)

    def update_request(self) -> UpdateEndpointRequest:
        """The update request (only the flags given change)."""
        from podbook.api.endpoints import UpdateEndpointRequest

        return request_model(UpdateEndpointRequest, **self.fields)


@dataclass(frozen=True)
class LogsCommand:
    """``%endpoint logs ID [WORKER] [--tail N] [--source ...]``."""

    endpoint_id: str
    worker: str | None = None
    tail: int = 20
    source: str | None = None
    output: str | None = None


class EndpointList(list):
    """The result of ``%endpoint list``: a list of endpoints that displays as a table."""


@dataclass(frozen=True)
class EndpointDetails:
    """The result of ``%endpoint show``: the endpoint, its workers and its releases."""

    endpoint: Endpoint
    workers: ListEndpointWorkersResponse
    releases: ListEndpointReleasesResponse

    @property
    def id(self) -> str:
        """The endpoint's id."""
        return str(self.endpoint.id)


# ---------------------------------------------------------------------------- parsing


def _add_config_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("configuration")
    group.add_argument("--image", help="container image of the workers")
    group.add_argument(
        "--args",
        dest="start_command",
        metavar="COMMAND",
        help="the workers' start command (on the emulator: it starts and scales them)",
    )
    group.add_argument(
        "--handler", metavar="SPEC", help="local emulator: path/to/handler.py[:fn] or pkg.mod:fn"
    )
    group.add_argument("--template", metavar="TEMPLATE_ID", help="a serverless template")
    group.add_argument("--workers-min", type=COUNT, metavar="N", help="workers kept running")
    group.add_argument("--workers-max", type=COUNT, metavar="N", help="most workers at once")
    group.add_argument("--idle-timeout", type=POSITIVE_INT, metavar="S", help="seconds idle")
    group.add_argument("--timeout", type=POSITIVE_INT, metavar="MS", help="job execution limit")
    group.add_argument("--env", type=ENV, action="append", metavar="KEY=VALUE", help="repeatable")
    group.add_argument("--dc", type=COMMA_LIST, metavar="DC_ID[,DC_ID]", help="data centers")
    group.add_argument("--flashboot", type=FLASHBOOT, metavar="off|on|priority")


def _config_fields(ns: argparse.Namespace) -> dict[str, Any]:
    """The request fields the configuration flags gave."""
    workers = {
        key: value
        for key, value in (
            ("min", ns.workers_min),
            ("max", ns.workers_max),
            ("idle_timeout", ns.idle_timeout),
        )
        if value is not None
    }
    fields = {
        "image": ns.image,
        "args": ns.start_command,
        "handler": ns.handler,
        "template_id": ns.template,
        "workers": workers or None,
        "timeout": ns.timeout,
        "env": dict(ns.env) if ns.env else None,
        "data_center_ids": ns.dc,
        "flashboot": ns.flashboot,
    }
    return {name: value for name, value in fields.items() if value is not None}


def _log_tail(text: str) -> int:
    """``--tail N``: 1..5000 lines."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 5000:
        raise argparse.ArgumentTypeError("expected a whole number from 1 to 5000")
    return value


def _parser(verb: str, description: str) -> parsing.MagicArgumentParser:
    return parsing.MagicArgumentParser(prog=f"%endpoint {verb}", description=description)


def build_subcommands() -> dict[str, parsing.Subcommand]:
    """The ``%endpoint create|list|show|update|delete`` subcommands, by name."""
    create = _parser("create", "Create a serverless endpoint and show it.")
    create.add_argument(
        "name", metavar="NAME", nargs="?", help="the endpoint's name (its id when free)"
    )
    create.add_argument("--name", dest="name_flag", metavar="NAME", help="the same as NAME")
    _add_config_arguments(create)

    update = _parser("update", "Change an endpoint: only the flags given change.")
    update.add_argument("endpoint_id", metavar="ID", help="the endpoint's ID")
    update.add_argument("--name", help="a new name")
    _add_config_arguments(update)

    listing = _parser("list", "List the account's serverless endpoints.")
    show = _parser("show", "Show an endpoint with its workers and releases.")
    delete = _parser("delete", "Delete an endpoint; its queued and running jobs are cancelled.")
    for parser in (show, delete):
        parser.add_argument("endpoint_id", metavar="ID", help="the endpoint's ID")
    logs = _parser("logs", "Print what an endpoint's workers printed (each connected one).")
    logs.add_argument("endpoint_id", metavar="ID", help="the endpoint's ID")
    logs.add_argument("worker", metavar="WORKER", nargs="?", help="one worker (default: all)")
    logs.add_argument("--tail", type=_log_tail, default=20, metavar="N", help="lines per worker")
    logs.add_argument("--source", choices=("container", "system"), help="one source (both)")
    for parser in (create, update, listing, show, delete, logs):
        parsing.add_output_argument(parser)

    def build_create(ns: argparse.Namespace) -> EndpointCommand:
        if ns.name and ns.name_flag and ns.name != ns.name_flag:
            raise UsageError(
                f"%endpoint create: two names, {ns.name!r} and --name {ns.name_flag!r}; give one."
            )
        name = ns.name or ns.name_flag
        if not name:
            raise UsageError("%endpoint create: missing NAME. See `%endpoint create --help`.")
        fields = {"name": name, **_config_fields(ns)}
        return EndpointCommand("create", fields=fields, output=ns.output)

    def build_update(ns: argparse.Namespace) -> EndpointCommand:
        fields = _config_fields(ns)
        if ns.name is not None:
            fields["name"] = ns.name
        if not fields:
            raise UsageError(
                "%endpoint update: nothing to change; give a flag such as --image or "
                "--workers-max (see `%endpoint update --help`)."
            )
        return EndpointCommand("update", ns.endpoint_id, fields, ns.output)

    return {
        "create": parsing.Subcommand(create, build_create, "create a serverless endpoint"),
        "list": parsing.Subcommand(
            listing, lambda ns: EndpointCommand("list", output=ns.output), "list endpoints"
        ),
        "show": parsing.Subcommand(
            show,
            lambda ns: EndpointCommand("show", ns.endpoint_id, output=ns.output),
            "show an endpoint, its workers and releases",
        ),
        "update": parsing.Subcommand(update, build_update, "change an endpoint's settings"),
        "delete": parsing.Subcommand(
            delete,
            lambda ns: EndpointCommand("delete", ns.endpoint_id, output=ns.output),
            "delete an endpoint (its jobs are cancelled)",
        ),
        "logs": parsing.Subcommand(
            logs,
            lambda ns: LogsCommand(ns.endpoint_id, ns.worker, ns.tail, ns.source, ns.output),
            "print the output of an endpoint's workers",
        ),
    }


# ---------------------------------------------------------------------------- views


def _wire(value: BaseModel) -> JsonDict:
    from podbook.notebook.panels.data import to_wire

    return to_wire(value)


def _workers_text(workers: JsonDict) -> str:
    parts = [f"{k}={workers[k]}" for k in ("min", "max", "idleTimeout") if k in workers]
    return " ".join(parts) or "-"


def _endpoint_row(endpoint: Endpoint) -> dict[str, object]:
    record = _wire(endpoint)
    return {
        "id": record.get("id"),
        "name": record.get("name"),
        "version": record.get("version"),
        "image": record.get("image"),
        "workers": _workers_text(record.get("workers") or {}),
        "timeout ms": record.get("timeout"),
        "created": record.get("createdAt"),
    }


def _fields(endpoint: Endpoint) -> list[tuple[str, object]]:
    record = _wire(endpoint)
    env = mask_env(record.get("env")) or {}
    pairs: list[tuple[str, object]] = [
        ("id", record.get("id")),
        ("name", record.get("name")),
        ("version", record.get("version")),
        ("type", record.get("type")),
        ("image", record.get("image")),
        ("handler", record.get("handler")),
        ("workers", _workers_text(record.get("workers") or {})),
        ("timeout ms", record.get("timeout")),
        ("flashboot", record.get("flashboot")),
        ("data centers", ", ".join(record.get("dataCenterIds") or []) or None),
        ("env", ", ".join(f"{k}={v}" for k, v in env.items()) or None),
        ("created", record.get("createdAt")),
    ]
    return [(label, value) for label, value in pairs if value not in (None, "")]


def _box(title: str, inner: str) -> str:
    from podbook.notebook.panels.snapshot import BOX_STYLE

    return (
        f'<div class="podbook-endpoint" style="{BOX_STYLE}">'
        f"<div><b>{escape(title)}</b></div>{inner}</div>"
    )


def endpoint_view(endpoint: Endpoint) -> StaticView:
    """One endpoint as a field list."""
    pairs = _fields(endpoint)
    text = "\n".join(f"{label}: {value}" for label, value in pairs)
    rows = "".join(
        f"<tr><th style='text-align:left;padding-right:12px'>{escape(label)}</th>"
        f"<td>{escape(str(value))}</td></tr>"
        for label, value in pairs
    )
    title = f"Endpoint {_wire(endpoint).get('id')}"
    return StaticView(f"{title}\n{text}", _box(title, f"<table>{rows}</table>"))


def endpoint_list_view(endpoints: Sequence[Endpoint]) -> StaticView:
    """A table of endpoints."""
    from podbook.notebook.panels.snapshot import table_html, table_text

    rows = [_endpoint_row(e) for e in endpoints]
    columns = ["id", "name", "version", "image", "workers", "timeout ms", "created"]
    title = f"Serverless endpoints ({len(rows)})"
    return StaticView(f"{title}\n{table_text(rows, columns)}", table_html(rows, columns, title))


def _diff_text(diff: list[JsonDict]) -> str:
    return "; ".join(f"{d.get('field')}: {d.get('old')!r} → {d.get('new')!r}" for d in diff)


def details_view(details: EndpointDetails) -> StaticView:
    """An endpoint with tables of its workers and releases."""
    from podbook.notebook.panels.snapshot import table_html, table_text

    head = endpoint_view(details.endpoint)
    workers = _wire(details.workers)
    worker_rows = [
        {
            "worker": w.get("id"),
            "status": w.get("status"),
            "version": w.get("version"),
            "stale": "yes" if w.get("isStale") else "no",
            "uptime s": w.get("uptimeSeconds"),
        }
        for w in workers.get("workers") or []
    ]
    releases = _wire(details.releases)
    release_rows = [
        {
            "version": r.get("version"),
            "created": r.get("createdAt"),
            "workers": r.get("workerCount"),
            "changes": _diff_text(r.get("diff") or []) or "-",
        }
        for r in releases.get("releases") or []
    ]
    worker_cols = ["worker", "status", "version", "stale", "uptime s"]
    release_cols = ["version", "created", "workers", "changes"]
    worker_title = f"Workers ({len(worker_rows)})"
    rollout = releases.get("rollout") or {}
    release_title = (
        f"Releases ({len(release_rows)}, {rollout.get('percentOnLatest', 100)}% on latest)"
    )
    text = "\n\n".join(
        [
            head.text,
            f"{worker_title}\n{table_text(worker_rows, worker_cols)}",
            f"{release_title}\n{table_text(release_rows, release_cols)}",
        ]
    )
    html = (
        head.html
        + table_html(worker_rows, worker_cols, worker_title)
        + table_html(release_rows, release_cols, release_title)
    )
    return StaticView(text, html)


# ---------------------------------------------------------------------------- handlers


def _create(session: NotebookSession, command: EndpointCommand) -> Endpoint:
    endpoint = session.client.endpoints.create(command.create_request())
    return session.show(endpoint, endpoint_view)


def _list(session: NotebookSession, command: EndpointCommand) -> EndpointList:
    return session.show(EndpointList(session.client.endpoints.list()), endpoint_list_view)


def _show(session: NotebookSession, command: EndpointCommand) -> EndpointDetails:
    endpoints = session.client.endpoints
    details = EndpointDetails(
        endpoints.get(command.endpoint_id),
        endpoints.workers(command.endpoint_id),
        endpoints.releases(command.endpoint_id),
    )
    return session.show(details, details_view)


def _update(session: NotebookSession, command: EndpointCommand) -> Endpoint:
    endpoint = session.client.endpoints.update(command.endpoint_id, command.update_request())
    return session.show(endpoint, endpoint_view)


def _delete(session: NotebookSession, command: EndpointCommand) -> Endpoint:
    endpoint = session.client.endpoints.get(command.endpoint_id)
    session.client.endpoints.delete(command.endpoint_id)
    print(f"Deleted endpoint {endpoint.id}; its queued and running jobs were cancelled.")
    return endpoint


def _logs(session: NotebookSession, command: LogsCommand) -> dict[str, list[Any]]:
    """``%endpoint logs ID [WORKER]``: each worker's last lines (its output is its log)."""
    endpoints = session.client.endpoints
    workers = [command.worker] if command.worker else None
    if workers is None:
        workers = [w.id for w in endpoints.workers(command.endpoint_id).workers]
    if not workers:
        print(f"No worker of {command.endpoint_id} now; its workers' logs go with them.")
    found: dict[str, list[Any]] = {}
    for worker in workers:
        stream = endpoints.worker_logs(
            command.endpoint_id, worker, tail=command.tail, source=command.source
        )
        found[worker] = list(stream)
        print(f"worker {worker} ({len(found[worker])} lines)")
        for line in found[worker]:
            print(f"  {line}")
    return found


HANDLERS: dict[str, Handler] = {
    "create": _create,
    "list": _list,
    "show": _show,
    "update": _update,
    "delete": _delete,
    "logs": _logs,
}
