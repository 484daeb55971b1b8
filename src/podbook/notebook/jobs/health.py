"""HealthPanel: an endpoint's job and worker counts, kept current (view: ``views/health.js``).

Traits: ``endpointId``, ``health`` (the ``/health`` body: ``{"jobs": {completed, failed,
inProgress, inQueue, retried}, "workers": {idle, running}}``), ``error``, ``connection``,
``updated``. The session's one refresher thread reads ``/health`` each tick (one call per
endpoint, however many panels show it) until the panel is closed.
"""

from __future__ import annotations

from typing import Any, ClassVar

import traitlets

from podbook.notebook.jobs.records import to_plain
from podbook.notebook.jobs.static import health_html, health_text
from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, Snapshot, now_iso


class HealthPanel(Panel):
    """One endpoint's health, refreshed by the refresher thread."""

    _esm = view_asset("health.js")
    _css = view_asset("podbook.css")
    needs: ClassVar[frozenset[str]] = frozenset()

    endpointId = traitlets.Unicode("").tag(sync=True)  # noqa: N815 - the trait contract's name
    health = traitlets.Dict().tag(sync=True)

    def __init__(self, endpoint_id: str, health: Any = None) -> None:
        super().__init__()
        self.endpointId = endpoint_id
        if health is not None:
            self.health = to_plain(health) or {}
            self.updated = now_iso()

    def apply_snapshot(self, snapshot: Snapshot) -> None:
        """Pod snapshots do not concern an endpoint; see :meth:`apply_queue`."""

    def queue_key(self) -> tuple[str, ...]:
        """The refresher reads ``/health`` of this endpoint every tick."""
        return ("health", self.endpointId)

    def apply_queue(self, result: Any) -> None:
        """Take the refresher's ``/health`` answer (a body, or the exception it raised)."""
        from podbook import errors
        from podbook.notebook.jobs.errors import describe_job_failure

        with self.hold_sync():
            if isinstance(result, errors.NotFound):
                self.error = describe_job_failure(result, "endpoint health")
            elif isinstance(result, BaseException):
                self.connection = "reconnecting"
            else:
                self.health = to_plain(result) or {}
                self.error = ""
                self.connection = "ok"
                self.updated = now_iso()

    def snapshot_text(self) -> str:
        return health_text(self.endpointId, self.health, self.error)

    def snapshot_html(self) -> str:
        return health_html(self.endpointId, self.health, self.error)
