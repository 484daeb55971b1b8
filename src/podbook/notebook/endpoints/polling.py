"""What the session's one refresher thread does for job and health panels.

A panel that wants polling has ``queue_key()`` (a tuple such as ``("status", endpoint,
job)``, ``("health", endpoint)`` or ``("health", endpoint, "workers")``, or None for nothing
this tick) and ``apply_queue(result)``. Each key is read once per tick, however many panels
share it; a failure reaches only the panels of its key (as the exception object). A
``("health", endpoint, "workers")`` key reads the queue API's ``/health`` and the REST API's
workers listing of the endpoint, and hands over a :class:`HealthReading` (or the exception
of the ``/health`` read).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from podbook.api.endpoints import ListEndpointWorkersResponse
    from podbook.api.queue import HealthResponse
    from podbook.client import Client

log = logging.getLogger(__name__)


class QueuePanel(Protocol):
    """A panel the refresher reads the queue API for (a job or health panel)."""

    def queue_key(self) -> tuple[str, ...] | None: ...

    def apply_queue(self, result: object) -> None:
        """Take what its key's read gave, or the exception the read raised."""
        ...


@dataclass(frozen=True)
class HealthReading:
    """One tick's reads for a health panel: the ``/health`` body, the workers listing
    (``GET /v2/serverless/{id}/workers``, the exception its read raised, or None when it was
    not read) and when the reads began (epoch seconds)."""

    health: HealthResponse
    workers: ListEndpointWorkersResponse | Exception | None
    at: float


def read_workers(client: Client, endpoint_id: str) -> ListEndpointWorkersResponse | Exception:
    """The endpoint's workers listing (``GET /v2/serverless/{id}/workers``), or the exception
    its read raised (the counts of ``/health`` stand without it)."""
    try:
        return client.endpoints.workers(endpoint_id)
    except Exception as err:  # noqa: BLE001 - handed to the panel, never raised here
        return err


def _health_and_workers(client: Client, endpoint_id: str) -> HealthReading:
    at = time.time()
    health = client.endpoint(endpoint_id).health()
    return HealthReading(health, read_workers(client, endpoint_id), at)


def _reader(client: Client, key: tuple[str, ...]) -> tuple[Callable[[], object], int] | None:
    """How to read ``key``, and how many calls that makes."""
    kind, endpoint_id, *rest = key
    endpoint = client.endpoint(endpoint_id)
    if kind == "status" and rest:
        return (lambda: endpoint.status(rest[0])), 1
    if kind == "health" and rest == ["workers"]:
        return (lambda: _health_and_workers(client, endpoint_id)), 2
    if kind == "health":
        return endpoint.health, 1
    return None


def poll_queue_panels(client: Client, panels: Iterable[object]) -> int:
    """Read what the queue panels need and hand it to them; returns the calls made."""
    wanted: dict[tuple[str, ...], list[QueuePanel]] = {}
    for panel in panels:
        key_of = getattr(panel, "queue_key", None)
        key = key_of() if callable(key_of) else None
        if key:
            wanted.setdefault(tuple(key), []).append(cast("QueuePanel", panel))
    calls = 0
    for key, members in wanted.items():
        how = _reader(client, key)
        if how is None:
            continue
        read, cost = how
        calls += cost
        try:
            result: object = read()
        except Exception as err:  # noqa: BLE001 - handed to the panels, never raised here
            result = err
        for panel in members:
            try:
                panel.apply_queue(result)
            except Exception as err:  # noqa: BLE001 - one broken panel must not stop others
                log.debug("podbook queue panel update failed: %s", err)
    return calls
