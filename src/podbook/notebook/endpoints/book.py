"""The jobs part of a notebook session: one panel per job, served handlers, display hooks.

A job's stream is drained by whoever reads it, so a session keeps **one** JobPanel per job:
showing the same job again (``job`` as a later cell's last expression, ``%job status``)
displays the same widget again (a new view, which asks for what it missed) instead of
starting a second reader. At most :data:`MAX_PANELS` panels are remembered.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from podbook.notebook.display import PanelDisplay, StaticView
from podbook.notebook.session import PerSession

if TYPE_CHECKING:
    from podbook.notebook.session import NotebookSession

MAX_PANELS = 64


@dataclass
class EndpointHealth:
    """``%endpoint health ID``: the endpoint's ID, its ``/health`` body, its workers listing
    (``GET /v2/serverless/{id}/workers``, or the exception its read raised; None when not
    read) and its worker ``timeline``.

    ``.jobs`` and ``.workers`` (and any other attribute) are those of the ``/health`` body.
    ``timeline`` (a :class:`~podbook.notebook.endpoints.timeline.WorkerTimeline`) starts with this
    reading; the panel that shows it keeps adding a sample at each refresh, so
    ``report.timeline.summary()`` and ``.live_workers()`` are current while the panel lives.
    """

    endpoint_id: str
    health: Any
    listing: Any = None
    timeline: Any = None

    def __post_init__(self) -> None:
        if self.timeline is None:
            import time

            from podbook.notebook.endpoints.records import to_plain
            from podbook.notebook.endpoints.timeline import WorkerTimeline

            self.timeline = WorkerTimeline()
            listing = None if isinstance(self.listing, BaseException) else self.listing
            self.timeline.add(time.time(), to_plain(self.health) or {}, to_plain(listing))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("endpoint_id", "health", "listing", "timeline"):
            raise AttributeError(name)
        return getattr(self.health, name)

    def __repr__(self) -> str:
        from podbook.notebook.endpoints.records import to_plain
        from podbook.notebook.endpoints.static import health_text

        body = to_plain(self.health) or {}
        return health_text(self.endpoint_id, body, timeline=self.timeline.summary())


JobDisplay = PanelDisplay
"""Displays a JobPanel through :meth:`JobPanel.display` (with a display id)."""


class JobBook:
    """Job panels and served handlers of one :class:`~podbook.notebook.session.NotebookSession`."""

    def __init__(self, session: NotebookSession) -> None:
        self.session = session
        self._panels: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()
        self.served: list[Any] = []

    # -- panels -----------------------------------------------------------------------------

    def job_panel(self, job: Any, follow: str = "poll") -> Any:
        """The live panel of ``job`` (a client ``Job``): the one already shown (as it is), or
        a new one that follows the job by ``follow`` (``"stream"`` or ``"poll"``)."""
        from podbook.notebook.endpoints.panel import JobPanel

        key = (job.endpoint_id, job.id)
        with self._lock:
            panel = self._panels.get(key)
            if panel is not None and not panel.closed:
                self._panels.move_to_end(key)
                return panel  # already following its job
            record = job.record if job.record is not None else {"id": job.id, "status": ""}
            panel = JobPanel(
                record,
                job.endpoint_id,
                client=self.session.get_client,
                register=self.session.refresher.register,
                on_change=self.session.refresher.wake,
            )
            self._panels[key] = panel
            while len(self._panels) > MAX_PANELS:
                _, old = self._panels.popitem(last=False)
                old.stop()
        return panel.follow(follow)

    def known_panel(self, endpoint_id: str, job_id: str) -> Any:
        """The panel already shown for this job, if any (and not closed)."""
        with self._lock:
            panel = self._panels.get((endpoint_id, job_id))
        return panel if panel is not None and not panel.closed else None

    def job_view(self, job: Any) -> JobDisplay:
        """The view of a ``Job``: its panel, displayed under a display id of its own."""
        return JobDisplay(self.job_panel(job, follow="poll"))

    @staticmethod
    def job_static(job: Any) -> StaticView:
        """The static form of a ``Job`` from its latest record (no widget, no call)."""
        from podbook.notebook.endpoints.records import job_state
        from podbook.notebook.endpoints.static import job_html, job_text

        record = job.record if job.record is not None else {"id": job.id}
        state = job_state(record, job.endpoint_id)
        return StaticView(job_text(state, [], 0, {}), job_html(state, [], 0, {}))

    def health_panel(self, report: EndpointHealth) -> Any:
        """A live :class:`HealthPanel`, refreshed by the session's refresher thread."""
        from podbook.notebook.endpoints.health import HealthPanel

        panel = HealthPanel(
            report.endpoint_id, report.health, report.listing, history=report.timeline
        )
        self.session.refresher.register(panel)
        return panel

    @staticmethod
    def health_static(report: EndpointHealth) -> StaticView:
        """The static form of an endpoint's health."""
        from podbook.notebook.endpoints.records import to_plain
        from podbook.notebook.endpoints.static import health_html, health_text

        body = to_plain(report.health) or {}
        summary = report.timeline.summary()
        return StaticView(
            health_text(report.endpoint_id, body, timeline=summary),
            health_html(report.endpoint_id, body, timeline=summary),
        )

    # -- served handlers --------------------------------------------------------------------

    def keep_served(self, handle: Any) -> None:
        """Remember a handle of ``podbook.serve`` so that unloading the extension stops it."""
        self.served.append(handle)

    def close(self) -> None:
        """Stop every stream pump and every served handler of this session."""
        with self._lock:
            panels = list(self._panels.values())
            self._panels.clear()
        for panel in panels:
            panel.stop()
        served, self.served = self.served, []
        for handle in served:
            stop = getattr(handle, "stop", None)
            if callable(stop):
                with contextlib.suppress(Exception):  # closing goes on for the others
                    stop()


_books: PerSession[JobBook] = PerSession(JobBook)


def book_for(session: NotebookSession) -> JobBook:
    """The :class:`JobBook` of a notebook session (created on first use)."""
    return _books.of(session)


def close_book(session: NotebookSession) -> None:
    """Stop the jobs part of ``session`` (called when the extension unloads)."""
    _books.close(session)
