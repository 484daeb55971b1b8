"""Supervised podbook workers: the processes that serve built-in and handler endpoints.

``python -m podbook.worker SPEC --endpoint ID --url URL --concurrency N`` with a fresh worker
key in ``RUNPOD_AI_API_KEY`` (never the user's API key: the emulator's own ``RUNPOD_*`` and
``PODBOOK_*`` keys are removed from the worker's environment). A worker that exits is
started again (backoff from 0.5 s up to 10 s); every worker stops with the emulator, even
one killed with ``kill -9``: on Linux a worker gets SIGTERM when the emulator process dies
(``PR_SET_PDEATHSIG``), so no orphan keeps knocking at a dead port, and it inherits no
descriptor of the emulator (not its listening socket: the port is free for a restart).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable

from podbook.emulator.podruntime.children import detach_child
from podbook.emulator.tasks import cancel_and_wait

log = logging.getLogger("podbook.emulator.broker")

_SECRET_ENV = ("RUNPOD_API_KEY", "RUNPOD_AI_API_KEY", "PODBOOK_API_KEY", "JUPYTER_PASSWORD")


def worker_environment(worker_key: str) -> dict[str, str]:
    """The emulator's environment without any key, plus the worker key."""
    env = {k: v for k, v in os.environ.items() if k not in _SECRET_ENV}
    env["RUNPOD_AI_API_KEY"] = worker_key
    env["PYTHONUNBUFFERED"] = "1"
    return env


class SupervisedWorker:
    """One worker process kept running until :meth:`stop`."""

    def __init__(self, label: str, command: list[str], mint_key: Callable[[], str]) -> None:
        self.label = label
        self.command = command
        self._mint_key = mint_key
        self._stopping = False
        self.process: asyncio.subprocess.Process | None = None
        self.starts = 0
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        backoff = 0.5
        while not self._stopping:
            started = time.monotonic()
            try:
                self.process = await asyncio.create_subprocess_exec(
                    *self.command,
                    env=worker_environment(self._mint_key()),
                    stdin=asyncio.subprocess.DEVNULL,
                    start_new_session=True,
                    preexec_fn=detach_child if sys.platform == "linux" else None,
                )
            except OSError as exc:
                log.error("cannot start worker for %s: %s", self.label, exc)
                return
            self.starts += 1
            log.info("worker for %s started (pid %d)", self.label, self.process.pid)
            code = await self.process.wait()
            if self._stopping:
                return
            backoff = 0.5 if time.monotonic() - started > 10 else min(backoff * 2, 10.0)
            log.warning(
                "worker for %s exited with %s; restarting in %.1f s", self.label, code, backoff
            )
            await asyncio.sleep(backoff)

    async def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL after 3 s) and do not restart it."""
        self._stopping = True
        process = self.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 3)
            except asyncio.TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        await cancel_and_wait(self._task)


class Supervisor:
    """Starts at most one supervised worker per endpoint of an account."""

    def __init__(self) -> None:
        self.workers: dict[tuple[str, str], SupervisedWorker] = {}

    def ensure(
        self,
        key: tuple[str, str],
        spec: str,
        url: str,
        concurrency: int,
        mint_key: Callable[[], str],
    ) -> None:
        """Start the endpoint's worker unless it already runs."""
        if key in self.workers:
            return
        command = [
            sys.executable,
            "-m",
            "podbook.worker",
            spec,
            "--endpoint",
            key[1],
            "--url",
            url,
            "--concurrency",
            str(concurrency),
        ]
        self.workers[key] = SupervisedWorker(f"{key[1]} ({key[0]})", command, mint_key)

    async def drop(self, key: tuple[str, str]) -> None:
        """Stop one endpoint's worker."""
        worker = self.workers.pop(key, None)
        if worker is not None:
            await worker.stop()

    async def stop_all(self) -> None:
        """Stop every worker (emulator shutdown)."""
        workers, self.workers = list(self.workers.values()), {}
        await asyncio.gather(*(w.stop() for w in workers), return_exceptions=True)
