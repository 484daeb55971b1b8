"""The runner: one worker process (or thread) serving one endpoint through one handler.

Four loops on one event loop, none of which sleeps to poll:

- **take**: long-polls job-take (job-take-batch with ``batch_size`` = free slots when more
  than one slot is free) whenever a slot is free, and starts each job as a task;
- **stop**: long-polls job-stop and cancels the jobs the broker names (cancel, timeout);
- **ping**: a heartbeat every ``ping_interval`` naming the jobs in progress;
- **watch**: once the broker has not answered for a whole ``ping_interval`` (it was killed,
  or the network with it: every call since the first failure failed, and so does a last ping
  at the end of the interval), abandons the jobs whose handlers still run: their results
  could not be reported, and the broker runs them again (a restarted emulator does, at once
  for a supervised worker's jobs, after this worker's next ping otherwise). Their tasks are
  cancelled and their sync handlers interrupted (:mod:`podbook.worker._interrupt`); one log
  line says so, and the worker goes on trying to reconnect. A job whose handler has finished
  keeps retrying its result post.

:meth:`Runner.request_stop` (SIGTERM in ``podbook worker``, ``.stop()`` of ``serve``)
stops taking jobs, lets running jobs finish for ``shutdown_grace`` seconds, then cancels the
rest; unless the broker does not answer a ping at once (a supervised worker gets SIGTERM when
its emulator dies): then nothing could report those jobs, and they are abandoned at once. A
job whose result asks for a fresh worker (``refresh_worker``) ends the run with
``"refresh"`` once the running jobs are done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import httpx

from podbook.errors import PodbookError
from podbook.worker._config import WorkerConfig
from podbook.worker._execution import JobRun
from podbook.worker._handlers import HandlerKind, handler_kind
from podbook.worker._protocol import (
    BrokerRefused,
    BrokerUnavailable,
    Throttled,
    WorkerChannel,
    log_undelivered,
)
from podbook.worker._push import worker_channel

__all__ = ["ExitReason", "Runner"]

logger = logging.getLogger("podbook.worker")

ExitReason = Literal["stopped", "refresh"]

RECONNECT_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
"""Pauses after consecutive failures to reach the broker (the last one repeats)."""
TAKE_SETTLE_SECONDS = 0.25
"""On stop, how long an in-flight take may still deliver jobs before it is abandoned."""
EARLY_STOP_MEMORY = 30.0
"""Seconds a stop signal for a job not (yet) taken is remembered."""
EMPTY_STOP_POLL_PAUSE = 1.0
"""A broker that answers job-stop at once instead of holding it: pause before asking again."""


class Runner:
    """Serves ``config.endpoint_id`` with ``handler`` until stopped.

    ``await runner.run()`` returns ``"stopped"`` or ``"refresh"``, or raises
    :class:`~podbook.worker._protocol.BrokerRefused` when the broker refuses the worker
    (bad worker key, unknown endpoint). ``on_ready`` is called once the broker has
    answered the first ping.
    """

    def __init__(
        self,
        handler: Callable[..., Any],
        config: WorkerConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self._handler: tuple[Callable[..., Any], HandlerKind] = (handler, handler_kind(handler))
        self.config = config
        self._transport = transport
        self._on_ready = on_ready
        self._loop: asyncio.AbstractEventLoop | None = None
        self._jobs: dict[str, asyncio.Task[None]] = {}
        self._runs: dict[str, JobRun] = {}
        self._stopped_by_broker: set[str] = set()
        self._abandoned: set[str] = set()
        self._early_stops: dict[str, float] = {}  # stop signals that beat their job's take
        self._stopping: asyncio.Event | None = None
        self._force: asyncio.Event | None = None
        self._slot_free: asyncio.Event | None = None
        self._job_started: asyncio.Event | None = None
        self._pending_stop: tuple[ExitReason, bool] | None = None
        self._reason: ExitReason = "stopped"
        self._fatal: BrokerRefused | None = None
        self.counts = {"completed": 0, "failed": 0, "stopped": 0, "abandoned": 0}
        self.max_running = 0

    # -- control -------------------------------------------------------------------------

    @property
    def handler(self) -> Callable[..., Any]:
        """The handler that the next job runs."""
        return self._handler[0]

    @property
    def kind(self) -> HandlerKind:
        """How :attr:`handler` is run."""
        return self._handler[1]

    def swap_handler(self, handler: Callable[..., Any]) -> None:
        """Run ``handler`` for the jobs started from now on (safe from any thread: the pair
        is replaced at once). Jobs already running finish on the handler they started with."""
        self._handler = (handler, handler_kind(handler))

    @property
    def running_jobs(self) -> list[str]:
        """Ids of the jobs in progress."""
        return list(self._jobs)

    def request_stop(self, *, force: bool = False, reason: ExitReason = "stopped") -> None:
        """Stop taking jobs and shut down (call on the runner's loop; see
        :meth:`request_stop_threadsafe`). ``force`` skips the grace period."""
        if self._stopping is None or self._force is None:
            self._pending_stop = (reason, force)
            return
        if not self._stopping.is_set():
            self._reason = reason
            self._stopping.set()
        elif reason == "stopped":
            self._reason = "stopped"  # a stop asked during a refresh ends the worker
        if force:
            self._force.set()

    def request_stop_threadsafe(self, *, force: bool = False) -> None:
        """:meth:`request_stop` from another thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            self._pending_stop = ("stopped", force)
            return
        loop.call_soon_threadsafe(lambda: self.request_stop(force=force))

    # -- main ----------------------------------------------------------------------------

    async def run(self) -> ExitReason:
        """Serve until stopped; see the class docstring."""
        self._loop = asyncio.get_running_loop()
        self._stopping, self._force = asyncio.Event(), asyncio.Event()
        self._slot_free, self._job_started = asyncio.Event(), asyncio.Event()
        if self._pending_stop is not None:
            reason, force = self._pending_stop
            self.request_stop(reason=reason, force=force)
        size = 2 * self.config.concurrency + 4  # room for stopped sync handlers still running
        executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="podbook-handler")
        channel = worker_channel(self.config, transport=self._transport)
        logger.info(
            "worker %s serving %s at %s with %s handler %s (concurrency %d)",
            self.config.worker_id,
            self.config.endpoint_id or "its endpoint",
            self.config.broker_url,
            self.kind.value,
            getattr(self.handler, "__qualname__", type(self.handler).__name__),
            self.config.concurrency,
        )
        ping = asyncio.create_task(self._ping_loop(channel), name="podbook-ping")
        stop = asyncio.create_task(self._stop_loop(channel), name="podbook-job-stop")
        take = asyncio.create_task(self._take_loop(channel, executor), name="podbook-job-take")
        watch = asyncio.create_task(self._watch_loop(channel), name="podbook-watch")
        for task in (ping, stop, take, watch):
            task.add_done_callback(self._loop_ended)
        try:
            await self._stopping.wait()
            if not self._force.is_set():
                # a take answer already on its way carries jobs the broker counts as ours
                await asyncio.wait([take], timeout=TAKE_SETTLE_SECONDS)
            take.cancel()
            await self._drain(channel)
        finally:
            loops = (take, stop, ping, watch)
            for task in (*loops, *self._jobs.values()):
                task.cancel()
            await asyncio.gather(*loops, *self._jobs.values(), return_exceptions=True)
            if self._fatal is None and channel.contact.answering:
                await channel.farewell()
            await channel.aclose()
            executor.shutdown(wait=False, cancel_futures=True)
        logger.info(
            "worker %s %s: %d completed, %d failed, %d stopped, %d abandoned",
            self.config.worker_id,
            "refreshing" if self._reason == "refresh" else "stopped",
            self.counts["completed"],
            self.counts["failed"],
            self.counts["stopped"],
            self.counts["abandoned"],
        )
        if self._fatal is not None:
            raise self._fatal
        return self._reason

    def _loop_ended(self, task: asyncio.Task[None]) -> None:
        """A loop that dies of a bug stops the worker rather than leaving it half alive."""
        if task.cancelled() or task.exception() is None:
            return
        logger.error(
            "worker %s: internal error in %s",
            self.config.worker_id,
            task.get_name(),
            exc_info=task.exception(),
        )
        self.request_stop(force=True)

    async def _drain(self, channel: WorkerChannel) -> None:
        """Let running jobs finish (up to the grace period, or until forced), unless the
        broker does not answer: then they are abandoned at once."""
        assert self._force is not None
        if not self._jobs:
            return
        if not self._force.is_set() and not await self._broker_answers(channel):
            if not self._jobs:
                return
            logger.warning(
                "worker %s: the broker at %s cannot be reached (%s); not waiting for %s",
                self.config.worker_id,
                self.config.broker_url,
                channel.contact.error,
                self._abandon(list(self._jobs), "could not be reported"),
            )
            return
        logger.info(
            "worker %s: waiting up to %g s for %d running job(s)",
            self.config.worker_id,
            self.config.shutdown_grace,
            len(self._jobs),
        )
        force = asyncio.create_task(self._force.wait())
        deadline = time.monotonic() + self.config.shutdown_grace
        try:
            while self._jobs and not self._force.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                await asyncio.wait(
                    [force, *self._jobs.values()], timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
        finally:
            force.cancel()
        for job_id in self._jobs:
            logger.warning("job %s abandoned at shutdown (no result posted)", job_id)

    async def _broker_answers(self, channel: WorkerChannel) -> bool:
        """Whether the broker answers a ping now (given a ping interval). True when that is
        not known: the stop was forced meanwhile."""
        assert self._force is not None
        probe = asyncio.create_task(channel.probe(self._jobs, self.config.ping_interval))
        force = asyncio.create_task(self._force.wait())
        try:
            await asyncio.wait([probe, force], return_when=asyncio.FIRST_COMPLETED)
        finally:
            force.cancel()
            probe.cancel()
        if not probe.done() or probe.cancelled() or probe.exception() is not None:
            return True
        return probe.result()

    def _abandon(self, job_ids: list[str], fate: str) -> str:
        """Cancel ``job_ids`` and interrupt their sync handlers; the words for a log line:
        ``job ID: its result {fate}``."""
        for job_id in job_ids:
            self._abandoned.add(job_id)
            self._jobs[job_id].cancel()
            self._runs[job_id].interrupt()
        if len(job_ids) == 1:
            return f"job {job_ids[0]}: its result {fate}"
        return f"jobs {', '.join(job_ids)}: their results {fate}"

    async def _pause(self, seconds: float) -> None:
        """Wait ``seconds``, or less when the runner is stopping."""
        assert self._stopping is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    # -- loops ---------------------------------------------------------------------------

    async def _take_loop(self, channel: WorkerChannel, executor: ThreadPoolExecutor) -> None:
        assert self._stopping is not None and self._slot_free is not None
        failures = 0
        while not self._stopping.is_set():
            free = self.config.concurrency - self._executing()
            if free <= 0:
                self._slot_free.clear()
                await self._slot_free.wait()
                continue
            try:
                jobs = await channel.take(free, in_progress=bool(self._jobs))
            except BrokerRefused as exc:
                self._fatal = exc
                logger.error("worker %s: %s", self.config.worker_id, exc)
                self.request_stop(force=True)
                return
            except Throttled as exc:
                await self._pause(exc.retry_after)
                continue
            except BrokerUnavailable as exc:
                if failures == 0:
                    logger.warning("worker %s: %s; retrying", self.config.worker_id, exc)
                await self._pause(RECONNECT_DELAYS[min(failures, len(RECONNECT_DELAYS) - 1)])
                failures += 1
                continue
            if failures:
                logger.info("worker %s: broker reachable again", self.config.worker_id)
            failures = 0
            for job in jobs:
                self._start(job, channel, executor)

    def _start(
        self, job: dict[str, Any], channel: WorkerChannel, executor: ThreadPoolExecutor
    ) -> None:
        assert self._job_started is not None and self._slot_free is not None
        job_id = job["id"]
        if job_id in self._jobs:
            return
        if self._early_stops.pop(job_id, None) is not None:
            self.counts["stopped"] += 1
            logger.info("job %s stopped by the broker before it started", job_id)
            return
        handler, kind = self._handler  # one read: a swap from another thread is atomic
        # The next take goes out as soon as the handler is done, while its result travels.
        run = JobRun(job, handler, kind, self.config, channel, executor, self._slot_free.set)
        task = asyncio.create_task(self._run_job(run), name=f"podbook-job-{job_id}")
        task.add_done_callback(lambda done: self._job_task_done(job_id, done))
        self._jobs[job_id] = task
        self._runs[job_id] = run
        self.max_running = max(self.max_running, self._executing())
        self._job_started.set()

    def _executing(self) -> int:
        """How many jobs hold a slot: taken, their handler not done yet."""
        return sum(1 for run in self._runs.values() if not run.slot_freed)

    def _job_task_done(self, job_id: str, task: asyncio.Task[None]) -> None:
        """A job's task ended. One cancelled before its first step (a stop that came right
        after the take) never ran :meth:`_run_job`, nor its ``finally``: free its slot here,
        or the worker would count it as running for ever and take no other job."""
        assert self._slot_free is not None
        if self._jobs.get(job_id) is not task:
            return  # _run_job ran and cleaned up
        del self._jobs[job_id]
        self._runs.pop(job_id, None)
        if job_id in self._stopped_by_broker:
            self._stopped_by_broker.discard(job_id)
            self.counts["stopped"] += 1
            logger.info("job %s stopped by the broker before it started", job_id)
        elif job_id in self._abandoned:
            self.counts["abandoned"] += 1
        self._abandoned.discard(job_id)
        self._slot_free.set()

    async def _run_job(self, run: JobRun) -> None:
        assert self._slot_free is not None
        job_id = run.job_id
        logger.debug("job %s started", job_id)
        try:
            outcome = await run.run()
        except asyncio.CancelledError:
            if job_id in self._stopped_by_broker:
                self.counts["stopped"] += 1
                logger.info("job %s stopped by the broker (no result posted)", job_id)
                return
            if job_id in self._abandoned:
                self.counts["abandoned"] += 1  # said in the line that abandoned it
                return
            raise
        except PodbookError as exc:
            self.counts["failed"] += 1
            log_undelivered(job_id, "result not delivered", exc)
        except Exception:  # a bug in the runner: keep serving other jobs
            self.counts["failed"] += 1
            logger.exception("job %s: internal error of the worker", job_id)
        else:
            self.counts["failed" if outcome.failed else "completed"] += 1
            log = logger.info if outcome.failed else logger.debug
            log("job %s %s", job_id, outcome.summary())
            if outcome.refresh:
                logger.info("job %s asked for a fresh worker (refresh_worker)", job_id)
                self.request_stop(reason="refresh")
        finally:
            self._jobs.pop(job_id, None)
            self._runs.pop(job_id, None)
            self._stopped_by_broker.discard(job_id)
            self._abandoned.discard(job_id)
            self._slot_free.set()

    async def _stop_loop(self, channel: WorkerChannel) -> None:
        assert self._job_started is not None
        failures = 0
        while True:
            self._job_started.clear()
            asked = time.monotonic()
            try:
                job_ids = await channel.stop_signals()
            except BrokerRefused as exc:
                logger.info("worker %s: per-job stop unavailable (%s)", self.config.worker_id, exc)
                return
            except Throttled as exc:
                await asyncio.sleep(exc.retry_after)
                continue
            except BrokerUnavailable:
                await asyncio.sleep(RECONNECT_DELAYS[min(failures, len(RECONNECT_DELAYS) - 1)])
                failures += 1
                continue
            failures = 0
            self._stop_jobs(job_ids)
            if not job_ids and time.monotonic() - asked < 0.05:
                # the broker did not hold the poll: ask again on the next job, or in a while
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._job_started.wait(), EMPTY_STOP_POLL_PAUSE)

    def _stop_jobs(self, job_ids: list[str]) -> None:
        """Cancel the named running jobs; remember stops for jobs not taken yet."""
        now = time.monotonic()
        for job_id in job_ids:
            task = self._jobs.get(job_id)
            if task is not None and not task.done():
                self._stopped_by_broker.add(job_id)
                task.cancel()
            elif task is None:  # its take answer may still be on the way
                self._early_stops[job_id] = now
        for job_id, when in list(self._early_stops.items()):
            if now - when > EARLY_STOP_MEMORY:
                del self._early_stops[job_id]

    async def _ping_loop(self, channel: WorkerChannel) -> None:
        ready = False
        if not self.config.ping_url:
            if self._on_ready is not None:
                self._on_ready()
            return
        while True:
            try:
                await channel.ping(self._jobs)
            except PodbookError as exc:
                logger.debug("worker %s: ping failed: %s", self.config.worker_id, exc)
            else:
                if not ready and self._on_ready is not None:
                    self._on_ready()
                ready = True
            await asyncio.sleep(self.config.ping_interval)

    async def _watch_loop(self, channel: WorkerChannel) -> None:
        """Abandon the jobs whose handlers still run once the broker has not answered for a
        whole ping interval (see the module docstring)."""
        contact = channel.contact
        window = self.config.ping_interval
        handled: float | None = None  # the outage whose jobs were abandoned
        while True:
            since = contact.down_since
            if since is None or since == handled:
                await contact.changed()
                continue
            left = since + window - time.monotonic()
            if left > 0:
                await contact.changed(timeout=left)
                continue
            if self._working() and await channel.probe(self._jobs, window):
                continue  # it answers again
            if contact.down_since != since:
                continue  # it answered meanwhile, then failed again: a new interval
            handled = since
            working = self._working()
            if working:
                logger.warning(
                    "worker %s: the broker at %s has not answered for %.1f s (%s); abandoned "
                    "%s; trying to reconnect",
                    self.config.worker_id,
                    self.config.broker_url,
                    time.monotonic() - since,
                    contact.error,
                    self._abandon(working, "could no longer be reported"),
                )

    def _working(self) -> list[str]:
        """The running jobs whose handlers have not finished (not abandoned yet)."""
        return [
            job_id
            for job_id, run in self._runs.items()
            if not run.reporting and job_id not in self._abandoned and not self._jobs[job_id].done()
        ]
