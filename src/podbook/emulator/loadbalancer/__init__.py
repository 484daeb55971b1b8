"""Load-balancing endpoints: requests go straight to a worker's own HTTP server.

``settings`` (the knobs), ``pool`` (one endpoint's registered workers and which one takes
the next request), ``health`` (the ``GET /ping`` poll), ``balancer`` (every pool, kept by the
queue service), ``proxy`` (the ``{emulator_url}/lb/{endpoint_id}/{path}`` pass-through) and
``routes`` (the proxy routes and the worker-facing registration route). See
``docs/load-balancing.md``.
"""

from __future__ import annotations

from podbook.emulator.loadbalancer.settings import LoadBalancerSettings

__all__ = ["LoadBalancerSettings"]
