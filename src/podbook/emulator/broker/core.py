"""The queue broker: every state move of a job, and the endpoints and workers they need.

States: IN_QUEUE → IN_PROGRESS → COMPLETED | FAILED | TIMED_OUT; CANCELLED from IN_QUEUE or
IN_PROGRESS (a running job's worker is told through job-stop); FAILED/TIMED_OUT → IN_QUEUE by
retry (same id and input, output cleared). Deadlines are event-loop timers: TTL (deleted in
any state), ``executionTimeout`` (→ TIMED_OUT) and result retention (deleted). Hot state
lives in memory; each move a request causes is committed to SQLite before that request
answers (``BrokerTables.flush``), so a job whose ``/run`` got its id, a take that handed a
job out and a result that was acknowledged all survive a ``kill -9`` of the emulator.

Crash recovery: a job stored IN_PROGRESS is restored IN_PROGRESS on its worker, *unconfirmed*:
a worker outlives the emulator and may still be running it (or be posting its result). The
worker confirms it by a result, a stream post or a ping that lists it; a ping that does not
list it, a take with ``job_in_progress=0``, an unhealthy ping or ``worker_gone_seconds``
without a word put it back in the queue, first in line. So a job runs once even when the
emulator dies mid-job, and a job whose worker died with the emulator still runs. Jobs of
endpoints with a handler go back to the queue at once: their supervised workers stop with
the emulator (and their in-memory worker keys die with it).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

import orjson

from podbook.emulator.broker import endpoints as endpoint_defs
from podbook.emulator.broker.config import BrokerSettings
from podbook.emulator.broker.errors import QueueRefusal, endpoint_not_found, job_not_found
from podbook.emulator.broker.jobs import (
    CANCELLED,
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    IN_QUEUE,
    TIMED_OUT,
    Job,
    Waiters,
    hold,
    new_job_id,
)
from podbook.emulator.broker.limits import (
    RUN_RETENTION_MS,
    RUNSYNC_RETENTION_MAX_MS,
    RUNSYNC_RETENTION_MS,
    STREAM_CHUNK_MAX_BYTES,
    TTL_DEFAULT_MS,
)
from podbook.emulator.broker.persistence import BrokerTables
from podbook.emulator.broker.queues import EndpointQueue, WorkerState
from podbook.emulator.broker.releases import first_release
from podbook.emulator.broker.streams import has_chunks_for, read_chunks, split_chunk
from podbook.emulator.memory import TrimAfterRelease, release_if_empty
from podbook.emulator.store import key_digest

log = logging.getLogger("podbook.emulator.broker")


MAX_CRASH_RETRIES = 2
"""How often a job goes back to the queue when the worker running it dies (then FAILED)."""
SMALL_HEAP_JOBS = 10_000
"""Jobs held at most for the trim after a burst to collect first (:class:`TrimAfterRelease`):
a full collection then takes tens of milliseconds, not the seconds of a million jobs."""


def now_ms() -> int:
    """Wall-clock milliseconds."""
    return int(time.time() * 1000)


class Broker:
    """All queues of all accounts, the jobs in them and the workers serving them."""

    def __init__(self, settings: BrokerSettings, tables: BrokerTables) -> None:
        self.settings = settings
        self.tables = tables
        self.queues: dict[tuple[str, str], EndpointQueue] = {}
        self.jobs: dict[str, Job] = {}
        self.worker_keys: dict[str, tuple[str, str]] = tables.load_worker_keys()
        self.on_job_ended: Callable[[Job], None] | None = None
        self.on_demand: Callable[[EndpointQueue], None] | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._trims = TrimAfterRelease(small=lambda: len(self.jobs) <= SMALL_HEAP_JOBS)
        self.closing = False
        self.unconfirmed: set[str] = set()
        """Restored IN_PROGRESS jobs their worker has not yet claimed (see the module doc)."""
        self.lost_from: dict[str, str] = {}
        """job id → the worker a restored job was taken back from: while nobody else has
        taken it, that worker's result is still accepted (it was running it after all)."""
        for account_id, record in tables.load_endpoints():
            self.queues[(account_id, record["id"])] = EndpointQueue(
                account_id, record["id"], record
            )
        self._loaded = tables.load_jobs()

    # start-up and shutdown ---------------------------------------------------------------

    def start(self) -> None:
        """Put stored jobs back (on the running loop) and start the worker liveness sweep.

        A job that was IN_PROGRESS when the emulator stopped stays IN_PROGRESS on its worker,
        unconfirmed, for ``worker_gone_seconds`` (see the module doc); one stored without a
        worker, or of an endpoint with a handler (served by supervised workers, which stop
        with the emulator), goes back to the queue at once.
        """
        now = now_ms()
        for doc in sorted(self._loaded, key=lambda d: d["queued_at"]):
            job = Job.from_doc(doc)
            queue = self.endpoint(job.account_id, job.endpoint_id)
            if queue is None or self._deadline(job) <= now:
                self.tables.delete_job(job.id)
                continue
            if job.status == IN_PROGRESS and (
                job.worker_id is None or job.started_at is None or queue.record.get("handler")
            ):  # a handler endpoint's supervised worker died with the old process
                job.status = IN_QUEUE
                job.started_at = None
                job.worker_id = None
                self._save(job)
            self.jobs[job.id] = job
            queue.jobs[job.id] = job
            queue.retries += job.retried
            queue.count_move(None, job.status)
            if job.status == IN_QUEUE:
                queue.push(job)
            elif job.status == IN_PROGRESS:
                self._restore_running(queue, job)
            self._arm_expiry(job)
        self._loaded = []
        self.tables.flush()
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_gone_workers())

    def release_polls(self) -> None:
        """The server is shutting down: answer every held take and stop poll now (204)."""
        self.closing = True
        for queue in self.queues.values():
            while queue.takers:
                taker = queue.takers.popleft()
                if not taker.done():
                    taker.set_result(None)
            for worker in queue.workers.values():
                if worker.stop_waiter is not None and not worker.stop_waiter.done():
                    worker.stop_waiter.set_result(None)

    async def stop(self) -> None:
        """Stop timers and background tasks; write what is pending."""
        self.tables.flush()
        if self._sweeper is not None:
            self._sweeper.cancel()
        self._trims.cancel()
        for job in self.jobs.values():
            for handle in job.timers.values():
                handle.cancel()

    # endpoints ---------------------------------------------------------------------------

    def endpoint(self, account_id: str, endpoint_id: str) -> EndpointQueue | None:
        """The account's endpoint (built-ins are made on first use), or None."""
        queue = self.queues.get((account_id, endpoint_id))
        if queue is None and endpoint_id in endpoint_defs.BUILTIN_HANDLERS:
            queue = EndpointQueue(
                account_id, endpoint_id, endpoint_defs.builtin_record(endpoint_id)
            )
            self.queues[(account_id, endpoint_id)] = queue
        return queue

    def require_endpoint(self, account_id: str, endpoint_id: str) -> EndpointQueue:
        """The account's endpoint, or a 404 :class:`QueueRefusal`."""
        queue = self.endpoint(account_id, endpoint_id)
        if queue is None:
            raise endpoint_not_found(endpoint_id)
        return queue

    def list_endpoints(self, account_id: str) -> list[dict[str, Any]]:
        """The account's endpoints, built-ins first."""
        for builtin in endpoint_defs.BUILTIN_HANDLERS:
            self.endpoint(account_id, builtin)
        records = [q.record for (acct, _), q in self.queues.items() if acct == account_id]
        return sorted(records, key=lambda r: (not r.get("builtin"), r["createdAt"]))

    def create_endpoint(
        self, account_id: str, name: str, handler: str | None, fields: dict[str, Any]
    ) -> EndpointQueue:
        """Define an endpoint; its id is ``name`` when that is free and URL-safe."""
        endpoint_id = name
        if (
            endpoint_defs.check_endpoint_id(name) is not None
            or self.endpoint(account_id, name) is not None
        ):
            endpoint_id = endpoint_defs.generated_endpoint_id()
        if handler is not None:
            handler = endpoint_defs.absolute_handler(handler)
        record = endpoint_defs.endpoint_record(endpoint_id, name, handler=handler, fields=fields)
        record = first_release(record)
        self.tables.save_endpoint(account_id, record)
        queue = EndpointQueue(account_id, endpoint_id, record)
        self.queues[queue.key] = queue
        return queue

    def update_endpoint(self, queue: EndpointQueue, **fields: Any) -> None:
        """Change fields of an endpoint's record (stored at once)."""
        queue.record = {**queue.record, **fields}
        self.tables.save_endpoint(queue.account_id, queue.record)

    def delete_endpoint(self, queue: EndpointQueue) -> None:
        """Remove an endpoint with its jobs (waiting workers get 404 next time).

        Its queued and running jobs end CANCELLED first (held ``runsync`` and ``/status``
        calls answer so, webhooks are sent, running workers are told to stop).
        """
        for job in list(queue.jobs.values()):
            self.cancel(job)
        for job in list(queue.jobs.values()):
            self._forget(job)
        self.tables.delete_endpoint(queue.account_id, queue.endpoint_id)
        for digest, owner in list(self.worker_keys.items()):
            if owner == queue.key:
                del self.worker_keys[digest]
        for taker in queue.takers:
            if not taker.done():
                taker.set_result(None)
        self.queues.pop(queue.key, None)

    # worker keys -------------------------------------------------------------------------

    def mint_worker_key(self, queue: EndpointQueue, *, persist: bool = True) -> str:
        """A new worker key for this endpoint of this account (only its digest is kept)."""
        worker_key = "wk_" + secrets.token_urlsafe(24)
        digest = (
            self.tables.add_worker_key(worker_key, *queue.key)
            if persist
            else key_digest(worker_key)
        )
        self.worker_keys[digest] = queue.key
        return worker_key

    def worker_scope(self, worker_key: str) -> tuple[str, str] | None:
        """``(account_id, endpoint_id)`` a worker key serves, or None."""
        return self.worker_keys.get(key_digest(worker_key))

    # client operations -------------------------------------------------------------------

    def submit(
        self, queue: EndpointQueue, body: dict[str, Any], kind: str, wait_ms: int = 0
    ) -> Job:
        """Accept a validated submission body (``kind`` ``run`` or ``sync``).

        ``wait_ms``: the ``wait`` a ``/runsync`` asked for (0 when none): its result is kept
        1 min after it ends, or that long when longer, 5 min at most.
        """
        now = now_ms()
        policy = body.get("policy") or {}
        scale = self.settings.time_scale
        if kind == "sync":
            retention = min(max(RUNSYNC_RETENTION_MS, wait_ms), RUNSYNC_RETENTION_MAX_MS)
        else:
            retention = RUN_RETENTION_MS
        job = Job(
            id=new_job_id(kind),
            account_id=queue.account_id,
            endpoint_id=queue.endpoint_id,
            kind=kind,
            input=body["input"],
            webhook=body.get("webhook"),
            policy=body.get("policy"),
            s3_config=body.get("s3Config"),
            status=IN_QUEUE,
            submitted_at=now,
            queued_at=now,
            low_priority=bool(policy.get("lowPriority", False)),
            execution_timeout_ms=int(
                policy.get("executionTimeout") or queue.record.get("timeout") or 600_000
            ),
            ttl_deadline=now + int(int(policy.get("ttl") or TTL_DEFAULT_MS) * scale),
            retention_ms=retention,
        )
        self.jobs[job.id] = job
        queue.jobs[job.id] = job
        queue.count_move(None, IN_QUEUE)
        self._save(job)
        if kind != "sync":
            self.tables.flush()  # committed before the id is answered
        queue.push(job)
        self._arm_expiry(job)
        if not job.low_priority and self.on_demand is not None:
            self.on_demand(queue)
        return job

    def find_job(self, queue: EndpointQueue, job_id: str) -> Job:
        """A job of this endpoint, or 404."""
        job = queue.jobs.get(job_id)
        if job is None:
            raise job_not_found(job_id)
        return job

    async def wait_done(self, job: Job, timeout: float) -> None:
        """Hold until the job ends (or is deleted) or ``timeout`` seconds pass."""
        if job.terminal or job.id not in self.jobs:
            return
        if job.done_event is None:
            job.done_event = Waiters()
        await job.done_event.wait(timeout)

    def set_ttl(self, job: Job, ttl_ms: int) -> None:
        """``?ttl=``: the job's time to live, counted from its submission."""
        job.ttl_deadline = job.submitted_at + int(ttl_ms * self.settings.time_scale)
        self._save(job)
        if job.ttl_deadline <= now_ms():
            self._expire(job)
        else:
            self._arm_expiry(job)
        self.tables.flush()

    def cancel(self, job: Job) -> None:
        """IN_QUEUE or IN_PROGRESS → CANCELLED (a running job's worker is told to stop)."""
        if job.terminal:
            return
        queue = self.queues[job.key]
        if job.status == IN_QUEUE:
            queue.remove(job)
        else:
            self._release_worker(job, stop=True)
        self._finish(job, CANCELLED)
        self.tables.flush()

    def retry(self, job: Job) -> None:
        """FAILED or TIMED_OUT → IN_QUEUE: same id and input, previous output removed."""
        if job.status not in (FAILED, TIMED_OUT):
            raise QueueRefusal(
                400,
                f"job {job.id} is {job.status}; only FAILED or TIMED_OUT jobs can be retried",
            )
        queue = self.queues[job.key]
        job.clear_result()
        queue.count_retry(job)
        job.queued_at = now_ms()
        self._move(job, IN_QUEUE)
        self._save(job)
        self.tables.flush()
        queue.push(job)
        self._arm_expiry(job)
        if not job.low_priority and self.on_demand is not None:
            self.on_demand(queue)

    def purge(self, queue: EndpointQueue) -> int:
        """Cancel every waiting job (running ones go on); how many were removed."""
        removed = [*queue.queued.values(), *queue.queued_low.values()]
        queue.queued.clear()
        queue.queued_low.clear()
        for job in removed:
            self._finish(job, CANCELLED)
        self.tables.flush()
        return len(removed)

    async def drain_stream(
        self, job: Job, wait: float, cursor: int | None = None
    ) -> dict[str, Any]:
        """``/stream``: hold until a chunk or the end (or ``wait`` s), then drain the buffer
        (or, with ``cursor``, answer the chunks from there on: see ``broker.streams``)."""
        if not has_chunks_for(job, cursor) and not job.terminal:
            if job.chunk_event is None:
                job.chunk_event = Waiters()
            await job.chunk_event.wait(wait)
            if job.id not in self.jobs:
                raise job_not_found(job.id)
        return read_chunks(job, cursor)

    # worker operations -------------------------------------------------------------------

    async def take(
        self,
        queue: EndpointQueue,
        worker_id: str,
        count: int,
        wait: float,
        gone: asyncio.Future[None] | None = None,
        *,
        idle: bool = False,
    ) -> list[Job]:
        """Up to ``count`` jobs for a worker, holding up to ``wait`` s while none waits.

        ``gone`` resolves when the worker's connection closes: a worker that died while
        waiting must not be handed a job. ``idle``: the take said ``job_in_progress=0``, so
        restored jobs still on this worker's name go back to the queue first. The jobs
        handed out are committed as IN_PROGRESS before the answer leaves.
        """
        if worker_id in queue.parked:  # frozen as it asked: it hears nothing until resumed
            return []
        worker = queue.worker(worker_id)
        if idle:
            self._requeue_unconfirmed(queue, worker, keep=())
        if endpoint_defs.start_command(queue.record) and worker.version != queue.record.get(
            "version"
        ):  # a worker the emulator started for an older release: new jobs go to new ones
            await asyncio.sleep(min(wait, 1.0))
            return []
        worker.in_flight += 1
        try:
            deadline = time.monotonic() + wait
            loop = asyncio.get_running_loop()
            while not queue.waiting():
                left = deadline - time.monotonic()
                if left <= 0 or self.closing or self.queues.get(queue.key) is not queue:
                    return []
                taker: asyncio.Future[None] = loop.create_future()
                queue.takers.append(taker)
                try:
                    woken = await hold(taker, left, gone)
                except asyncio.CancelledError:
                    if taker.cancelled():
                        queue.drop_taker(taker)
                    else:  # woken for a job it will not take: wake the next one
                        queue.pass_wakeup()
                    raise
                if not woken:
                    queue.drop_taker(taker)
                    return []
                if (gone is not None and gone.done()) or worker_id in queue.parked:
                    queue.pass_wakeup()
                    return []
            taken: list[Job] = []
            while len(taken) < count:
                job = queue.pop()
                if job is None:
                    break
                self._start(job, worker)
                taken.append(job)
            self._commit(*taken)
            return taken
        finally:
            worker.in_flight -= 1
            worker.touch()

    async def stop_signals(
        self,
        queue: EndpointQueue,
        worker_id: str,
        wait: float,
        gone: asyncio.Future[None] | None = None,
    ) -> list[str]:
        """Job ids this worker must stop, holding up to ``wait`` s while there are none."""
        worker = queue.worker(worker_id)
        worker.in_flight += 1
        try:
            if not worker.stop_ids and not self.closing:
                waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                worker.stop_waiter = waiter
                try:
                    await hold(waiter, wait, gone)
                finally:
                    if worker.stop_waiter is waiter:
                        worker.stop_waiter = None
                if gone is not None and gone.done():
                    return []  # signals stay queued for the worker's next request
            ids, worker.stop_ids = worker.stop_ids, []
            return ids
        finally:
            worker.in_flight -= 1
            worker.touch()

    def result(self, queue: EndpointQueue, worker_id: str, job_id: str, body: Any) -> None:
        """A job-done post: a progress update, or the job's final result."""
        worker = queue.worker(worker_id)
        job = self._running_job(queue, worker, job_id)
        if not isinstance(body, dict):
            raise QueueRefusal(400, 'result body must be a JSON object such as {"output": ...}')
        if body.get("status") == IN_PROGRESS:
            job.progress = body.get("output")
            return
        if "output" in body:
            job.output = body["output"]
        failed = body.get("error") not in (None, "")
        if failed:
            job.error = body["error"]
        if body.get("stopPod"):
            queue.workers.pop(worker.worker_id, None)
        self._release_worker(job, stop=False)
        self._finish(job, FAILED if failed else COMPLETED)
        self._commit(job)  # an acknowledged result is never run again

    def stream_chunk(
        self, queue: EndpointQueue, worker_id: str, job_id: str, body: Any, size: int
    ) -> None:
        """A job-stream post: one chunk ``{"output": c[, "metrics": m]}``, or several in
        order ``{"stream": [{"output": c[, "metrics": m]}, ...]}``. Each becomes a ``/stream``
        item (split when over the size limit; metrics stay on the last piece)."""
        job = self._running_job(queue, queue.worker(worker_id), job_id)
        if isinstance(body, dict) and isinstance(body.get("stream"), list):
            posted = body["stream"]
        else:
            posted = [body]
        if not all(isinstance(item, dict) and "output" in item for item in posted):
            raise QueueRefusal(
                400,
                'stream body must be {"output": chunk} or {"stream": [{"output": chunk}, ...]}',
            )
        for item in posted:
            item_size = (
                size
                if len(posted) == 1
                else (len(orjson.dumps(item["output"])) if size > STREAM_CHUNK_MAX_BYTES else 0)
            )
            pieces: list[dict[str, Any]] = [
                {"output": piece} for piece in split_chunk(item["output"], item_size)
            ]
            if item.get("metrics") is not None:
                pieces[-1]["metrics"] = item["metrics"]
            job.chunks.extend(pieces)
        event = job.chunk_event
        if event is not None:
            job.chunk_event = None
            event.wake()

    def ping(
        self, queue: EndpointQueue, worker_id: str, healthy: bool, running: list[str] | None = None
    ) -> None:
        """A heartbeat; an unhealthy one marks the worker gone at once.

        ``running`` (the ping's ``job_id`` list) names the jobs the worker still runs: one it
        was told to stop (cancelled, timed out, expired) is told again, because the
        ``runpod`` SDK loses a stop that arrives before the job's task has started; so is
        one cancelled or timed out while this worker was marked gone (it missed the stop).
        """
        if worker_id in queue.parked:
            return
        worker = queue.worker(worker_id)
        if not healthy:
            self._requeue_unconfirmed(queue, worker, keep=())
            queue.workers.pop(worker_id, None)
            return
        if running is not None:
            self._requeue_unconfirmed(queue, worker, keep=running)
            for job_id in running:
                if job_id in self.lost_from and (job := queue.jobs.get(job_id)) is not None:
                    self._reclaim(queue, worker, job)
            for job_id in running:  # stopped while the worker was marked gone
                job = queue.jobs.get(job_id)
                if (
                    job is not None
                    and job_id not in worker.stopped
                    and job.status in (CANCELLED, TIMED_OUT)
                    and job.worker_id == worker_id
                ):
                    worker.stopped[job_id] = None
            again = worker.resend_stops(running)
            if again:
                log.info(
                    "worker %s still runs stopped job(s) %s; stop sent again",
                    worker_id,
                    ", ".join(again),
                )

    # internals ---------------------------------------------------------------------------

    def worker_died(self, queue: EndpointQueue, worker_id: str, *, crashed: bool) -> None:
        """A worker process the emulator started has ended: it is gone from the endpoint, and
        the jobs it was running go back to the queue, first in line (a crash: counted as a
        retry of each, and a job whose workers died ``MAX_CRASH_RETRIES`` times fails)."""
        worker = queue.workers.pop(worker_id, None)
        if worker is None:
            return
        lost = [queue.jobs[i] for i in worker.running if i in queue.jobs]
        for job in lost:
            if job.status != IN_PROGRESS:
                continue
            if crashed and job.retried >= MAX_CRASH_RETRIES:
                job.error = f"the worker died while running it ({MAX_CRASH_RETRIES + 1} times)"
                self._finish(job, FAILED)
                continue
            if crashed:
                queue.count_retry(job)
            self.unconfirmed.add(job.id)
        self._requeue_unconfirmed(queue, worker, keep=(), why="ended while running it")

    def _running_job(self, queue: EndpointQueue, worker: WorkerState, job_id: str) -> Job:
        job = queue.jobs.get(job_id)
        if job is None:
            raise job_not_found(job_id)
        self._reclaim(queue, worker, job)
        if job.status != IN_PROGRESS:
            raise QueueRefusal(409, f"job {job_id} is {job.status}, not IN_PROGRESS; post ignored")
        self.unconfirmed.discard(job_id)
        return job

    def _reclaim(self, queue: EndpointQueue, worker: WorkerState, job: Job) -> None:
        """A job put back in the queue while ``worker`` was unheard of since a restart, and
        taken by nobody since: the worker is back with it, so it runs there again."""
        if (
            job.status == IN_QUEUE
            and self.lost_from.get(job.id) == worker.worker_id
            and queue.remove(job)
        ):
            log.info("worker %s is back with job %s; it runs there", worker.worker_id, job.id)
            self._start(job, worker)
            self.tables.flush()

    def _move(self, job: Job, status: str) -> None:
        self.queues[job.key].count_move(job.status, status)
        job.status = status

    def _lazy(self, job: Job) -> bool:
        """A ``/runsync`` job not written yet: its id has not left the emulator but to the
        worker running it. Its changes are written within ``LAZY_WRITE_SECONDS`` (so one that
        runs longer is restored after a crash like any other), not before each answer: lost
        in a crash before that, it cannot run twice (nothing restores it), and its caller,
        whose call failed with the emulator, never learnt its id."""
        return job.kind == "sync" and not self.tables.written(job.id)

    def _save(self, job: Job) -> None:
        self.tables.save_job(job, lazy=self._lazy(job))

    def _commit(self, *jobs: Job) -> None:
        """Write the pending changes before an answer reports these jobs' moves (nothing
        when every one is lazy, see :meth:`_lazy`)."""
        if any(not self._lazy(job) for job in jobs):
            self.tables.flush()

    def commit_answered(self, job: Job) -> None:
        """Before ``/runsync`` answers: a job answered with only its id (it has not ended)
        is written first, since its caller goes on with that id; one answered with its
        result, when it is not lazy."""
        if not job.terminal or not self._lazy(job):
            self.tables.flush()

    def _start(self, job: Job, worker: WorkerState) -> None:
        job.started_at = now_ms()
        job.worker_id = worker.worker_id
        self.lost_from.pop(job.id, None)
        self._move(job, IN_PROGRESS)
        worker.running.add(job.id)
        worker.log.note(f"job {job.id} started")
        self._save(job)  # with its worker: after a crash, that worker may still run it
        self._arm_execution(job)

    def _arm_execution(self, job: Job) -> None:
        assert job.started_at is not None
        self._arm(
            job,
            "execution",
            job.started_at + int(job.execution_timeout_ms * self.settings.time_scale),
            self._time_out,
        )

    def _restore_running(self, queue: EndpointQueue, job: Job) -> None:
        """A job stored IN_PROGRESS: on its worker, unconfirmed (``worker_gone_seconds`` from
        now for the worker to call in), its executionTimeout counted from its start."""
        worker_id = job.worker_id or ""
        worker = queue.workers.get(worker_id)
        if worker is None:
            worker = queue.workers[worker_id] = WorkerState(worker_id)
            worker.version = queue.record.get("version")
            worker.log.note(f"worker {worker_id} not heard from since the emulator restarted")
        worker.running.add(job.id)
        self.unconfirmed.add(job.id)
        self._arm_execution(job)

    def _requeue_unconfirmed(
        self,
        queue: EndpointQueue,
        worker: WorkerState,
        keep: list[str] | tuple[str, ...],
        why: str = "does not claim it since the restart",
    ) -> None:
        """Restored jobs on ``worker``'s name that it does not claim (not in ``keep``) go
        back to the queue, first in line; those in ``keep`` are confirmed."""
        mine = worker.running & self.unconfirmed
        if not mine:
            return
        claimed = mine.intersection(keep)
        self.unconfirmed -= claimed
        lost = [queue.jobs[i] for i in mine - claimed if i in queue.jobs]
        for job in sorted(lost, key=lambda j: j.queued_at, reverse=True):
            self.unconfirmed.discard(job.id)
            worker.running.discard(job.id)
            if job.status != IN_PROGRESS:
                continue
            log.info("job %s: worker %s %s; queued again", job.id, worker.worker_id, why)
            self._cancel_timer(job, "execution")
            job.clear_result()
            self.lost_from[job.id] = worker.worker_id
            self._move(job, IN_QUEUE)
            self._save(job)
            queue.push_first(job)
            if not job.low_priority and self.on_demand is not None:
                self.on_demand(queue)
        self.tables.flush()

    def _release_worker(self, job: Job, *, stop: bool) -> None:
        worker = self.queues[job.key].workers.get(job.worker_id or "")
        if worker is not None:
            worker.running.discard(job.id)
            worker.last_done = time.monotonic()
            if stop:
                worker.signal_stop(job.id)

    def _finish(self, job: Job, status: str) -> None:
        worker = self.queues[job.key].workers.get(job.worker_id or "")
        if worker is not None:
            worker.log.note(f"job {job.id} ended {status}")
        self.unconfirmed.discard(job.id)
        job.finished_at = now_ms()
        job.expires_at = job.finished_at + int(job.retention_ms * self.settings.time_scale)
        self._move(job, status)
        self._cancel_timer(job, "execution")
        self._save(job)
        self._arm_expiry(job)
        self._wake(job)
        if self.on_job_ended is not None:
            self.on_job_ended(job)

    def _time_out(self, job: Job) -> None:
        if job.status == IN_PROGRESS:
            self._release_worker(job, stop=True)
            self._finish(job, TIMED_OUT)

    def _deadline(self, job: Job) -> int:
        if job.terminal and job.expires_at is not None:
            return min(job.ttl_deadline, job.expires_at)
        return job.ttl_deadline

    def _arm_expiry(self, job: Job) -> None:
        self._arm(job, "expiry", self._deadline(job), self._expire)

    def _expire(self, job: Job) -> None:
        if job.status == IN_PROGRESS:
            self._release_worker(job, stop=True)
        self._forget(job)
        self._wake(job)

    def _forget(self, job: Job) -> None:
        queue = self.queues.get(job.key)
        if queue is not None:
            queue.remove(job)
            if queue.jobs.pop(job.id, None) is not None:
                queue.retries -= job.retried
            queue.count_move(job.status, None)
        self.jobs.pop(job.id, None)
        self.unconfirmed.discard(job.id)
        self.lost_from.pop(job.id, None)
        release_if_empty(self.jobs, self.unconfirmed, self.lost_from)
        if queue is not None:
            release_if_empty(queue.jobs, queue.queued, queue.queued_low)
        for handle in job.timers.values():
            handle.cancel()
        job.timers.clear()
        self.tables.delete_job(job.id)
        self._trims.released()

    def _wake(self, job: Job) -> None:
        for name in ("done_event", "chunk_event"):
            event = getattr(job, name)
            if event is not None:
                setattr(job, name, None)
                event.wake()

    def _arm(self, job: Job, name: str, at_ms: int, action: Callable[[Job], None]) -> None:
        self._cancel_timer(job, name)
        delay = max(0.0, (at_ms - now_ms()) / 1000)
        job.timers[name] = asyncio.get_running_loop().call_later(
            delay, self._due, job, name, at_ms, action
        )

    def _due(self, job: Job, name: str, at_ms: int, action: Callable[[Job], None]) -> None:
        """A deadline's timer went off: act, never before the deadline's wall-clock
        millisecond (the loop's timers may fire a millisecond early, and an executionTimeout
        of 1 s must not end a job after 999 ms)."""
        if now_ms() < at_ms:
            self._arm(job, name, at_ms, action)
        else:
            action(job)

    @staticmethod
    def _cancel_timer(job: Job, name: str) -> None:
        handle = job.timers.pop(name, None)
        if handle is not None:
            handle.cancel()

    async def _sweep_gone_workers(self) -> None:
        """Mark workers gone that have not been heard from (their jobs stay IN_PROGRESS
        until ``executionTimeout``)."""
        gone_after = self.settings.worker_gone_seconds
        while True:
            await asyncio.sleep(max(0.1, gone_after / 4))
            cutoff = time.monotonic() - gone_after
            for queue in list(self.queues.values()):
                for worker_id, worker in list(queue.workers.items()):
                    if worker.in_flight == 0 and worker.last_seen < cutoff:
                        log.info(
                            "worker %s of endpoint %s stopped pinging; marked gone",
                            worker_id,
                            queue.endpoint_id,
                        )
                        self._requeue_unconfirmed(queue, worker, keep=())
                        del queue.workers[worker_id]
