"""The user's app served by uvicorn on loopback, registered with the load balancer.

Once uvicorn listens, the worker registers (the emulator polls its health route right away,
while this server already answers); it renews the registration in the background, and on
shutdown leaves the pool before uvicorn stops taking requests, so the balancer sends it
nothing more while in-flight requests finish (``grace`` seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from podbook.api.endpoints import load_balancer_url
from podbook.errors import ConfigError
from podbook.worker._lb.apps import WSGI
from podbook.worker._lb.listen import LOOPBACK, ListenPlan
from podbook.worker._lb.registration import Registered, Registration

__all__ = ["AppServer", "AppWorkerConfig"]

logger = logging.getLogger("podbook.worker")

Outcome = Callable[[Registered | None, BaseException | None], None]
"""Told once: what the first registration found, or why it failed."""


@dataclass(frozen=True)
class AppWorkerConfig:
    """Which endpoint to register with, and how."""

    queue_url: str
    endpoint_id: str
    worker_key: str
    worker_id: str
    plan: ListenPlan
    grace_seconds: float = 10.0
    access_log: bool = False

    def __repr__(self) -> str:  # never show the key
        return (
            f"AppWorkerConfig(endpoint_id={self.endpoint_id!r}, worker_id={self.worker_id!r}, "
            f"queue_url={self.queue_url!r})"
        )

    @property
    def lb_url(self) -> str:
        """Where callers send the endpoint's requests."""
        return load_balancer_url(self.queue_url, self.endpoint_id)


class _RegisteringServer(uvicorn.Server):
    """uvicorn with registration after startup and deregistration before shutdown."""

    def __init__(self, config: uvicorn.Config, owner: AppServer) -> None:
        super().__init__(config)
        self._owner = owner

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            await self._owner.joined(self)
        else:
            self._owner.failed(ConfigError("the app failed to start (see its error above)"))

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self._owner.leaving()
        await super().shutdown(sockets=sockets)


class AppServer:
    """Serve ``app`` (interface ``"asgi3"`` or ``"wsgi"``) as a load-balancing worker."""

    def __init__(
        self,
        app: Any,
        interface: str,
        config: AppWorkerConfig,
        on_outcome: Outcome | None = None,
        *,
        app_name: str = "the app",
    ) -> None:
        self.app = app
        self.app_name = app_name
        self.interface = interface
        self.config = config
        self.ports: list[int] = []
        self.registered: Registered | None = None
        self.error: BaseException | None = None
        self.on_outcome = on_outcome
        """Told once what the first registration found (or why it failed)."""
        self._server: _RegisteringServer | None = None
        self._client: httpx.AsyncClient | None = None
        self._renewal: asyncio.Task[None] | None = None
        self._registration: Registration | None = None

    def _uvicorn_config(self) -> uvicorn.Config:
        return uvicorn.Config(
            self.app,
            interface=self.interface,  # type: ignore[arg-type]
            lifespan="off" if self.interface == WSGI else "auto",
            log_config=None,
            log_level="info" if self.config.access_log else "warning",
            access_log=self.config.access_log,
            timeout_graceful_shutdown=self.config.grace_seconds,
        )

    async def run(self, sockets: list[socket.socket] | None = None) -> None:
        """Listen (on ``sockets``, or those the plan binds), register, serve until
        :meth:`request_stop`; leave the pool on the way out."""
        sockets = sockets or self.config.plan.bind()
        self.ports = [sock.getsockname()[1] for sock in sockets]
        self._server = _RegisteringServer(self._uvicorn_config(), self)
        try:
            await self._server.serve(sockets=sockets)
        finally:
            for sock in sockets:
                sock.close()
        if self.registered is None and self.error is None:
            self.failed(ConfigError("the server stopped before it registered"))

    def request_stop(self) -> None:
        """Ask the server to stop (from any thread)."""
        if self._server is not None:
            self._server.should_exit = True

    # -- registration --------------------------------------------------------------------

    async def joined(self, server: uvicorn.Server) -> None:
        """uvicorn listens: register, then keep the registration alive."""
        port = self.ports[0]
        health_port = self.ports[1] if len(self.ports) > 1 else port
        self._registration = Registration(
            self.config.queue_url,
            self.config.endpoint_id,
            self.config.worker_key,
            self.config.worker_id,
            {"port": port, "healthPort": health_port, "healthPath": self.config.plan.health_path},
        )
        self._client = httpx.AsyncClient(trust_env=False)
        try:
            registered = await self._registration.register(self._client)
        except ConfigError as exc:
            self.failed(exc)
            server.should_exit = True
            return
        self.registered = registered
        if self.on_outcome is not None:
            self.on_outcome(registered, None)
        self._renewal = asyncio.get_running_loop().create_task(self._renew(server, registered))

    async def _renew(self, server: uvicorn.Server, registered: Registered) -> None:
        assert self._registration is not None and self._client is not None
        try:
            await self._registration.renew_forever(self._client, registered.renew_seconds)
        except ConfigError as exc:
            logger.error("worker %s: %s; stopping", self.config.worker_id, exc)
            self.error = exc
            server.should_exit = True

    async def leaving(self) -> None:
        """Before uvicorn stops: stop renewing, leave the pool, close the client."""
        if self._renewal is not None:
            self._renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewal
        if self._client is not None:
            if self._registration is not None and self.registered is not None:
                await self._registration.deregister(self._client)
            await self._client.aclose()
            self._client = None

    def failed(self, error: BaseException) -> None:
        """The first registration did not happen; tell whoever waits."""
        if self.error is None:
            self.error = error
            if self.on_outcome is not None:
                self.on_outcome(None, error)

    def describe(self) -> str:
        """``http://127.0.0.1:PORT`` (and the health port when separate)."""
        where = f"http://{LOOPBACK}:{self.ports[0]}" if self.ports else "(not listening)"
        if len(self.ports) > 1:
            where += f" (health on port {self.ports[1]})"
        return where
