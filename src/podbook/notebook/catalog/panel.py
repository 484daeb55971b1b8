"""CatalogPanel: the GPU finder's sortable table (view: ``views/catalog.js``).

Not refreshed: the catalog is read once per ``%catalog gpus``. The view fills a new cell with
a row's ``command`` itself (the notebook front end owns the cells); it sends
``{"type": "run", "gpu": ID}`` to create the pod right away, and ``{"type": "fill", "gpu": ID}``
when it could not reach a notebook to fill (the panel then hands the line to its ``fill``
callback, which queues it with ``set_next_input``; front ends apply it after the next
execution).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import traitlets

from podbook.notebook.catalog.views import gpu_finder_view
from podbook.notebook.display import StaticView
from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, Snapshot, button_work, now_iso, run_in_worker
from podbook.notebook.panels.data import to_wire

if TYPE_CHECKING:
    from podbook.api.pods import Pod
    from podbook.notebook.panels.data import JsonDict


class CatalogPanel(Panel):
    """GPU types that passed the finder's filters, with create buttons per row.

    ``gpus`` are the view's rows (:func:`~podbook.notebook.catalog.finder.panel_row`),
    ``filters`` their trait form. ``create(gpu_id)`` creates a pod of that GPU type and
    returns it (``None``: the panel cannot create); ``fill(line)`` queues a row's
    ``%pod create`` line as the next cell."""

    needs: ClassVar[frozenset[str]] = frozenset()

    _esm = view_asset("catalog.js")
    _css = view_asset("podbook.css")

    gpus = traitlets.List(traitlets.Dict()).tag(sync=True)
    filters = traitlets.Dict().tag(sync=True)
    busy = traitlets.Unicode("").tag(sync=True)
    created = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        gpus: list[JsonDict],
        filters: JsonDict,
        create: Callable[[str], Pod] | None = None,
        fill: Callable[[str], None] | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(on_change=on_change)
        self._create_pod = create
        self._fill = fill
        self.gpus = gpus
        self.filters = filters
        self.updated = now_iso()
        self.on_msg(self._on_view_message)

    @property
    def final(self) -> bool:
        return True

    def _apply(self, snapshot: Snapshot) -> None:
        """Nothing to refresh: the panel shows one read of the catalog."""

    def command_for(self, gpu_id: str) -> str | None:
        """The ``%pod create`` line of a listed GPU type (``None`` when not listed)."""
        row = next((g for g in self.gpus if g.get("id") == gpu_id), None)
        return None if row is None else str(row["command"])

    # -- messages from the view ---------------------------------------------------------------

    def _on_view_message(self, _widget: object, content: object, _buffers: object) -> None:
        if not isinstance(content, dict):
            return
        gpu_id = str(content.get("gpu", ""))
        if content.get("type") == "run":
            self.request_create(gpu_id)
        elif content.get("type") == "fill":
            self.fill_next_cell(gpu_id)

    def _listed(self, gpu_id: str) -> str | None:
        """The GPU's line, or ``None`` with the error said when it is not in the table."""
        line = self.command_for(gpu_id)
        if line is None:
            self.error = f"{gpu_id!r} is not in this table; run %catalog gpus again."
        return line

    def fill_next_cell(self, gpu_id: str) -> None:
        """Queue the GPU's ``%pod create`` line as the next cell's input."""
        line = self._listed(gpu_id)
        if line is not None and self._fill is not None:
            self._fill(line)

    def request_create(self, gpu_id: str) -> None:
        """Create a pod with this GPU type on a worker thread; ``created`` names it."""
        line = self._listed(gpu_id)
        if line is None:
            return
        if self.busy:
            self.error = f"wait until the pod with {self.busy} is created."
            return
        create = self._create_pod
        if create is None:
            self.error = "this panel has no client; run %catalog gpus again."
            return
        self.busy = gpu_id
        self.error = ""
        run_in_worker(lambda: self._create(create, gpu_id, line))

    def _create(self, create: Callable[[str], Pod], gpu_id: str, line: str) -> None:
        from podbook.notebook.errors import describe_failure

        def created() -> None:
            pod = to_wire(create(gpu_id))
            self.created = {
                "id": pod.get("id"),
                "status": pod.get("status"),
                "gpu": gpu_id,
                "command": line,
            }

        button_work(self, created, "creating the pod", lambda e: describe_failure(e, "pod create"))

    # -- static forms -------------------------------------------------------------------------

    def _static(self) -> StaticView:
        return gpu_finder_view(self.gpus, self.filters.get("text", ""), self.created, self.error)

    def snapshot_text(self) -> str:
        return self._static().text

    def snapshot_html(self) -> str:
        return self._static().html
