"""The live billing panel: ``views/billing.js`` draws ``chart`` (see :mod:`.chart`).

Billing is not polled: the view's Refresh button asks the kernel to fetch again (on the
panels' worker pool, never the kernel's thread). The static forms are the same chart drawn
in Python (:mod:`.svg`), so a saved notebook shows it without a kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from podbook.notebook.billing import svg
from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import now_iso, run_in_worker


class BillingPanel(anywidget.AnyWidget):
    """A stacked bar chart of spend per bucket, with a totals table beside it."""

    _esm = view_asset("billing.js")
    _css = view_asset("podbook.css")

    chart = traitlets.Dict({}).tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    loading = traitlets.Bool(False).tag(sync=True)
    updated = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self, chart: dict[str, Any], fetch: Callable[[], dict[str, Any]] | None = None
    ) -> None:
        super().__init__(chart=chart, updated=now_iso())
        self._fetch = fetch
        self.on_msg(self._on_message)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "refresh":
            run_in_worker(self.reload)

    def reload(self) -> None:
        """Fetch the chart again (errors are shown in the panel, one line)."""
        if self._fetch is None:
            return
        from podbook.notebook.errors import describe_failure

        self.loading = True
        try:
            self.chart = self._fetch()
            self.error = ""
            self.updated = now_iso()
        except Exception as err:  # noqa: BLE001 - shown to the user, one line
            self.error = describe_failure(err, "billing")
        finally:
            self.loading = False

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if bundle is not None else ({}, {})
        data = {
            **data,
            "text/plain": svg.render_text(self.chart),
            "text/html": svg.render_html(self.chart),
        }
        return data, metadata

    def __repr__(self) -> str:
        return svg.render_text(self.chart).splitlines()[0]
