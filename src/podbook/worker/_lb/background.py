"""``serve_app(app, endpoint=ID)``: serve an ASGI or WSGI app from a notebook as a worker of a
load-balancing endpoint (a background thread running uvicorn on its own event loop).

The endpoint is created (``type: LOAD_BALANCER``) when it does not exist; the worker key is
fetched through the user's client (the local emulator only), and only that key is used to
register. ``serve_app`` returns once the emulator has polled the app's health route: an app
whose route answers anything but 200 or 204 is stopped and the reason raised. Serving the
same endpoint again from this process replaces the earlier app.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from podbook.errors import ConfigError
from podbook.worker._config import new_worker_id
from podbook.worker._keys import fetch_worker_key, local_endpoint
from podbook.worker._lb.apps import app_interface
from podbook.worker._lb.listen import ListenPlan
from podbook.worker._lb.registration import Registered
from podbook.worker._lb.server import AppServer, AppWorkerConfig
from podbook.worker._served import Served, ServedRegistry

__all__ = ["ServedApp", "serve_app"]

READY_TIMEOUT = 15.0
LOAD_BALANCER = "LOAD_BALANCER"

_SERVED: ServedRegistry[ServedApp] = ServedRegistry()


class ServedApp(Served):
    """An app served from a background thread; :meth:`stop` ends it (also a context manager)."""

    def __init__(self, app: Any, interface: str, config: AppWorkerConfig, name: str) -> None:
        super().__init__(f"podbook-app-{config.endpoint_id}")
        self._server = AppServer(app, interface, config, on_outcome=self._note, app_name=name)
        self.name = name
        self.endpoint_id = config.endpoint_id
        self.worker_id = config.worker_id
        self.lb_url = config.lb_url
        self._outcome: tuple[Registered | None, BaseException | None] = (None, None)

    def _note(self, registered: Registered | None, error: BaseException | None) -> None:
        self._outcome = (registered, error)
        self._ready.set()

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.run_until_complete(self._server.run())

    def _failed(self, error: BaseException) -> None:
        self._note(None, error)

    def start(self, ready_timeout: float = READY_TIMEOUT) -> ServedApp:
        """Start the thread; return once registered and not unhealthy (else raise)."""
        self._start_thread(
            ready_timeout,
            f"the app for {self.endpoint_id!r} did not register within {ready_timeout:g} s; "
            "is the emulator running?",
        )
        registered, error = self._outcome
        if registered is None or not registered.state or registered.state == "UNHEALTHY":
            self.stop()
            if isinstance(error, ConfigError):
                raise error
            if error is not None:
                raise ConfigError(f"the app for {self.endpoint_id!r} failed to start: {error}")
            detail = registered.detail if registered is not None else "no answer"
            raise ConfigError(
                f"{self.name} is not healthy: {detail}; the load balancer only sends requests "
                "to a worker whose health route answers 200, so add one, e.g. "
                "@app.get('/ping') def ping(): return {'status': 'healthy'}"
            )
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """Leave the pool, let in-flight requests finish, end the thread."""
        self._server.request_stop()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        _SERVED.forget((self._server.config.queue_url, self.endpoint_id), self)

    @property
    def address(self) -> str:
        """Where the app listens on loopback."""
        return self._server.describe()

    @property
    def state(self) -> str:
        """What the emulator found at registration (HEALTHY or INITIALIZING)."""
        registered = self._outcome[0]
        return registered.state if registered is not None else "-"

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return (
            f"<ServedApp {self.name} on endpoint {self.endpoint_id!r}: {state}, "
            f"{self.address}, requests to {self.lb_url}>"
        )


def serve_app(
    app: Any,
    endpoint: str,
    *,
    client: Any = None,
    name: str | None = None,
    ready_timeout: float = READY_TIMEOUT,
) -> ServedApp:
    """Serve ``app`` (an ASGI app such as ``FastAPI()``, or a WSGI app) as a worker of the
    load-balancing endpoint ``endpoint`` of the local emulator, from a background thread.

    Listens on loopback (``PORT``/``PORT_HEALTH``/``HEALTH_CHECK_PATH`` when set, else a free
    port and ``/ping``). The endpoint is created when missing; an existing QUEUE endpoint of
    that name is refused (``ConfigError``), as is the real cloud. Returns once the emulator
    has checked the app's health route; ``.stop()`` ends it.
    """
    label = name or type(app).__name__
    interface = app_interface(app, label)
    client, owns_client, endpoint_id = local_endpoint(
        client, endpoint, "serving an app", endpoint_type=LOAD_BALANCER, example="my-api"
    )
    try:
        worker_key = fetch_worker_key(client, endpoint_id)
        queue_url = client.settings.queue_url
    finally:
        if owns_client:
            client.close()
    key = (queue_url, endpoint_id)
    previous = _SERVED.take(key)
    if previous is not None:
        previous.stop()
    config = AppWorkerConfig(
        queue_url, endpoint_id, worker_key, new_worker_id(), ListenPlan.from_env({})
    )
    served = ServedApp(app, interface, config, label)
    _SERVED.put(key, served)
    try:
        return served.start(ready_timeout)
    except BaseException:
        _SERVED.forget(key, served)
        raise
