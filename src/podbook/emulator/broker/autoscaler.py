"""Workers the emulator starts from an endpoint's own definition, scaled as the service does.

An endpoint with a start command (its ``args``) gets its workers from here, never from the
user: each worker is ``/bin/sh -c ARGS`` with the endpoint's ``env`` and the variables the
service gives a serverless worker (``RUNPOD_WEBHOOK_*``, ``RUNPOD_AI_API_KEY`` (a worker key
of its own, never the user's), ``RUNPOD_POD_ID`` (the worker id), ``RUNPOD_ENDPOINT_ID``), so
a handler file written for the service (``runpod.serverless.start``) or a ``podbook worker``
command serves jobs unchanged. It runs where the emulator was started, with its Python
environment and ``HOME`` set to a folder of its own (so ``~/.runpod/config.toml`` never
overrides its key).

Every ``TICK`` seconds (and at once when a job arrives) :func:`~podbook.emulator.broker.
scaling.plan` decides from the endpoint's jobs and workers how many to start and which to
stop: a job with no worker starts one (a **cold start**: the time from its start to its
first job request is logged and kept), idle workers stop after ``idleTimeout`` (scale to
zero), ``workers.min`` stay, ``workers.max`` caps them (jobs wait; ``/health`` counts the
workers held back as ``throttled`` and the starting ones as ``initializing``), and a new
release replaces idle workers of the old one while running jobs finish there. A worker that
exits by itself is a crash: its jobs go back to the queue (``Broker.worker_died``) and the
next start waits a back-off (0.5 s doubling to 10 s; reset once a worker lived 10 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from podbook.emulator.broker.core import Broker, now_ms
from podbook.emulator.broker.endpoints import start_command
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.broker.scaling import Load, Settings, WorkerView, plan
from podbook.emulator.broker.supervisor import worker_environment
from podbook.emulator.broker.workerplace import (
    WorkerPlace,
    boxed_cwd,
    open_worker_box,
    process_env,
)
from podbook.emulator.podruntime.box import AsyncBoxProcess, BoxError
from podbook.emulator.podruntime.children import detach_child
from podbook.emulator.tasks import cancel_and_wait
from podbook.worker._config import new_worker_id
from podbook.worker._env import worker_env

log = logging.getLogger("podbook.emulator.broker")

TICK = 0.25
"""Seconds between two scaling decisions."""
STOP_GRACE = 5.0
"""Seconds a stopping worker gets between SIGTERM and SIGKILL."""


@dataclass
class ScaledWorker:
    """A worker process the autoscaler started."""

    worker_id: str
    version: int
    process: Any = None
    """An ``asyncio.subprocess.Process``, or its stand-in for a process in a box."""
    box: Any = None
    """With ``--sandbox bwrap``: the worker's box (``OpenBox``)."""
    started: float = field(default_factory=time.monotonic)
    started_wall: float = field(default_factory=time.time)
    ready_after: float | None = None
    """Seconds from its start to its first job request (its cold start), once known."""
    last_busy: float = field(default_factory=time.monotonic)
    stopping: bool = False
    parked: bool = False
    """Frozen (SIGSTOP) by FlashBoot instead of stopped: resumed for the next cold start."""
    resumed: bool = False
    output: deque[str] = field(default_factory=lambda: deque(maxlen=200))


@dataclass
class EndpointWorkers:
    """The scaled workers of one endpoint and when the next may start."""

    workers: dict[str, ScaledWorker] = field(default_factory=dict)
    backoff: float = 0.0
    next_start: float = 0.0
    throttled: int = 0


class Autoscaler:
    """Starts and stops the workers of every endpoint that has a start command."""

    def __init__(self, broker: Broker, url: Callable[[], str], place: WorkerPlace) -> None:
        self.broker = broker
        self._url = url
        self.place = place
        """Where workers run (their folders, volumes, boxes)."""
        self.endpoints: dict[tuple[str, str], EndpointWorkers] = {}
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.on_worker_ended: Callable[[str, str, str, float], None] | None = None
        """Called with (account, endpoint, worker id, start epoch) when a worker ends
        (billing)."""

    # lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin scaling (on the running loop)."""
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        """Stop scaling and every worker."""
        await cancel_and_wait(self._task)
        self._task = None
        stopping = [
            self._stop(key, worker)
            for key, group in self.endpoints.items()
            for worker in list(group.workers.values())
        ]
        await asyncio.gather(*stopping, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            for queue in list(self.broker.queues.values()):
                try:
                    self.scale(queue)
                except Exception:  # noqa: BLE001 - one endpoint's trouble never stops the rest
                    log.exception("scaling endpoint %s failed", queue.endpoint_id)
            self._forget_deleted()

    def _forget_deleted(self) -> None:
        """The workers of a deleted endpoint stop; its record goes once they are gone (a new
        endpoint of the same id starts from nothing)."""
        for key in [k for k in self.endpoints if k not in self.broker.queues]:
            group = self.endpoints[key]
            for worker in list(group.workers.values()):
                self._spawn_task(self._stop(key, worker))
            if not group.workers:
                del self.endpoints[key]

    # decisions -------------------------------------------------------------------------------

    def scale(self, queue: EndpointQueue) -> None:
        """Start and stop this endpoint's workers as its load and settings ask."""
        command = start_command(queue.record)
        group = self.endpoints.get(queue.key)
        if command is None or not self._url():
            if group is not None and group.workers:  # the start command was removed
                for worker in list(group.workers.values()):
                    self._spawn_task(self._stop(queue.key, worker))
            return
        group = self.endpoints.setdefault(queue.key, EndpointWorkers())
        now = time.monotonic()
        version = int(queue.record.get("version") or 1)
        views = [self._view(queue, worker, now, version) for worker in group.workers.values()]
        stopping = sum(1 for w in group.workers.values() if w.stopping)
        load = load_of(queue)
        decided = plan(Settings.of(queue.record), load, [v for v in views if v], stopping)
        group.throttled = decided.throttled
        keep = parked_allowed(queue.record)
        for worker in [w for w in group.workers.values() if w.parked and w.version != version]:
            self._spawn_task(self._stop(queue.key, worker))  # FlashBoot keeps this release only
        for worker_id in decided.stop:
            worker = group.workers[worker_id]
            if worker.version == version and sum(w.parked for w in group.workers.values()) < keep:
                self._park(queue, worker)
            else:
                self._spawn_task(self._stop(queue.key, worker))
        for _ in range(decided.start):
            parked = next((w for w in group.workers.values() if w.parked and not w.stopping), None)
            if parked is not None:
                self._resume(queue, parked)
            elif now >= group.next_start:
                self._start(queue, group, command)

    def _view(
        self, queue: EndpointQueue, worker: ScaledWorker, now: float, version: int
    ) -> WorkerView | None:
        if worker.stopping or worker.parked:
            return None
        state = queue.workers.get(worker.worker_id)
        if state is not None and worker.ready_after is None:
            # from its start to its first call (the broker stamped it), not to this look
            worker.ready_after = max(0.0, state.started_at - worker.started_wall)
            worker.last_busy = now  # idle from the moment it is ready, not from its start
            state.started_at = worker.started_wall  # its uptime counts from its start
            for line in worker.output:  # what it printed while starting
                state.log.note(line, source="container")
            kind = "resumed by FlashBoot" if worker.resumed else "cold start"
            said = f"ready {worker.ready_after:.2f} s after its start ({kind})"
            state.log.note(said)
            log.info("endpoint %s: worker %s %s", queue.endpoint_id, worker.worker_id, said)
        busy = state is not None and bool(state.running)
        if busy:
            worker.last_busy = now
        elif state is not None:  # a job that began and ended between two looks counts too
            worker.last_busy = max(worker.last_busy, state.last_done)
        return WorkerView(
            worker.worker_id,
            starting=state is None,
            busy=busy,
            idle_for=now - worker.last_busy,
            stale=worker.version != version,
        )

    # workers ---------------------------------------------------------------------------------

    def _start(self, queue: EndpointQueue, group: EndpointWorkers, command: str) -> None:
        worker_id = new_worker_id()
        key = self.broker.mint_worker_key(queue, persist=False)
        env = worker_environment(key)
        env.update({str(k): str(v) for k, v in (queue.record.get("env") or {}).items()})
        env.update(worker_env(self._url(), queue.endpoint_id, key, worker_id=worker_id))
        if not self.place.boxed:
            env.update(process_env(self.place, queue.record, worker_id))
        worker = ScaledWorker(worker_id, int(queue.record.get("version") or 1))
        group.workers[worker_id] = worker  # counted from now: the next tick starts no twin
        self._spawn_task(self._run(queue, group, worker, command, env))

    async def _run(
        self,
        queue: EndpointQueue,
        group: EndpointWorkers,
        worker: ScaledWorker,
        command: str,
        env: dict[str, str],
    ) -> None:
        try:
            worker.process = await self._spawn(queue, worker, command, env)
        except (OSError, BoxError) as exc:
            log.error("endpoint %s: cannot start a worker: %s", queue.endpoint_id, exc)
            group.workers.pop(worker.worker_id, None)
            self._crashed(group)
            return
        worker.started = worker.last_busy = time.monotonic()
        worker.started_wall = time.time()
        log.info(
            "endpoint %s: worker %s started (pid %d)",
            queue.endpoint_id,
            worker.worker_id,
            worker.process.pid,
        )
        reader = asyncio.get_running_loop().create_task(self._read(queue, worker))
        code = await worker.process.wait()
        if worker.stopping:  # what the shell started gets the rest of its grace
            await _group_ended(worker, STOP_GRACE)
        lived = time.monotonic() - worker.started
        if not worker.parked:  # billed up to its exit (a frozen one was when it froze)
            self._bill(queue, worker)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), 2)
        reader.cancel()
        _signal(worker, signal.SIGKILL)  # what it left behind ends with it
        if worker.box is not None:
            await worker.box.close()
        self.place.forget(worker.worker_id)
        group.workers.pop(worker.worker_id, None)
        queue.parked.discard(worker.worker_id)
        if worker.stopping:
            self.broker.worker_died(queue, worker.worker_id, crashed=False)
            return
        log.warning(
            "endpoint %s: worker %s exited with %s after %.1f s; its jobs go back to the queue",
            queue.endpoint_id,
            worker.worker_id,
            code,
            lived,
        )
        self.broker.worker_died(queue, worker.worker_id, crashed=True)
        if lived > 10:
            group.backoff = 0.0
        self._crashed(group)

    async def _spawn(
        self, queue: EndpointQueue, worker: ScaledWorker, command: str, env: dict[str, str]
    ) -> Any:
        """Start ``sh -c COMMAND``: in the worker's own box with ``--sandbox bwrap``, else a
        process of its own session."""
        argv = ["/bin/sh", "-c", command]
        place = self.place
        if place.boxed:
            worker.box = await open_worker_box(
                place, queue.record, worker.worker_id, self._url(), detach_child
            )
            env = {k: v for k, v in env.items() if k != "TMPDIR"} | {"HOME": "/root"}
            return await AsyncBoxProcess.start(worker.box.box, argv, env=env, cwd=boxed_cwd(place))
        return await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=detach_child if sys.platform == "linux" else None,
        )

    @staticmethod
    async def _read(queue: EndpointQueue, worker: ScaledWorker) -> None:
        """The worker's output, line by line, into its log (kept until it calls in)."""
        assert worker.process is not None and worker.process.stdout is not None
        async for raw in worker.process.stdout:
            line = raw.decode("utf-8", "replace").rstrip()
            worker.output.append(line)
            state = queue.workers.get(worker.worker_id)
            if state is not None and worker.ready_after is not None:
                state.log.note(line, source="container")

    def _park(self, queue: EndpointQueue, worker: ScaledWorker) -> None:
        """FlashBoot: freeze an idle worker instead of stopping it (no job reaches it, it is
        not counted, and it bills nothing while frozen)."""
        worker.parked = True
        queue.parked.add(worker.worker_id)
        queue.workers.pop(worker.worker_id, None)
        self._bill(queue, worker)
        _signal(worker, signal.SIGSTOP)
        log.info("endpoint %s: worker %s frozen by FlashBoot", queue.endpoint_id, worker.worker_id)

    def _resume(self, queue: EndpointQueue, worker: ScaledWorker) -> None:
        """Wake a frozen worker for the job that would have been a cold start."""
        worker.parked, worker.resumed, worker.ready_after = False, True, None
        worker.started = worker.last_busy = time.monotonic()
        worker.started_wall = time.time()
        queue.parked.discard(worker.worker_id)
        _signal(worker, signal.SIGCONT)

    def _bill(self, queue: EndpointQueue, worker: ScaledWorker) -> None:
        """Its time from its start (or resume) to now, to :attr:`on_worker_ended`."""
        if self.on_worker_ended is not None:
            account_id, endpoint_id = queue.key
            self.on_worker_ended(account_id, endpoint_id, worker.worker_id, worker.started_wall)

    @staticmethod
    def _crashed(group: EndpointWorkers) -> None:
        group.backoff = min(10.0, group.backoff * 2 if group.backoff else 0.5)
        group.next_start = time.monotonic() + group.backoff

    async def _stop(self, key: tuple[str, str], worker: ScaledWorker) -> None:
        if worker.stopping or worker.process is None:
            return
        worker.stopping = True
        queue = self.broker.queues.get(key)
        if queue is not None:  # from now on it gets no job and is not counted
            queue.parked.add(worker.worker_id)
            state = queue.workers.get(worker.worker_id)
            if state is not None and not state.running:
                queue.workers.pop(worker.worker_id, None)
        log.info("endpoint %s: worker %s stopping", key[1], worker.worker_id)
        _signal(worker, signal.SIGTERM)
        if worker.parked:
            _signal(worker, signal.SIGCONT)  # a frozen worker takes its SIGTERM now
        try:
            await asyncio.wait_for(worker.process.wait(), STOP_GRACE)
        except asyncio.TimeoutError:
            _signal(worker, signal.SIGKILL)
            if worker.box is not None:  # a process whose host pid is unknown: the box ends
                await worker.box.close()

    def _spawn_task(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # what the routes show --------------------------------------------------------------------

    def starting(self, key: tuple[str, str]) -> int:
        """Workers of the endpoint started and not yet asking for jobs."""
        return len(self.starting_workers(key))

    def starting_workers(self, key: tuple[str, str]) -> list[tuple[str, float, int]]:
        """``(id, start time, version)`` of the workers started and not yet asking for jobs
        (a worker listing shows them ``INITIALIZING``; one the broker knows is counted there)."""
        group = self.endpoints.get(key)
        queue = self.broker.queues.get(key)
        if group is None or queue is None:
            return []
        return [
            (w.worker_id, w.started_wall, w.version)
            for w in group.workers.values()
            if not (w.stopping or w.parked) and w.worker_id not in queue.workers
        ]

    def alive_since(self) -> list[tuple[tuple[str, str], float]]:
        """``((account, endpoint), start epoch)`` of every worker process alive now."""
        return [
            (key, worker.started_wall)
            for key, group in self.endpoints.items()
            for worker in group.workers.values()
            if worker.process is not None
            and worker.process.returncode is None
            and not worker.parked
        ]

    def throttled(self, key: tuple[str, str]) -> int:
        """Workers the load asked for beyond ``workers.max``."""
        group = self.endpoints.get(key)
        return group.throttled if group is not None else 0


def parked_allowed(record: dict[str, Any]) -> int:
    """How many idle workers FlashBoot keeps frozen for the next cold start: one with
    ``FLASHBOOT``, up to ``workers.max`` with ``PRIORITY_FLASHBOOT``, none when ``OFF``."""
    mode = record.get("flashboot") or "OFF"
    if mode == "PRIORITY_FLASHBOOT":
        return max(1, int((record.get("workers") or {}).get("max") or 1))
    return 1 if mode == "FLASHBOOT" else 0


async def _group_ended(worker: ScaledWorker, timeout: float) -> None:
    """Wait up to ``timeout`` s for every process of the worker's group to end (its shell may
    end before the command it started)."""
    pid = getattr(worker.process, "pid", -1)
    deadline = time.monotonic() + timeout
    while pid > 0 and time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        await asyncio.sleep(0.05)


def _signal(worker: ScaledWorker, sig: int) -> None:
    """Send ``sig`` to the worker's process group (its host pid: -1 when a boxed process
    ended before it was known)."""
    pid = getattr(worker.process, "pid", -1)
    if pid > 0:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)


def load_of(queue: EndpointQueue) -> Load:
    """The endpoint's jobs that scale its workers."""
    now = now_ms()
    oldest = queue.oldest_queued_at()  # first in line: FIFO, a job queued again goes first
    running = sum(len(w.running) for w in queue.workers.values())
    waiting = len(queue.queued)
    return Load(waiting=waiting, oldest_wait=(now - (oldest or now)) / 1000, in_progress=running)
