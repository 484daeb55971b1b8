"""How many workers an endpoint should have now: the service's scaling rules, pure.

An endpoint scales its workers between ``workers.min`` and ``workers.max``:

- ``QUEUE_DELAY`` (``queueDelay`` seconds): a job that has waited longer than ``queueDelay``
  while no worker is starting adds one worker; a job with no worker at all (none running,
  none starting) starts one at once (a cold start);
- ``REQUEST_COUNT`` (``requestCount``): one worker per ``requestCount`` jobs waiting or in
  progress, rounded up;
- a worker idle for ``idleTimeout`` seconds (default 5) stops, down to ``workers.min``; a
  worker of an older release stops as soon as it is idle (its running jobs finish on it).

:func:`plan` takes what runs now (:class:`Load`, :class:`WorkerView`) and answers with a
:class:`Plan`: how many workers to start, which to stop. Low-priority jobs never scale up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DEFAULT_IDLE_TIMEOUT_S = 5.0
"""The service's default ``workers.idleTimeout`` (its examples' value)."""


@dataclass(frozen=True)
class WorkerView:
    """One worker process as the scaler sees it."""

    worker_id: str
    starting: bool
    """Started, and has not asked for a job yet (a cold start in progress)."""
    busy: bool
    """Runs at least one job."""
    idle_for: float = 0.0
    """Seconds since it last ran a job (or since it called in)."""
    stale: bool = False
    """Started for an older release of the endpoint."""


@dataclass(frozen=True)
class Load:
    """The endpoint's jobs now."""

    waiting: int = 0
    """Jobs in the queue that scale workers (not the low-priority ones)."""
    oldest_wait: float = 0.0
    """Seconds the oldest of them has waited."""
    in_progress: int = 0


@dataclass(frozen=True)
class Settings:
    """The endpoint's scaling settings, with the service's defaults."""

    min: int = 0
    max: int = 3
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S
    rule: str = "QUEUE_DELAY"
    value: float = 4.0

    @classmethod
    def of(cls, record: dict[str, Any]) -> Settings:
        """The settings of an endpoint record (``workers``, ``scaling``)."""
        workers = record.get("workers") or {}
        scaling = record.get("scaling") or {}
        rule = str(scaling.get("type") or "QUEUE_DELAY")
        value = scaling.get("requestCount" if rule == "REQUEST_COUNT" else "queueDelay")
        high = max(0, int(workers.get("max", 3)))
        return cls(
            min=min(high, max(0, int(workers.get("min", 0)))),
            max=high,
            idle_timeout=float(workers.get("idleTimeout") or DEFAULT_IDLE_TIMEOUT_S),
            rule=rule,
            value=float(value) if value else (4.0 if rule == "QUEUE_DELAY" else 1.0),
        )


@dataclass(frozen=True)
class Plan:
    """What to do now."""

    start: int = 0
    stop: list[str] = field(default_factory=list)
    throttled: int = 0
    """Workers the load asks for beyond ``workers.max`` (jobs wait for a free one)."""


def wanted(settings: Settings, load: Load, workers: list[WorkerView]) -> int:
    """How many more workers the load asks for now (before ``workers.max``)."""
    alive = len(workers)
    if settings.rule == "REQUEST_COUNT":
        return math.ceil((load.waiting + load.in_progress) / max(1.0, settings.value)) - alive
    if not load.waiting:
        return 0
    if alive == 0:
        return 1  # a job and no worker: a cold start at once
    starting = any(w.starting for w in workers)
    return 1 if load.oldest_wait > settings.value and not starting else 0


def plan(settings: Settings, load: Load, workers: list[WorkerView], stopping: int = 0) -> Plan:
    """Start or stop workers so that the endpoint has what its load and settings ask for
    (``stopping``: workers told to stop and not gone yet, which still count against
    ``workers.max``)."""
    fresh = [w for w in workers if not w.stale]
    stop = [w.worker_id for w in workers if w.stale and not w.busy]
    more = max(0, wanted(settings, load, fresh))
    room = max(0, settings.max - len(workers) - stopping)
    start = min(more, room)
    start += max(0, settings.min - len(fresh) - start)
    idle = [w for w in fresh if not (w.busy or w.starting) and w.idle_for >= settings.idle_timeout]
    spare = len(fresh) - settings.min
    if not load.waiting and spare > 0:
        idle.sort(key=lambda w: -w.idle_for)
        stop += [w.worker_id for w in idle[:spare]]
    return Plan(start=start, stop=stop, throttled=more - min(more, room))
