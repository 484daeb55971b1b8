"""The health poll: ``GET {health_path}`` on each worker's health port.

``200`` healthy, ``204`` initializing, anything else unhealthy (the service's rule). A poll
that cannot reach the worker (refused, timed out) is a failure; after
``gone_after_failures`` of them in a row the worker is removed from its pool.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from podbook.emulator.loadbalancer.pool import HEALTHY, INITIALIZING, UNHEALTHY, LbWorker

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("podbook.emulator.loadbalancer")

PROBE_TIMEOUT_SECONDS = 2.0


@dataclass(frozen=True)
class Probe:
    """What one poll of a worker's health route found."""

    state: str
    detail: str
    reached: bool


def state_of(status: int) -> str:
    """The worker state a health answer's status means."""
    if status == 200:
        return HEALTHY
    if status == 204:
        return INITIALIZING
    return UNHEALTHY


async def probe(client: httpx.AsyncClient, worker: LbWorker, timeout: float) -> Probe:
    """Poll ``worker``'s health route once."""
    import httpx  # on first use: the emulator starts without it

    what = f"GET {worker.health_path}"
    try:
        response = await client.get(worker.health_url, timeout=timeout)
    except httpx.TimeoutException:
        return Probe(UNHEALTHY, f"{what} did not answer within {timeout:g} s", reached=False)
    except httpx.HTTPError as exc:
        reason = type(exc).__name__
        return Probe(UNHEALTHY, f"{what} could not connect ({reason})", reached=False)
    state = state_of(response.status_code)
    detail = {
        HEALTHY: f"{what} answered 200 (healthy)",
        INITIALIZING: f"{what} answered 204 (initializing)",
    }.get(state, f"{what} answered {response.status_code} (unhealthy)")
    return Probe(state, detail, reached=True)
