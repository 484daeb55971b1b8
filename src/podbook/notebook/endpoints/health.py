"""HealthPanel: an endpoint's job and worker counts, kept current, and its worker timeline
(view: ``views/health.js``).

Traits: ``endpointId``, ``health`` (the ``/health`` body: ``{"jobs": {completed, failed,
inProgress, inQueue, retried}, "workers": {idle, running, ...}}``), ``timeline`` (the worker
timeline of the last minutes: :meth:`~podbook.notebook.endpoints.timeline.WorkerTimeline.to_wire`,
plus a ``note`` when the workers listing cannot be read), ``error``, ``connection``,
``updated``. The session's one refresher thread reads ``/health`` and the REST workers
listing (``GET /v2/serverless/{id}/workers``) each tick (once per endpoint, however many
panels show it) until the panel is closed; each reading is a sample of the timeline. A key
that may not list workers (401/403) stops the listing: the counts go on, the lanes say why.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import traitlets

from podbook.notebook.endpoints.polling import HealthReading
from podbook.notebook.endpoints.records import to_plain
from podbook.notebook.endpoints.static import health_html, health_text
from podbook.notebook.endpoints.timeline import WorkerTimeline, timeline_summary
from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, Snapshot, now_iso


class HealthPanel(Panel):
    """One endpoint's health and worker timeline, refreshed by the refresher thread."""

    _esm = view_asset("health.js")
    _css = view_asset("podbook.css")
    needs: ClassVar[frozenset[str]] = frozenset()

    endpointId = traitlets.Unicode("").tag(sync=True)  # noqa: N815 - the trait contract's name
    health = traitlets.Dict().tag(sync=True)
    timeline = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        endpoint_id: str,
        health: Any = None,
        workers: Any = None,
        history: WorkerTimeline | None = None,
    ) -> None:
        """``health`` and ``workers`` (the workers listing, or the exception its read raised)
        are a first reading, when the magic made one; ``history`` a timeline to go on with
        (one that already holds that reading), else a new one."""
        super().__init__()
        self.endpointId = endpoint_id
        self.history = history if history is not None else WorkerTimeline()
        """The samples behind ``timeline`` (a refresh adds one)."""
        self._workers_note = ""
        if health is not None:
            reading = HealthReading(health, workers, time.time())
            self._take(reading, sample=history is None)

    def apply_snapshot(self, snapshot: Snapshot) -> None:
        """Pod snapshots do not concern an endpoint; see :meth:`apply_queue`."""

    def queue_key(self) -> tuple[str, ...]:
        """The refresher reads ``/health`` of this endpoint every tick, and its workers
        listing unless the key may not read it."""
        if self._workers_note:
            return ("health", self.endpointId)
        return ("health", self.endpointId, "workers")

    def apply_queue(self, result: Any) -> None:
        """Take the refresher's reading (a :class:`~podbook.notebook.endpoints.polling.
        HealthReading`, a ``/health`` body, or the exception the ``/health`` read raised)."""
        from podbook import errors
        from podbook.notebook.endpoints.errors import describe_job_failure

        with self.hold_sync():
            if isinstance(result, errors.NotFound):
                self.error = describe_job_failure(result, "endpoint health")
            elif isinstance(result, BaseException):
                self.connection = "reconnecting"
            else:
                if not isinstance(result, HealthReading):
                    result = HealthReading(result, None, time.time())
                self._take(result)
                self.error = ""
                self.connection = "ok"

    def _take(self, reading: HealthReading, sample: bool = True) -> None:
        """One reading into ``health``, the history (unless ``sample`` is False: it holds
        the reading already) and ``timeline``."""
        from podbook import errors

        body = to_plain(reading.health) or {}
        workers = reading.workers
        if isinstance(workers, (errors.Unauthorized, errors.Forbidden)):
            self._workers_note = (str(workers).splitlines() or [type(workers).__name__])[0]
        workers = None if isinstance(workers, BaseException) else to_plain(workers)
        if sample:
            self.history.add(reading.at, body, workers)
        self.health = body
        self.timeline = self._timeline_wire()
        self.updated = now_iso()

    def _timeline_wire(self) -> dict[str, Any]:
        wire = self.history.to_wire()
        if self._workers_note:
            wire["note"] = f"worker lanes unavailable: {self._workers_note}"
        return wire

    def timeline_summary(self) -> str:
        """The worker timeline in one line (the static forms show it)."""
        return timeline_summary(self._timeline_wire())

    def snapshot_text(self) -> str:
        return health_text(self.endpointId, self.health, self.error, self.timeline_summary())

    def snapshot_html(self) -> str:
        return health_html(self.endpointId, self.health, self.error, self.timeline_summary())
