"""The notebook session: one shared client, one refresher, and how results are shown."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from podbook.notebook.display import Presenter, StaticView


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


def _resend_settled_panels(*_: Any) -> None:
    """``post_run_cell``: see :func:`podbook.notebook.panels.base.resend_settled_panels` (no
    panel exists before its module is imported, so loading the extension stays light)."""
    base = sys.modules.get("podbook.notebook.panels.base")
    if base is not None:
        base.resend_settled_panels()


class NotebookSession:
    """State shared by the magics of one IPython shell.

    ``interval``/``max_interval`` return the configured refresh pauses (seconds);
    ``show_panels`` says whether magics display their panels; ``on_exit`` what happens to
    the pods this kernel created when it ends (:attr:`exit_watch`).
    """

    def __init__(
        self,
        shell: Any,
        interval: Callable[[], float],
        max_interval: Callable[[], float],
        show_panels: Callable[[], bool],
        on_exit: Callable[[], str] = lambda: "warn",
    ) -> None:
        from podbook.notebook.kernel_exit.watch import ExitWatch
        from podbook.notebook.refresher import Refresher

        self.shell = shell
        self.presenter = Presenter(shell)
        if shell is not None:
            shell.events.register("post_run_cell", _resend_settled_panels)
        self.refresher = Refresher(self.get_client, interval, max_interval)
        self._show_panels = show_panels
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._closers: list[Callable[[], None]] = []
        self._runtime_told = False
        self.exit_watch = ExitWatch(shell, on_exit)
        self.on_close(self.exit_watch.close)

    # -- client -------------------------------------------------------------------------------

    def get_client(self) -> Any:
        """The shared :class:`podbook.Client`, created (and the emulator started) on first use."""
        with self._client_lock:
            if self._client is None:
                from podbook.client import Client

                self._client = Client()
            return self._client

    @property
    def client(self) -> Any:
        """Shortcut for :meth:`get_client`."""
        return self.get_client()

    def created(self, pod: Any, client: Any, on_exit: str | None = None) -> None:
        """Remember that this kernel created ``pod`` through ``client`` (``on_exit``: what
        to do with it when the kernel ends, instead of ``PodMagics.on_exit``)."""
        self.exit_watch.track(pod, client.settings, on_exit)

    def runtime_note(self) -> str | None:
        """Once per kernel: the line saying the emulator runs pods without a sandbox (the
        process runtime, where bubblewrap cannot work), else None (never asked of the
        service itself)."""
        if self._runtime_told:
            return None
        self._runtime_told = True
        settings = self.client.settings
        if settings.is_cloud:
            return None
        from podbook.client.local import emulator_pods, no_sandbox_line

        pods = emulator_pods(settings.rest_url)
        if pods.get("runtime") != "local" or pods.get("sandbox") != "none":
            return None
        why = pods.get("sandboxNote") or "--sandbox none"
        return f"podbook: the emulator's {no_sandbox_line(why)}"

    def reset_client(self) -> None:
        """Forget the client (the next call re-reads the configuration)."""
        with self._client_lock:
            client, self._client = self._client, None
        close = getattr(client, "close", None)
        if callable(close):
            close()

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the session closes (``%unload_ext podbook``)."""
        self._closers.append(callback)

    def close(self) -> None:
        """Run the ``on_close`` callbacks, stop the refresher, unhook the display, close the
        client."""
        closers, self._closers = self._closers, []
        for callback in closers:
            callback()
        self.refresher.stop()
        self.presenter.close()
        if self.shell is not None:
            with contextlib.suppress(ValueError):
                self.shell.events.unregister("post_run_cell", _resend_settled_panels)
        self.reset_client()

    # -- panels and views ---------------------------------------------------------------------

    def panels_on(self) -> bool:
        """Whether magics display live panels now (``PodMagics.show_panels``)."""
        return bool(self._show_panels())

    def pod_panel(self, pod: Any) -> Any:
        """A live :class:`PodPanel` for ``pod``, registered with the refresher."""
        from podbook.notebook.panels import PodPanel

        panel = PodPanel(pod, client=self.get_client, on_change=self.refresher.wake)
        book = getattr(self, "_remote_kernels", None)  # %%pod exec, %pod push... ran here
        if book is not None:
            panel.remote = book.remote_state(panel.pod_id)
        self.refresher.register(panel)
        return panel

    def pod_list_panel(self, pods: PodList) -> Any:
        """A live :class:`PodListPanel`."""
        from podbook.notebook.panels import PodListPanel

        panel = PodListPanel(pods, include_cluster_pods=pods.include_cluster_pods)
        self.refresher.register(panel)
        return panel

    def cluster_panel(self, cluster: Any, members: list[Any] | None = None) -> Any:
        """A live :class:`ClusterPanel` (members fetched when not given)."""
        from podbook.notebook.panels import ClusterPanel
        from podbook.notebook.panels.data import records

        if members is None:
            cluster_id = getattr(cluster, "id", None) or cluster["id"]
            members = records(self.client.clusters.pods(cluster_id), "pods")
        panel = ClusterPanel(cluster, members)
        self.refresher.register(panel)
        return panel

    @staticmethod
    def ssh_view(commands: SshCommands) -> StaticView:
        """The SSH commands as text and HTML."""
        from html import escape

        from podbook.notebook.panels.snapshot import BOX_STYLE

        rows = [(k, c) for k, c in (("proxy", commands.proxy), ("direct", commands.direct)) if c]
        html = (
            "".join(
                f'<div data-ssh="{k}"><b>{k}</b>: <code>{escape(c)}</code></div>' for k, c in rows
            )
            or f"<div>No SSH command for {escape(commands.pod_id)} yet.</div>"
        )
        html += "".join(f"<div><i>note: {escape(note)}</i></div>" for note in commands.notes)
        return StaticView(
            str(commands), f'<div class="podbook-ssh" style="{BOX_STYLE}">{html}</div>'
        )

    def pod_static(self, pod: Any) -> StaticView:
        """The static form of a pod (no widget), with its spend from the billing records and
        its guard's last report."""
        from podbook.notebook.billing.podspend import static_spend
        from podbook.notebook.panels.data import pod_state
        from podbook.notebook.panels.guardwatch import static_guard
        from podbook.notebook.panels.snapshot import pod_html, pod_text

        state = pod_state(pod)
        spend = static_spend(self.client, state)
        guard = static_guard(self.client, state)
        return StaticView(
            pod_text(state, spend=spend, guard=guard), pod_html(state, spend=spend, guard=guard)
        )

    @staticmethod
    def pod_list_static(pods: PodList) -> StaticView:
        """The static form of a list of pods (no widget)."""
        from podbook.notebook.panels.data import pod_state
        from podbook.notebook.panels.snapshot import pod_list_html, pod_list_text

        states = [pod_state(p) for p in pods]
        return StaticView(pod_list_text(states), pod_list_html(states))

    @staticmethod
    def cluster_static(cluster: Any) -> StaticView:
        """The static form of a cluster record (no widget, members not fetched)."""
        from podbook.notebook.panels.data import to_wire
        from podbook.notebook.panels.snapshot import cluster_html, cluster_text

        record = to_wire(cluster)
        return StaticView(cluster_text(record, []), cluster_html(record, []))

    def show(
        self,
        obj: Any,
        live: Callable[[Any], Any],
        static: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Display ``obj`` once in this cell and return it.

        ``live`` makes its panel; ``static`` its widget-free form, used when
        ``PodMagics.show_panels`` is off and the object is displayed anyway (as a cell's
        last expression, say). Objects of the same type shown in later cells go the same way.
        """
        static = static or live

        def view(item: Any) -> Any:
            return live(item) if self._show_panels() else static(item)

        self.presenter.hook(type(obj), view)
        if self._show_panels():
            self.presenter.present(obj, live(obj))
        return obj
