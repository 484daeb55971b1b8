"""PodListPanel: the account's pods in a live table (view: ``views/podlist.js``), highest price
per hour first, each marked with its guard, and the total of those running."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import traitlets

from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, Snapshot
from podbook.notebook.panels.data import pod_state
from podbook.notebook.pods.podcosts import list_rows, list_summary
from podbook.notebook.pods.static import pod_list_html, pod_list_text


class PodListPanel(Panel):
    """All pods (``include_cluster_pods`` adds cluster members), refreshed live."""

    _esm = view_asset("podlist.js")
    _css = view_asset("podbook.css")

    pods = traitlets.List(traitlets.Dict()).tag(sync=True)
    """The pods (masked wire dicts plus ``guardText``), highest price per hour first."""
    summary = traitlets.Dict().tag(sync=True)
    """``running``, ``perHour`` (USD) and ``unguarded``: see :func:`.podcosts.list_summary`."""

    def __init__(
        self,
        pods: Iterable[Any],
        include_cluster_pods: bool = False,
        client: Any = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(client=client, on_change=on_change)
        self.include_cluster_pods = include_cluster_pods
        self._show([pod_state(p) for p in pods])
        self._touched_locally()

    def _show(self, pods: list[dict[str, Any]]) -> None:
        rows = list_rows(pods)
        with self.hold_sync():
            self.pods = rows
            self.summary = list_summary(rows)

    def _apply(self, snapshot: Snapshot) -> None:
        self._show(
            [
                pod
                for pod in snapshot.pods.values()
                if self.include_cluster_pods or not pod.get("cluster")
            ]
        )

    def snapshot_text(self) -> str:
        return pod_list_text(self.pods, self.error)

    def snapshot_html(self) -> str:
        return pod_list_html(self.pods, self.error)
