"""``podbook worker --lb app.py[:app] --endpoint ID``: serve an ASGI or WSGI app as a worker
of a load-balancing endpoint of the local emulator.

It listens on loopback ``PORT`` (a free port when unset; ``PORT`` is then set to it, so the
app reads the port it got, as on the service), answers the health route on ``PORT_HEALTH``
when that is set too, registers with the emulator under its worker key (from
``RUNPOD_AI_API_KEY``, else fetched with the user's key, which the app never sees), and
serves until SIGTERM or Ctrl-C, when it leaves the pool and lets in-flight requests finish
(``--grace``). A registration the emulator refuses (a QUEUE endpoint, a bad key) ends it with
one line and exit code 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
from typing import Any

from podbook.errors import ConfigError, PodbookError
from podbook.worker._config import new_worker_id
from podbook.worker._lb.apps import load_app
from podbook.worker._lb.listen import ListenPlan
from podbook.worker._lb.registration import Registered
from podbook.worker._lb.server import AppServer, AppWorkerConfig
from podbook.worker._startup import (
    configure_logging,
    endpoint_credentials,
    fail,
    hide_user_key,
)

__all__ = ["run_app_worker"]

logger = logging.getLogger("podbook.worker")

_QUEUE_ONLY = (
    ("concurrency", 1, "--concurrency"),
    ("refresh_worker", False, "--refresh-worker"),
    ("aggregate_stream", True, "--no-aggregate-stream"),
)


def _refuse_queue_options(args: argparse.Namespace) -> None:
    for attribute, default, flag in _QUEUE_ONLY:
        if getattr(args, attribute) != default:
            raise ConfigError(
                f"{flag} applies to queue handlers; an app with --lb takes requests as they come"
            )
    if not args.endpoint:
        raise ConfigError("--lb needs --endpoint ID (a LOAD_BALANCER endpoint)")


def _report(server: AppServer) -> Any:
    def report(registered: Registered | None, error: BaseException | None) -> None:
        if registered is None:
            return
        config = server.config
        logger.info(
            "worker %s serves %s on %s for endpoint %s; requests: %s",
            config.worker_id,
            server.app_name,
            server.describe(),
            config.endpoint_id,
            config.lb_url,
        )
        if registered.healthy:
            logger.info("worker %s: %s", config.worker_id, registered.detail)
        else:
            logger.warning(
                "worker %s: %s; it takes requests once %s answers 200",
                config.worker_id,
                registered.detail,
                config.plan.health_path,
            )

    return report


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)


class _NotHealthPolls(logging.Filter):
    """Drop the access lines of the balancer's health polls (one or more a second)."""

    def __init__(self, health_path: str) -> None:
        super().__init__()
        self.health_path = health_path

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (len(args) >= 3 and args[1] == "GET" and args[2] == self.health_path)


def _log_uvicorn(health_path: str) -> None:
    """uvicorn's own lines (its errors; with ``-v`` every request but the health polls)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s app: %(message)s", "%H:%M:%S"))
    handler.addFilter(_NotHealthPolls(health_path))
    uvicorn_logger = logging.getLogger("uvicorn")
    uvicorn_logger.addHandler(handler)
    uvicorn_logger.propagate = False


def run_app_worker(args: argparse.Namespace) -> int:
    """Serve the app until SIGTERM / Ctrl-C; the process's exit code."""
    configure_logging(args.verbose)
    sockets = []
    try:
        _refuse_queue_options(args)
        url, key = endpoint_credentials(args.endpoint, args.url, lb=True)
        hide_user_key(key)
        plan = ListenPlan.from_env(os.environ)
        _log_uvicorn(plan.health_path)
        sockets = plan.bind()
        ports = [sock.getsockname()[1] for sock in sockets]
        os.environ["PORT"] = str(ports[0])
        os.environ["PORT_HEALTH"] = str(ports[-1])
        app, interface = load_app(args.handler)
    except PodbookError as exc:
        for sock in sockets:
            sock.close()
        return fail("worker", exc)
    worker_id = args.worker_id or os.environ.get("RUNPOD_POD_ID", "").strip() or new_worker_id()
    config = AppWorkerConfig(
        url, args.endpoint, key, worker_id, plan, grace_seconds=args.grace, access_log=args.verbose
    )
    server = AppServer(app, interface, config, app_name=args.handler)
    server.on_outcome = _report(server)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    with contextlib.suppress(KeyboardInterrupt, SystemExit):
        asyncio.run(server.run(sockets))
    if server.error is not None:
        return fail("worker", server.error, 1)
    return 0
