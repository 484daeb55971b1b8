"""Every load-balancing endpoint's worker pool, the health poll that keeps them current,
and the HTTP clients that reach the workers.

Kept by the queue service (``QueueService.balancer``). Nothing runs until the first worker
registers: the poll task and the clients are made then, on the emulator's event loop, and
:meth:`LoadBalancer.close` ends them with the emulator. Registrations live in memory only: a
worker renews its own every few seconds, so after an emulator restart it is back within one
renewal.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from podbook.emulator.loadbalancer.health import PROBE_TIMEOUT_SECONDS, probe
from podbook.emulator.loadbalancer.pool import UNHEALTHY, LbWorker, WorkerPool
from podbook.emulator.loadbalancer.settings import LoadBalancerSettings
from podbook.emulator.tasks import cancel_and_wait

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("podbook.emulator.loadbalancer")

PoolKey = tuple[str, str]
"""``(account_id, endpoint_id)``."""

CONNECT_TIMEOUT_SECONDS = 5.0
_CLIENT_DEFAULT_HEADERS = ("accept", "accept-encoding", "user-agent")


def _bare_client(timeout: float | None, connect: float | None = None) -> httpx.AsyncClient:
    """A client that adds no header of its own to what is forwarded (httpx would add
    ``Accept-Encoding``, and a worker would then compress for a caller that never asked),
    and reads no proxy setting from the environment (workers are on loopback)."""
    import httpx  # on first use: the emulator starts without it

    client = httpx.AsyncClient(
        timeout=httpx.Timeout(timeout, connect=connect if connect is not None else timeout),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        trust_env=False,
    )
    for name in _CLIENT_DEFAULT_HEADERS:
        del client.headers[name]
    return client


class LoadBalancer:
    """The pools of all load-balancing endpoints of all accounts."""

    def __init__(self, settings: LoadBalancerSettings) -> None:
        self.settings = settings
        self.pools: dict[PoolKey, WorkerPool] = {}
        self._health: httpx.AsyncClient | None = None
        self._proxy: httpx.AsyncClient | None = None
        self._poller: asyncio.Task[None] | None = None

    # clients and the poll task ---------------------------------------------------------

    @property
    def proxy_client(self) -> httpx.AsyncClient:
        """The client that forwards requests (no read timeout: streams may run long)."""
        if self._proxy is None:
            self._proxy = _bare_client(None, connect=CONNECT_TIMEOUT_SECONDS)
        return self._proxy

    def _health_client(self) -> httpx.AsyncClient:
        if self._health is None:
            self._health = _bare_client(PROBE_TIMEOUT_SECONDS)
        return self._health

    def _ensure_poller(self) -> None:
        if self._poller is None or self._poller.done():
            self._poller = asyncio.get_running_loop().create_task(self._poll_forever())

    async def close(self) -> None:
        """Stop the health poll and close the clients (emulator shutdown)."""
        await cancel_and_wait(self._poller)
        self._poller = None
        for client in (self._health, self._proxy):
            if client is not None:
                await client.aclose()
        self._health = self._proxy = None

    # registration ----------------------------------------------------------------------

    def pool(self, key: PoolKey) -> WorkerPool:
        """The endpoint's pool (empty when no worker registered yet)."""
        pool = self.pools.get(key)
        if pool is None:
            pool = self.pools[key] = WorkerPool()
        return pool

    async def register(self, key: PoolKey, worker: LbWorker) -> LbWorker:
        """Add (or renew) a worker and check its health once at once, so a worker that is
        ready takes requests as soon as its registration is answered."""
        pool = self.pool(key)
        known = pool.add(worker)
        if known is worker:
            log.info("endpoint %s: %s registered", key[1], worker.describe())
            await self.check(pool, worker)
        self._ensure_poller()
        return known

    def deregister(self, key: PoolKey, worker_id: str) -> bool:
        """Remove a worker that says it is going; whether it was registered."""
        pool = self.pools.get(key)
        return pool is not None and pool.remove(worker_id) is not None

    def drop(self, key: PoolKey) -> None:
        """Forget an endpoint's pool (the endpoint was deleted)."""
        pool = self.pools.pop(key, None)
        if pool is not None:
            pool.workers.clear()
            pool.notify()

    # health ----------------------------------------------------------------------------

    async def check(self, pool: WorkerPool, worker: LbWorker) -> None:
        """Poll one worker and record what was found (a worker unreachable too many times
        in a row is removed)."""
        found = await probe(self._health_client(), worker, PROBE_TIMEOUT_SECONDS)
        if pool.workers.get(worker.worker_id) is not worker:
            return  # replaced or removed meanwhile
        worker.failures = 0 if found.reached else worker.failures + 1
        if worker.failures >= self.settings.gone_after_failures:
            log.info("%s; removed after %d failed polls", worker.describe(), worker.failures)
            pool.remove(worker.worker_id)
            return
        pool.set_state(worker, found.state, found.detail)

    def unreachable(self, pool: WorkerPool, worker: LbWorker, detail: str) -> None:
        """A forwarded request could not connect: take the worker out of rotation until a
        poll finds it healthy again."""
        worker.failures += 1
        pool.set_state(worker, UNHEALTHY, detail)

    async def _poll_forever(self) -> None:
        while any(pool.workers for pool in self.pools.values()):
            await asyncio.sleep(max(0.05, self.settings.health_seconds))
            checks = [
                self.check(pool, worker)
                for pool in list(self.pools.values())
                for worker in list(pool.workers.values())
            ]
            await asyncio.gather(*checks, return_exceptions=True)
        self._poller = None

    # choosing --------------------------------------------------------------------------

    async def acquire(
        self, key: PoolKey, exclude: frozenset[str] = frozenset(), *, wait: bool = True
    ) -> LbWorker:
        """A healthy worker (not in ``exclude``) with one more request counted in flight.

        While a registered worker is still INITIALIZING (its health route has not answered
        200 yet), waits up to ``ready_wait_seconds`` (``wait``) for one to become healthy;
        otherwise (none registered, all unhealthy) fails at once. Raises
        :class:`NoWorkerReady` naming why none can take the request.
        """
        pool = self.pool(key)
        deadline = time.monotonic() + (self.settings.ready_wait_seconds if wait else 0.0)
        while True:
            worker = pool.choose(exclude)
            if worker is not None:
                worker.in_flight += 1
                return worker
            left = deadline - time.monotonic()
            if not pool.starting() or left <= 0:
                raise NoWorkerReady(pool.why_not_ready())
            await pool.wait_change(left)

    @staticmethod
    def release(worker: LbWorker) -> None:
        """A request that :meth:`acquire` counted has ended."""
        worker.in_flight -= 1
        worker.served += 1


class NoWorkerReady(Exception):
    """No worker of the endpoint can take a request; the message says why."""
