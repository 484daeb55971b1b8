"""How pods and clusters are shown: their live panels (registered with the refresher) and
their widget-free forms (a pod's with its spend and its guard's last report), and the
result types of ``%pod list`` and ``%pod ssh``."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

from podbook.notebook.display import StaticView

if TYPE_CHECKING:
    from podbook.api.clusters import Cluster
    from podbook.api.pods import Pod
    from podbook.notebook.pods.cluster import ClusterPanel
    from podbook.notebook.pods.panel import PodPanel
    from podbook.notebook.pods.podlist import PodListPanel
    from podbook.notebook.session import NotebookSession


class PodList(list):
    """The result of ``%pod list``: a plain list of pods that displays as a live panel."""

    include_cluster_pods: bool = False


@dataclass(frozen=True)
class SshCommands:
    """The ready SSH commands of a pod (``None`` where not available now), and what to know."""

    pod_id: str
    proxy: str | None
    direct: str | None
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        pairs = (("proxy", self.proxy), ("direct", self.direct))
        lines = [f"{kind}: {cmd}" for kind, cmd in pairs if cmd]
        if not lines:
            lines = [f"No SSH command for {self.pod_id} yet."]
        return "\n".join([*lines, *(f"note: {note}" for note in self.notes)])


# ---------------------------------------------------------------------------- live panels


def pod_panel(session: NotebookSession, pod: Pod) -> PodPanel:
    """A live :class:`PodPanel` for ``pod``, registered with the refresher."""
    from podbook.notebook.pods.panel import PodPanel

    panel = PodPanel(pod, client=session.get_client, on_change=session.refresher.wake)
    book = getattr(session, "_remote_kernels", None)  # %%pod exec, %pod push... ran here
    if book is not None:
        panel.remote = book.remote_state(panel.pod_id)
    session.refresher.register(panel)
    return panel


def pod_list_panel(session: NotebookSession, pods: PodList) -> PodListPanel:
    """A live :class:`PodListPanel`."""
    from podbook.notebook.pods.podlist import PodListPanel

    panel = PodListPanel(pods, include_cluster_pods=pods.include_cluster_pods)
    session.refresher.register(panel)
    return panel


def cluster_panel(session: NotebookSession, cluster: Cluster) -> ClusterPanel:
    """A live :class:`ClusterPanel`, with the cluster's members."""
    from podbook.notebook.panels.data import records
    from podbook.notebook.pods.cluster import ClusterPanel

    members = records(session.client.clusters.pods(cluster.id), "pods")
    panel = ClusterPanel(cluster, members)
    session.refresher.register(panel)
    return panel


# ---------------------------------------------------------------------------- static forms


def pod_static(session: NotebookSession, pod: Pod) -> StaticView:
    """The static form of a pod (no widget), with its spend from the billing records and
    its guard's last report."""
    from podbook.notebook.billing.podspend import static_spend
    from podbook.notebook.panels.data import pod_state
    from podbook.notebook.pods.guardwatch import static_guard
    from podbook.notebook.pods.static import pod_html, pod_text

    state = pod_state(pod)
    spend = static_spend(session.client, state)
    guard = static_guard(session.client, state)
    return StaticView(
        pod_text(state, spend=spend, guard=guard), pod_html(state, spend=spend, guard=guard)
    )


def pod_list_static(pods: PodList) -> StaticView:
    """The static form of a list of pods (no widget)."""
    from podbook.notebook.panels.data import pod_state
    from podbook.notebook.pods.static import pod_list_html, pod_list_text

    states = [pod_state(p) for p in pods]
    return StaticView(pod_list_text(states), pod_list_html(states))


def cluster_static(cluster: Cluster) -> StaticView:
    """The static form of a cluster record (no widget, members not fetched)."""
    from podbook.notebook.panels.data import to_wire
    from podbook.notebook.pods.static import cluster_html, cluster_text

    record = to_wire(cluster)
    return StaticView(cluster_text(record, []), cluster_html(record, []))


def ssh_view(commands: SshCommands) -> StaticView:
    """The SSH commands as text and HTML."""
    from podbook.notebook.panels.snapshot import BOX_STYLE

    rows = [(k, c) for k, c in (("proxy", commands.proxy), ("direct", commands.direct)) if c]
    html = (
        "".join(f'<div data-ssh="{k}"><b>{k}</b>: <code>{escape(c)}</code></div>' for k, c in rows)
        or f"<div>No SSH command for {escape(commands.pod_id)} yet.</div>"
    )
    html += "".join(f"<div><i>note: {escape(note)}</i></div>" for note in commands.notes)
    return StaticView(str(commands), f'<div class="podbook-ssh" style="{BOX_STYLE}">{html}</div>')


def shown_pod(session: NotebookSession, pod: Any) -> Any:
    """Display ``pod`` in this cell as its live panel (its static form with panels off) and
    return it."""
    return session.show(
        pod, lambda item: pod_panel(session, item), lambda item: pod_static(session, item)
    )
