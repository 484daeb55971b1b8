"""One load-balancing endpoint's workers, their health, and which one takes a request.

A worker is a loopback ``port`` (its HTTP server) plus the ``health_port`` and
``health_path`` the balancer polls. It starts INITIALIZING; a ``200`` from its health route
makes it HEALTHY, ``204`` keeps it INITIALIZING, any other answer makes it UNHEALTHY, and a
poll that cannot reach it counts a failure (enough in a row and it is removed). Only HEALTHY
workers take requests: the one with the fewest requests in flight, ties taken in turn
(round-robin), so sequential requests alternate and a slow worker is passed over.

Everything here runs on the emulator's event loop (no locks).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

INITIALIZING = "INITIALIZING"
HEALTHY = "HEALTHY"
UNHEALTHY = "UNHEALTHY"

LOOPBACK_HOST = "127.0.0.1"
"""Workers are reached on loopback only."""


@dataclass
class LbWorker:
    """A registered worker as the balancer sees it."""

    worker_id: str
    port: int
    health_port: int
    health_path: str
    state: str = INITIALIZING
    detail: str = "not checked yet"
    """The last health result in words (``GET /ping answered 404``)."""
    in_flight: int = 0
    served: int = 0
    failures: int = 0
    """Consecutive health polls that could not reach the worker."""
    registered_at: float = field(default_factory=time.time)

    @property
    def base_url(self) -> str:
        """Where its HTTP server listens."""
        return f"http://{LOOPBACK_HOST}:{self.port}"

    @property
    def health_url(self) -> str:
        """The route the balancer polls."""
        return f"http://{LOOPBACK_HOST}:{self.health_port}{self.health_path}"

    def describe(self) -> str:
        """``worker w1 (127.0.0.1:41234): GET /ping answered 404``."""
        return f"worker {self.worker_id} ({LOOPBACK_HOST}:{self.port}): {self.detail}"


class WorkerPool:
    """The registered workers of one endpoint of one account."""

    def __init__(self) -> None:
        self.workers: dict[str, LbWorker] = {}
        self._turn = 0
        self._changed = asyncio.Event()

    def add(self, worker: LbWorker) -> LbWorker:
        """Register ``worker``; a worker registering again under its id keeps its state
        when its addresses did not change (a renewal)."""
        known = self.workers.get(worker.worker_id)
        if known is not None and (known.port, known.health_port, known.health_path) == (
            worker.port,
            worker.health_port,
            worker.health_path,
        ):
            return known
        self.workers[worker.worker_id] = worker
        self.notify()
        return worker

    def remove(self, worker_id: str) -> LbWorker | None:
        """Forget a worker (it said goodbye, or it stopped answering)."""
        worker = self.workers.pop(worker_id, None)
        if worker is not None:
            self.notify()
        return worker

    def set_state(self, worker: LbWorker, state: str, detail: str) -> None:
        """Record a health result; waiting requests are woken when something changed."""
        changed = worker.state != state
        worker.state = state
        worker.detail = detail
        if changed:
            self.notify()

    def healthy(self) -> list[LbWorker]:
        """The workers that may take a request, in registration order."""
        return [w for w in self.workers.values() if w.state == HEALTHY]

    def starting(self) -> bool:
        """Whether some worker may still become healthy (INITIALIZING)."""
        return any(w.state == INITIALIZING for w in self.workers.values())

    def choose(self, exclude: frozenset[str] = frozenset()) -> LbWorker | None:
        """The healthy worker with the fewest requests in flight (ties in turn), or None."""
        candidates = [w for w in self.healthy() if w.worker_id not in exclude]
        if not candidates:
            return None
        start = self._turn % len(candidates)
        ordered = candidates[start:] + candidates[:start]
        chosen = min(ordered, key=lambda w: w.in_flight)
        self._turn = start + ordered.index(chosen) + 1
        return chosen

    def notify(self) -> None:
        """Wake every request waiting for a change of the pool."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self, timeout: float) -> None:
        """Return when the pool changes or ``timeout`` seconds pass."""
        event = self._changed
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)

    def why_not_ready(self) -> str:
        """Why no worker can take a request, in one line."""
        if not self.workers:
            return "no worker is registered"
        return "no worker is healthy: " + "; ".join(w.describe() for w in self.workers.values())
