"""The kernel side of a pod panel's guard line: follow the guard's reports on the pod's log.

A guarded pod's panel starts a :class:`GuardWatch`: a daemon thread reading
``client.pods.logs(pod, source="container", follow=True)`` (which resumes a dropped stream
by itself) and handing each guard report (:func:`podbook.guard.parse_line`) to the panel as a
dict (:meth:`podbook.guard.GuardStatus.to_dict`). The view counts down from its
``deadline``; nothing is polled. The thread ends when the panel closes or the log ends (the
pod was terminated).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podbook.guard.state import READ_TAIL, parse_line
from podbook.notebook.pods.logfollow import StreamReader

Take = Callable[[dict[str, Any]], None]


class GuardWatch(StreamReader):
    """Follows one pod's guard reports for one panel (see the module docstring)."""

    thread_name = "podbook-guard"

    def __init__(self, pod_id: str, client: Callable[[], Any], take: Take) -> None:
        super().__init__(pod_id, client)
        self._take = take

    def _read(self) -> None:
        try:
            client = self._client()
            self._stream = client.pods.logs(
                self.pod_id, source="container", tail=READ_TAIL, follow=True
            )
            for line in self._stream:
                if self._stop.is_set():
                    return
                status = parse_line(line.line, ts=line.ts)
                if status is not None:
                    self._take(status.to_dict())
        except Exception:  # noqa: BLE001 - the panel keeps its last report; nothing to tell
            return
        finally:
            self._stream = None


EXTEND_BY = "30m"
"""What the panel's **Extend** button adds to the guard's deadline."""


class PanelGuard:
    """A pod panel's guard: the ``guard`` trait fed by a :class:`GuardWatch`, and the view's
    **Extend** / **Keep running** buttons (``{"type": "guard", "op": "extend" | "keep"}``),
    which write to the guard's control file over SSH on a worker thread."""

    def __init__(self, panel: Any) -> None:
        self.panel = panel
        self.watch = GuardWatch(panel.pod_id, lambda: panel.client, self._take)
        self.follow(panel.pod)

    def follow(self, pod: dict[str, Any]) -> None:
        """Start following when the pod is guarded and still exists; set the first state."""
        settings = pod.get("guardSettings")
        if not settings or pod.get("status") == "TERMINATED":
            self.watch.stop()
            return
        if not self.panel.guard:
            self.panel.guard = {"state": "unknown", "settings": settings,
                                "summary": f"guard: {settings['summary']}"}  # fmt: skip
        if self.panel.client is not None:
            self.watch.start()

    def _take(self, status: dict[str, Any]) -> None:
        with self.panel._lock:
            self.panel.guard = status

    def handle(self, content: dict[str, Any]) -> None:
        """A ``guard`` message from the view."""
        op = content.get("op")
        if op not in ("extend", "keep"):
            return
        panel = self.panel
        if not panel.pod.get("guardSettings"):
            panel.error = "this pod has no guard; create it with --idle-stop or --max-runtime."
            return
        if panel.status != "RUNNING":
            panel.error = f"the guard runs only while the pod is RUNNING (it is {panel.status})."
            return
        if panel.claim("extend" if op == "extend" else "keep running"):
            from podbook.notebook.panels.base import run_in_worker

            run_in_worker(lambda: self._send(op))

    def _send(self, op: str) -> None:
        from podbook.guard.control import extend, keep_running
        from podbook.notebook.panels.base import button_work

        panel = self.panel

        def send() -> None:
            if op == "extend":
                extend(panel.pod_id, EXTEND_BY, client=panel.client)
            else:
                keep_running(panel.pod_id, client=panel.client)

        button_work(panel, send, op, lambda err: str(err).splitlines()[0])


def static_guard(client: Any, pod: dict[str, Any]) -> dict[str, Any] | None:
    """The guard's last report of a pod (a ``pod_state`` dict), read once for a static form;
    None when the pod has no guard, is gone, or the log cannot be read."""
    from podbook.errors import PodbookError
    from podbook.guard.state import GuardStatus, latest

    if not pod.get("guardSettings") or pod.get("status") == "TERMINATED":
        return None
    try:
        lines = client.pods.logs(pod["id"], source="container", tail=READ_TAIL, idle=0.3)
        status = latest(lines)
    except PodbookError:
        return None
    if status is None:
        return None
    return GuardStatus.to_dict(status)
