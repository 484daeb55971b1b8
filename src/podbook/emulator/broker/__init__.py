"""The emulator's queue broker (issue 3).

``core`` (the job state machine and its timers), ``queues`` (one endpoint's waiting jobs,
workers and takers), ``jobs`` (a job and its wire views), ``endpoints`` (definitions,
built-ins), ``persistence`` (SQLite tables), ``protocol`` (worker-facing routes),
``supervisor`` (podbook worker processes), ``webhooks``, ``ratelimit`` (per-operation
limits), ``submission`` (request checks), ``service`` (all of it for the app).
Client-facing routes live in ``podbook.emulator.routes.queue`` and ``routes.serverless``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podbook.emulator.broker.config import BrokerSettings, DeclaredEndpoint

if TYPE_CHECKING:
    from podbook.emulator.broker.service import QueueService

__all__ = ["BrokerSettings", "DeclaredEndpoint", "install", "routes", "service_of"]


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


def routes() -> list[object]:
    """The client queue routes, the worker routes (push socket, HTTP), ``/v2/serverless``.

    Queue paths use the ``endpoint`` path convertor, which never matches a REST prefix
    (``pods``, ``clusters``, ...): they may be mounted before the REST routes, so a queue
    request does not try every REST pattern first.
    """
    from podbook.emulator.broker import protocol
    from podbook.emulator.broker.endpoints import register_endpoint_convertor
    from podbook.emulator.routes import openai, queue, serverless, worker_push

    register_endpoint_convertor()
    # The hot paths first: a request is matched against the routes in order.
    return [
        *queue.routes(),
        *worker_push.routes(),
        *protocol.routes(),
        *serverless.routes(),
        *openai.routes(),
    ]
