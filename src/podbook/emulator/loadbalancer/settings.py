"""The load balancer's knobs (``podbook emulator --lb-...``); tests shorten them."""

from __future__ import annotations

from dataclasses import dataclass

REQUEST_TIMEOUT_SECONDS = 330.0
"""How long a worker may take to answer before the request gets 524 (the service: about
5.5 minutes)."""


@dataclass(frozen=True)
class LoadBalancerSettings:
    """How often workers are checked, how long a request waits for one, when it times out."""

    health_seconds: float = 1.0
    """Interval of the ``GET /ping`` poll of every registered worker."""
    ready_wait_seconds: float = 10.0
    """How long a request waits for a registered worker that is still INITIALIZING."""
    request_timeout_seconds: float = REQUEST_TIMEOUT_SECONDS
    """How long a worker may take to send its answer's status and headers (then 524)."""
    gone_after_failures: int = 3
    """Consecutive health polls that cannot reach a worker before it is removed."""
