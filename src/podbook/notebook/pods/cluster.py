"""ClusterPanel: a cluster and its member pods (view: ``views/cluster.js``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import traitlets

from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, Snapshot
from podbook.notebook.panels.data import pod_state, terminated, to_wire
from podbook.notebook.pods.static import cluster_html, cluster_text


class ClusterPanel(Panel):
    """A cluster's shape, primary SSH endpoint and members (rank, role, IP, status)."""

    needs: ClassVar[frozenset[str]] = frozenset({"pods", "clusters"})

    _esm = view_asset("cluster.js")
    _css = view_asset("podbook.css")

    cluster = traitlets.Dict().tag(sync=True)
    members = traitlets.List(traitlets.Dict()).tag(sync=True)

    def __init__(
        self,
        cluster: Any,
        members: Iterable[Any] = (),
        client: Any = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(client=client, on_change=on_change)
        self.cluster = to_wire(cluster)
        self.members = [pod_state(p) for p in members]
        self._gone = False
        self._touched_locally()

    @property
    def cluster_id(self) -> str:
        """The cluster's ID."""
        return str(self.cluster.get("id", ""))

    @property
    def final(self) -> bool:
        return self._gone

    def watched_cluster_ids(self) -> set[str]:
        return {self.cluster_id}

    def _apply(self, snapshot: Snapshot) -> None:
        if self.cluster_id in snapshot.gone_clusters:
            self._mark_deleted()
            return
        if snapshot.clusters is not None and self.cluster_id in snapshot.clusters:
            self.cluster = snapshot.clusters[self.cluster_id]
        self.members = [
            pod
            for pod in snapshot.pods.values()
            if (pod.get("cluster") or {}).get("id") == self.cluster_id
        ]

    def _mark_deleted(self) -> None:
        """The cluster is gone (404): its members are terminated, nothing of it is reachable."""
        self._gone = True
        self.cluster = {k: v for k, v in self.cluster.items() if k not in ("primary", "pods")}
        self.members = [terminated(pod) for pod in self.members]
        self.error = "the cluster was deleted; its member pods are terminated."

    def snapshot_text(self) -> str:
        return cluster_text(self.cluster, self.members, self.error)

    def snapshot_html(self) -> str:
        return cluster_html(self.cluster, self.members, self.error)
