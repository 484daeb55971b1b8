"""The ``podbook worker`` and ``podbook worker-env`` subcommands.

``podbook worker handler.py[:fn] --endpoint ID [--concurrency N] [--url URL]`` serves a
handler; without ``--endpoint`` it reads the ``RUNPOD_WEBHOOK_*`` variables like a
``runpod`` worker. ``podbook worker --lb app.py[:app] --endpoint ID`` serves an ASGI or WSGI
app as a worker of a load-balancing endpoint (:mod:`podbook.worker._lb.command`). Its worker key comes from ``RUNPOD_AI_API_KEY`` or, when that is not set,
is fetched from the local emulator with the user's key (which never reaches the handler).
``podbook worker-env ENDPOINT [--url URL]`` prints the ``RUNPOD_*`` variables for an
unmodified ``runpod`` worker.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
import time
from functools import partial
from typing import Any

from podbook.cliargs import positive_seconds
from podbook.errors import PodbookError
from podbook.worker._startup import (
    configure_logging,
    endpoint_credentials,
    explain_not_found,
    fail,
    hide_user_key,
    key_for,
    logger,
)

__all__ = ["add_worker_commands", "run_worker", "run_worker_env"]


def _concurrency(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to 1000")
    return int(text)


def _milliseconds(text: str) -> int:
    if not text.isdigit() or int(text) < 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of ms (100 or more)")
    return int(text)


def add_worker_commands(commands: Any) -> None:
    """Add ``worker`` and ``worker-env`` to the ``podbook`` subcommand parsers."""
    worker = commands.add_parser(
        "worker",
        help="serve a handler: run jobs of a queue endpoint",
        description=(
            "Serve a handler (handler.py[:fn] or package.module:fn; fn defaults to 'handler') "
            "for a queue endpoint of the local emulator (--endpoint), or for the broker named "
            "by the RUNPOD_WEBHOOK_* variables."
        ),
    )
    worker.add_argument(
        "handler",
        metavar="HANDLER",
        help="handler.py[:fn] or package.module:fn (with --lb: app.py[:app], an ASGI/WSGI app)",
    )
    worker.add_argument(
        "--lb",
        action="store_true",
        help="serve HANDLER as an HTTP app (ASGI or WSGI) for a LOAD_BALANCER endpoint, on "
        "$PORT (default: a free loopback port)",
    )
    worker.add_argument("--endpoint", metavar="ID", help="endpoint id to serve")
    worker.add_argument(
        "--url", metavar="URL", help="queue base URL of the broker (default: the local emulator)"
    )
    worker.add_argument(
        "--concurrency", type=_concurrency, default=1, metavar="N", help="jobs at once (default 1)"
    )
    worker.add_argument(
        "--worker-id", metavar="ID", help="worker id (default: RUNPOD_POD_ID or new)"
    )
    worker.add_argument(
        "--refresh-worker",
        action="store_true",
        help="start a fresh process after every job (runpod's refresh_worker)",
    )
    worker.add_argument(
        "--no-aggregate-stream",
        dest="aggregate_stream",
        action="store_false",
        help="a streaming job's final output is [] instead of the list of its chunks",
    )
    worker.add_argument(
        "--grace",
        type=positive_seconds,
        default=10.0,
        metavar="SECONDS",
        help="on SIGTERM, how long running jobs may finish (default 10; none when the broker "
        "does not answer)",
    )
    worker.add_argument("-v", "--verbose", action="store_true", help="log every job")
    worker.set_defaults(run=run_worker)

    env = commands.add_parser(
        "worker-env",
        help="print the RUNPOD_* variables that point a runpod worker at the emulator",
        description=(
            "Print export lines (with a fresh worker key) that point an unmodified "
            "runpod.serverless.start worker at ENDPOINT of the local emulator."
        ),
    )
    env.add_argument("endpoint", metavar="ENDPOINT", help="endpoint id")
    env.add_argument("--url", metavar="URL", help="emulator base URL (default: the local one)")
    env.add_argument("--worker-id", metavar="ID", help="RUNPOD_POD_ID (default: a new id)")
    env.add_argument(
        "--ping-interval",
        type=_milliseconds,
        default=None,
        metavar="MS",
        help="RUNPOD_PING_INTERVAL in ms (default 10000)",
    )
    env.set_defaults(run=run_worker_env)


def worker_config(args: argparse.Namespace) -> Any:
    """The :class:`WorkerConfig` the arguments and environment describe."""
    from podbook.errors import ConfigError
    from podbook.worker._config import WorkerConfig

    options = {
        "concurrency": args.concurrency,
        "aggregate_stream": args.aggregate_stream,
        "shutdown_grace": args.grace,
    }
    if args.refresh_worker:
        options["refresh_worker"] = True
    if args.endpoint:
        url, key = endpoint_credentials(args.endpoint, args.url)
        worker_id = args.worker_id or os.environ.get("RUNPOD_POD_ID", "").strip() or None
        return WorkerConfig.for_endpoint(url, args.endpoint, key, worker_id=worker_id, **options)
    if args.url:
        raise ConfigError("--url needs --endpoint ID (the endpoint to serve)")
    env = dict(os.environ)
    if args.worker_id:
        env["RUNPOD_POD_ID"] = args.worker_id
    if not env.get("RUNPOD_WEBHOOK_GET_JOB"):
        raise ConfigError(
            "say which endpoint to serve: --endpoint ID, or set the RUNPOD_WEBHOOK_* "
            "variables (`podbook worker-env ENDPOINT` prints them)"
        )
    return WorkerConfig.from_env(env, **options)


def _run_loop(main: Any) -> Any:
    """Run the worker's loop on uvloop when it is installed (uvicorn[standard] brings it; about
    a quarter less CPU per job), else on asyncio's own loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _StopSignals:
    """SIGTERM and SIGINT of a serving worker: the first stops it after its running jobs, the
    second at once. Plain Python handlers, not the loop's: a signal that comes while a refresh
    hands over to a fresh process is still counted after the loop has closed."""

    def __init__(self) -> None:
        self.count = 0

    def install(self, loop: asyncio.AbstractEventLoop, runner: Any) -> None:
        """Route the stop signals to ``runner`` on ``loop``; let in any that a previous
        process of this worker left pending (see :meth:`hold`)."""

        def on_signal(signum: int, frame: object) -> None:
            self.count += 1
            if not loop.is_closed():
                loop.call_soon_threadsafe(partial(runner.request_stop, force=self.count > 1))

        for sig in STOP_SIGNALS:
            signal.signal(sig, on_signal)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)

    def hold(self) -> bool:
        """Block the stop signals before a refresh: one that comes from here on stays pending
        (the mask and pending signals survive exec) until the fresh process installs its
        handlers. True when a stop came before, so there is to be no refresh."""
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        return self.count > 0


async def _serve(runner: Any, stops: _StopSignals) -> str:
    stops.install(asyncio.get_running_loop(), runner)
    return await runner.run()


def _exit_now(code: int, patience: float = 1.0) -> None:
    """Exit even when a stopped sync handler's thread is still running (idle pool threads
    get ``patience`` seconds to end, so a normal exit with atexit hooks stays the rule)."""
    deadline = time.monotonic() + patience
    for thread in threading.enumerate():
        if thread.name.startswith("podbook-handler"):
            thread.join(max(0.0, deadline - time.monotonic()))
    if any(t.name.startswith("podbook-handler") and t.is_alive() for t in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_worker(args: argparse.Namespace) -> int:
    """``podbook worker``: serve until SIGTERM / Ctrl-C."""
    from podbook.worker._handlers import load_handler
    from podbook.worker._protocol import BrokerRefused
    from podbook.worker._runner import Runner

    if args.lb:
        from podbook.worker._lb.command import run_app_worker

        return run_app_worker(args)
    configure_logging(args.verbose)
    try:
        config = worker_config(args)
        hide_user_key(config.worker_key)
        handler = load_handler(args.handler)
    except PodbookError as exc:
        return fail("worker", exc)
    runner = Runner(handler, config)
    stops = _StopSignals()
    try:
        reason = _run_loop(_serve(runner, stops))
    except BrokerRefused as exc:
        _exit_now(1)
        return fail("worker", exc, 1)
    if reason == "refresh" and not stops.hold():
        logger.info("worker %s: restarting as a fresh process", config.worker_id)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
    _exit_now(0)
    return 0


def run_worker_env(args: argparse.Namespace) -> int:
    """``podbook worker-env``: print ``export`` lines for a ``runpod`` worker."""
    from podbook.errors import NotFound
    from podbook.worker._config import DEFAULT_PING_INTERVAL_MS
    from podbook.worker._env import format_exports, runpod_config_note, worker_env

    try:
        queue_url, key = key_for(args.endpoint, args.url)
    except NotFound:
        return fail("worker-env", explain_not_found(args.endpoint))
    except PodbookError as exc:
        return fail("worker-env", exc)
    env = worker_env(
        queue_url,
        args.endpoint,
        key,
        worker_id=args.worker_id,
        ping_interval_ms=args.ping_interval or DEFAULT_PING_INTERVAL_MS,
    )
    print(f"# runpod worker -> endpoint {args.endpoint} at {queue_url}")
    print("# RUNPOD_POD_ID names one worker: run `podbook worker-env` again for each worker.")
    print(runpod_config_note())
    print(format_exports(env))
    return 0
