"""The emulator's queue broker (issue 3).

``core`` (the job state machine and its timers), ``queues`` (one endpoint's waiting jobs,
workers and takers), ``jobs`` (a job and its wire views), ``endpoints`` (definitions,
built-ins), ``persistence`` (SQLite tables), ``supervisor`` (podbook worker processes),
``webhooks``, ``ratelimit`` (per-operation limits), ``submission`` (request checks),
``errors`` (:class:`~podbook.emulator.broker.errors.QueueRefusal`), ``service`` (all of it
for the app). No HTTP here: the routes (client, worker, ``/v2/serverless``) live in
:mod:`podbook.emulator.routes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podbook.emulator.broker.config import BrokerSettings, DeclaredEndpoint

if TYPE_CHECKING:
    from podbook.emulator.broker.service import QueueService

__all__ = ["BrokerSettings", "DeclaredEndpoint", "install", "service_of"]


def install(emulator: object, store: object, settings: BrokerSettings) -> QueueService:
    """Create the queue service and keep it in ``emulator.extras`` (settings may import
    this package, so the service is imported here, not at module level); its scaled
    workers are placed as the emulator's settings say (``workerplace.place_of``)."""
    from podbook.emulator.broker.service import EXTRAS_KEY, QueueService
    from podbook.emulator.broker.workerplace import place_of

    place = place_of(emulator.settings)  # type: ignore[attr-defined]
    service = QueueService(settings, store, place)  # type: ignore[arg-type]
    emulator.extras[EXTRAS_KEY] = service  # type: ignore[attr-defined]
    return service


def service_of(app: Any) -> QueueService:
    """The queue service installed in an emulator application."""
    from podbook.emulator.broker.service import EXTRAS_KEY

    return app.state.emulator.extras[EXTRAS_KEY]
