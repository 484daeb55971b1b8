"""CatalogPanel: the GPU finder's sortable table (view: ``views/catalog.js``).

Not refreshed: the catalog is read once per ``%catalog gpus``. The view fills a new cell with
a row's ``command`` itself (the notebook front end owns the cells); it sends
``{"type": "run", "gpu": ID}`` to create the pod right away, and ``{"type": "fill", "gpu": ID}``
when it could not reach a notebook to fill (the kernel then queues the line with
``set_next_input``, which front ends apply after the next execution).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import traitlets

from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, Snapshot, now_iso, run_in_worker
from podbook.notebook.panels.data import to_wire


class CatalogPanel(Panel):
    """GPU types that passed the finder's filters, with create buttons per row.

    ``on_created(pod, client, on_exit)`` hears of each pod a button created (the session
    remembers it for when the kernel ends)."""

    needs: ClassVar[frozenset[str]] = frozenset()

    _esm = view_asset("catalog.js")
    _css = view_asset("podbook.css")

    gpus = traitlets.List(traitlets.Dict()).tag(sync=True)
    filters = traitlets.Dict().tag(sync=True)
    busy = traitlets.Unicode("").tag(sync=True)
    created = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        gpus: Iterable[Any],
        filters: Any,
        client: Any = None,
        shell: Any = None,
        on_change: Callable[[], None] | None = None,
        on_created: Callable[[Any, Any, str | None], None] | None = None,
    ) -> None:
        from podbook.notebook.gpufinder import filters_state, panel_row

        super().__init__(client=client, on_change=on_change)
        self._filters = filters
        self._shell = shell
        self._on_created = on_created
        self.gpus = [panel_row(to_wire(g), filters) for g in gpus]
        self.filters = filters_state(filters)
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

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        gpu_id = str(content.get("gpu", ""))
        if content.get("type") == "run":
            self.request_create(gpu_id)
        elif content.get("type") == "fill":
            self.fill_next_cell(gpu_id)

    def fill_next_cell(self, gpu_id: str) -> None:
        """Queue the GPU's ``%pod create`` line as the next cell's input."""
        line = self.command_for(gpu_id)
        if line is None:
            self.error = f"{gpu_id!r} is not in this table; run %catalog gpus again."
            return
        if self._shell is not None:
            self._shell.set_next_input(line, replace=False)

    def request_create(self, gpu_id: str) -> None:
        """Create a pod with this GPU type on a worker thread; ``created`` names it."""
        line = self.command_for(gpu_id)
        if line is None:
            self.error = f"{gpu_id!r} is not in this table; run %catalog gpus again."
            return
        if self.busy:
            self.error = f"wait until the pod with {self.busy} is created."
            return
        if self.client is None:
            self.error = "this panel has no client; run %catalog gpus again."
            return
        self.busy = gpu_id
        self.error = ""
        run_in_worker(lambda: self._create(gpu_id, line))

    def _create(self, gpu_id: str, line: str) -> None:
        from podbook import errors
        from podbook.notebook import parsing
        from podbook.notebook.commands import build_pod_subcommands
        from podbook.notebook.errors import describe_failure

        try:
            _, command = parsing.parse_line(
                "pod", line.removeprefix("%pod "), build_pod_subcommands()
            )
            client = self.client
            created = client.pods.create(command.body, **command.guard)
            if self._on_created is not None:
                self._on_created(created, client, command.on_exit)
            pod = to_wire(created)
            self.created = {
                "id": pod.get("id"),
                "status": pod.get("status"),
                "gpu": gpu_id,
                "command": line,
            }
        except errors.PodbookError as err:
            self.error = describe_failure(err, "pod create")
        except Exception as err:  # noqa: BLE001 - a button must never kill the worker silently
            self.error = f"creating the pod failed: {type(err).__name__}: {err}"
        finally:
            self.busy = ""
            self._changed()

    # -- static forms -------------------------------------------------------------------------

    def _static(self) -> Any:
        from podbook.notebook.catalog import gpu_finder_view

        return gpu_finder_view(self.gpus, self.filters.get("text", ""), self.created, self.error)

    def snapshot_text(self) -> str:
        return self._static().text

    def snapshot_html(self) -> str:
        return self._static().html
