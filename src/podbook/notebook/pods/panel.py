"""PodPanel: one pod, live, with its action buttons (view: ``views/pod.js``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import traitlets

from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, Snapshot, button_work, run_in_worker
from podbook.notebook.panels.data import FINAL_POD_STATUSES, pod_state, terminated
from podbook.notebook.pods.guardwatch import PanelGuard
from podbook.notebook.pods.logfollow import LogFollower
from podbook.notebook.pods.readyfeed import FEED as READY
from podbook.notebook.pods.spendfeed import FEED
from podbook.notebook.pods.static import pod_html, pod_text

ACTIONS = ("start", "stop", "restart", "terminate")


class PodPanel(Panel):
    """A live pod: status, shape, SSH, ports, utilization, and buttons for its ``actions``.

    The view sends ``{"type": "action", "action": NAME}``; the client call runs on a worker
    thread, ``busy`` names the action meanwhile, and an API error lands in ``error``.
    """

    _esm = view_asset("pod.js")
    _css = view_asset("podbook.css")

    pod = traitlets.Dict().tag(sync=True)
    busy = traitlets.Unicode("").tag(sync=True)
    tab = traitlets.Unicode("overview").tag(sync=True)
    remote = traitlets.Dict().tag(sync=True)
    """What the notebook does on the pod: ``kernel`` (its state), ``attached``, ``transfer``
    (the last one: ``title``, ``state``, ``summary``); see ``notebook/remote/kernels.py``."""
    guard = traitlets.Dict().tag(sync=True)
    """The pod guard's last report (:meth:`podbook.guard.GuardStatus.to_dict`: ``state``,
    ``deadline``, ``busy``, ``summary``...); empty for an unguarded pod (``guardwatch``)."""
    services = traitlets.Dict().tag(sync=True)
    """Which of the RUNNING pod's services answer: ``{"ssh"|"jupyter"|"8000/http": {"state":
    "ready"|"listening"|"waiting", "note"}}``; empty while it is not RUNNING (``readyfeed``)."""
    spend = traitlets.Dict().tag(sync=True)
    """The pod's spend from the billing records: ``total`` and ``per_hour`` (USD), ``as_of``
    (ISO time the records reach), ``lagging``; read at most every 30 s (``spendfeed``)."""

    def __init__(
        self, pod: Any, client: Any = None, on_change: Callable[[], None] | None = None
    ) -> None:
        super().__init__(client=client, on_change=on_change)
        self.pod = pod_state(pod)
        self._touched_locally()
        self.logs = LogFollower(self.pod_id, lambda: self.client, self.send)
        self.guard_feed = PanelGuard(self)
        self.on_msg(self._on_view_message)

    @property
    def pod_id(self) -> str:
        """The pod's ID."""
        return str(self.pod.get("id", ""))

    @property
    def status(self) -> str:
        """The pod's current status."""
        return str(self.pod.get("status", ""))

    @property
    def final(self) -> bool:
        return self.status in FINAL_POD_STATUSES

    def watched_pod_ids(self) -> set[str]:
        return {self.pod_id}

    def _apply(self, snapshot: Snapshot) -> None:
        if self.pod_id in snapshot.pods:
            self.pod = snapshot.pods[self.pod_id]
        elif self.pod_id in snapshot.gone_pods:
            self.pod = terminated(self.pod)
        self.guard_feed.follow(self.pod)
        READY.request(self.pod, self._take_services)
        FEED.request(self.client, self.pod, self._take_spend)

    def _take_services(self, services: dict[str, Any]) -> None:
        if services != self.services:
            with self._lock:
                self.services = services

    def _take_spend(self, spend: dict[str, Any]) -> None:
        with self._lock:
            self.spend = spend

    # -- actions ------------------------------------------------------------------------------

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "action":
            self.request_action(str(content.get("action", "")))
        elif isinstance(content, dict) and content.get("type") == "logs":
            self.logs.handle(content)
        elif isinstance(content, dict) and content.get("type") == "guard":
            self.guard_feed.handle(content)

    def open_logs(self, *, tail: int | None = None, source: str | None = None) -> None:
        """Show the Logs tab first (``%pod logs ID --follow``): the view follows on render."""
        if tail is not None:
            self.logs.backfill = tail
        self.logs.source = source
        self.tab = "logs"

    def close(self) -> None:
        """Stop following the log and the guard, then close the widget."""
        self.logs.stop()
        self.guard_feed.watch.stop()
        super().close()

    def request_action(self, action: str) -> None:
        """Run ``action`` on a worker thread; refuse what ``pod.actions`` does not allow."""
        allowed = list(self.pod.get("actions") or [])
        if action not in ACTIONS or action not in allowed:
            choices = ", ".join(allowed) or "none"
            self.error = (
                f"{action!r} is not possible while the pod is {self.status}; allowed: {choices}."
            )
            return
        if self.claim(action):
            run_in_worker(lambda: self._run_action(action))

    def claim(self, busy: str) -> bool:
        """Mark the panel ``busy`` as a button's work starts; False, with the reason in
        ``error``, while other work runs or without a client."""
        if self.busy:
            self.error = f"wait until {self.busy} has finished."
            return False
        if self.client is None:
            self.error = "this panel has no client; show the pod with %pod show ID."
            return False
        self.busy = busy
        self.error = ""
        return True

    def _run_action(self, action: str) -> None:
        from podbook.notebook.errors import describe_failure

        button_work(self, lambda: self._act(action), action, describe_failure)

    def _act(self, action: str) -> None:
        from podbook import errors

        try:
            result = getattr(self.client.pods, action)(self.pod_id)
            if action == "terminate":
                fresh: dict[str, Any] = terminated(self.pod)
            elif hasattr(result, "model_dump") or isinstance(result, dict):
                fresh = pod_state(result)
            else:
                fresh = pod_state(self.client.pods.get(self.pod_id))
            with self._lock:
                self.pod = fresh
                self._touched_locally()
        except errors.NotFound:
            with self._lock:
                self.pod = terminated(self.pod)
                self.error = "the pod no longer exists."
                self._touched_locally()

    # -- static forms -----------------------------------------------------------------------

    def snapshot_text(self) -> str:
        return pod_text(self.pod, self.error, self.spend, self.guard)

    def snapshot_html(self) -> str:
        return pod_html(self.pod, self.error, self.spend, self.guard)
