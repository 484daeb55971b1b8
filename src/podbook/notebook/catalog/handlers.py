"""What each ``%catalog`` subcommand does: read the catalog, show it, return the rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from podbook.notebook.catalog.commands import CatalogCommand, GpuFinderCommand
from podbook.notebook.catalog.finder import CatalogRows, GpuRows, fetch, keep, panel_row
from podbook.notebook.catalog.views import catalog_view, finder_view
from podbook.notebook.panels.data import records, to_wire

if TYPE_CHECKING:
    from podbook.api.pods import Pod
    from podbook.notebook.catalog.panel import CatalogPanel
    from podbook.notebook.dispatch import Handler
    from podbook.notebook.session import NotebookSession


def show_catalog(session: NotebookSession, command: CatalogCommand) -> CatalogRows:
    """``%catalog cpus|datacenters``: the entries as a table."""
    fetch_kind = getattr(session.client.catalog, command.kind)
    rows = CatalogRows(records(fetch_kind(), command.kind))
    rows.kind = command.kind
    return session.show(rows, catalog_view)


def find_gpus(session: NotebookSession, command: GpuFinderCommand) -> GpuRows:
    """``%catalog gpus [filters]``: the GPU types that pass the filters
    (:mod:`~podbook.notebook.catalog.finder`), shown as the finder panel."""
    filters = command.filters
    rows = GpuRows(g for g in fetch(session.client, filters) if keep(to_wire(g), filters))
    rows.filters = filters
    return session.show(rows, lambda found: finder_panel(session, found), finder_view)


def finder_panel(session: NotebookSession, rows: GpuRows) -> CatalogPanel:
    """The finder's panel: its Create button creates the pod of a row (remembered for when
    this kernel ends), its Fill fallback queues the row's line as the next cell."""
    from podbook.notebook.catalog.finder import filters_state
    from podbook.notebook.catalog.panel import CatalogPanel

    filters = rows.filters

    def create(gpu_id: str) -> Pod:
        client = session.client
        pod = client.pods.create(filters.create_request(gpu_id))
        session.created(pod, client)
        return pod

    def fill(line: str) -> None:
        if session.shell is not None:
            session.shell.set_next_input(line, replace=False)

    gpus = [panel_row(to_wire(g), filters) for g in rows]
    return CatalogPanel(gpus, filters_state(filters), create=create, fill=fill)


HANDLERS: dict[str, Handler] = {
    "gpus": find_gpus,
    "cpus": show_catalog,
    "datacenters": show_catalog,
}
