"""Running one job: call the handler by its kind, stream its chunks, post its result.

- sync handlers and sync generators run in the runner's thread pool (so a blocking handler
  never stalls the event loop), in a copy of the caller's context;
- coroutine functions and async generators run on the runner's event loop;
- a cancelled job (job-stop) posts nothing: an async handler is interrupted at its current
  ``await``; a generator is closed before its next chunk (a sync generator finishes the
  ``next()`` already running in its thread, then is closed there); a sync function is not
  interrupted: its thread runs to the end and its result is dropped;
- an abandoned job (its broker is gone: :meth:`JobRun.interrupt` after the cancel) also gets
  :class:`~podbook.worker._interrupt.HandlerInterrupted` raised in its sync handler's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

from podbook.errors import PodbookError
from podbook.worker._config import WorkerConfig
from podbook.worker._handlers import HandlerKind
from podbook.worker._interrupt import InterruptibleCall
from podbook.worker._protocol import BrokerRefused, WorkerChannel, encode_body, log_undelivered
from podbook.worker._reporting import ProgressReporter
from podbook.worker._results import chunk_body, chunk_error, error_payload, result_payload

__all__ = ["JobRun", "Outcome"]

logger = logging.getLogger("podbook.worker")

CHUNK_QUEUE_SIZE = 1024
"""Chunks a generator may run ahead of their posts before it waits."""
STREAM_BATCH_MAX = 256
STREAM_BATCH_MAX_BYTES = 512 * 1024
"""Chunks that queued up while a post was in flight go in one post (when the broker takes
``{"stream": [...]}``), at most this many and about this many bytes."""

_DONE = object()
_ITEM = object()
_ERROR = object()
PUMP_AHEAD = 32
"""Items a sync generator's thread may produce ahead of the event loop."""


@dataclass
class Outcome:
    """What a job ended with."""

    payload: dict[str, Any]
    is_stream: bool
    refresh: bool
    chunks: int
    seconds: float

    @property
    def failed(self) -> bool:
        """Whether the result fails the job."""
        return "error" in self.payload

    def summary(self) -> str:
        """A few words for the log: ``completed in 12 ms (3 chunks)``."""
        what = "failed" if self.failed else "completed"
        streamed = f", {self.chunks} chunk(s)" if self.is_stream else ""
        return f"{what} in {self.seconds * 1000:.0f} ms{streamed}"


class ChunkSender:
    """Posts one job's chunks in order, while the handler goes on producing."""

    def __init__(self, channel: WorkerChannel, job_id: str) -> None:
        self._channel = channel
        self._job_id = job_id
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(CHUNK_QUEUE_SIZE)
        self._task = asyncio.get_running_loop().create_task(self._run())
        self._failed = False
        self.sent = 0

    async def put(self, body: bytes) -> None:
        """Queue one encoded chunk (waits while the queue is full)."""
        await self._queue.put(body)

    async def _run(self) -> None:
        while True:
            body = await self._queue.get()
            if body is None:
                return
            batch, size, last = [body], len(body), False
            while self._channel.stream_batches is not False and len(batch) < STREAM_BATCH_MAX:
                try:
                    more = self._queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
                if more is None:
                    last = True
                    break
                batch.append(more)
                size += len(more)
                if size >= STREAM_BATCH_MAX_BYTES:
                    break
            if not self._failed:
                try:
                    await self._channel.post_chunks(self._job_id, batch)
                    self.sent += len(batch)
                except PodbookError as exc:
                    self._failed = True
                    log_undelivered(self._job_id, "chunks no longer delivered", exc)
            if last:
                return

    async def finish(self) -> None:
        """Wait until every queued chunk is posted."""
        await self._queue.put(None)
        await self._task

    def cancel(self) -> None:
        """Drop the chunks not posted yet."""
        self._task.cancel()


class SyncGeneratorPump:
    """Runs a sync generator in one pool thread, handing its items to the event loop.

    The thread may run at most ``PUMP_AHEAD`` items ahead of the loop. :meth:`close` stops
    it before its next ``next()`` (the one already running finishes first); the generator is
    closed in its own thread, so its ``finally`` blocks run there.
    """

    def __init__(
        self, generator: Any, executor: Executor, call: InterruptibleCall | None = None
    ) -> None:
        self._generator = generator
        self._loop = asyncio.get_running_loop()
        self._items: asyncio.Queue[tuple[object, Any]] = asyncio.Queue()
        self._room = threading.Semaphore(PUMP_AHEAD)
        self._stop = threading.Event()
        run = (call or InterruptibleCall()).run
        self._future: Future[None] = executor.submit(
            contextvars.copy_context().run, run, self._produce
        )

    def _post(self, kind: object, value: Any) -> bool:
        try:
            self._loop.call_soon_threadsafe(self._items.put_nowait, (kind, value))
        except RuntimeError:  # the loop is gone: nobody wants more
            return False
        return True

    def _produce(self) -> None:
        try:
            while True:
                self._room.acquire()
                if self._stop.is_set():
                    return
                try:
                    item = next(self._generator)
                except StopIteration:
                    self._post(_DONE, None)
                    return
                except BaseException as exc:  # noqa: BLE001 - handed to the loop as the job's error
                    self._post(_ERROR, exc)
                    return
                if not self._post(_ITEM, item):
                    return
        finally:
            self._generator.close()

    async def items(self) -> AsyncIterator[Any]:
        """The generator's items, as an async iterator (its exception re-raised here)."""
        while True:
            kind, value = await self._items.get()
            if kind is _DONE:
                return
            if kind is _ERROR:
                raise value
            self._room.release()
            yield value

    def close(self) -> None:
        """Stop the generator before its next item and close it."""
        self._stop.set()
        self._room.release()  # wake the thread if it waits for room


class JobRun:
    """One job through a handler, from the take to the posted result."""

    def __init__(
        self,
        job: dict[str, Any],
        handler: Callable[..., Any],
        kind: HandlerKind,
        config: WorkerConfig,
        channel: WorkerChannel,
        executor: Executor,
        on_handler_done: Callable[[], None] = lambda: None,
    ) -> None:
        self.job = job
        self.job_id: str = job["id"]
        self._handler = handler
        self._kind = kind
        self._config = config
        self._channel = channel
        self._executor = executor
        self._chunks = 0
        self._thread_call = InterruptibleCall()
        self._on_handler_done = on_handler_done
        self.reporting = False
        """Whether the handler is done and its result is being posted."""
        self.slot_freed = False
        """Whether the job gave its slot back (its handler is done, its result travels)."""

    def interrupt(self) -> bool:
        """Stop the handler's code running in a pool thread (a sync function, or a sync
        generator's ``next()``) with :class:`~podbook.worker._interrupt.HandlerInterrupted`;
        for a job whose task was cancelled, so nothing waits for what it would return."""
        return self._thread_call.interrupt()

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        context = contextvars.copy_context()
        future = self._executor.submit(context.run, self._thread_call.run, fn, *args)
        return await asyncio.wrap_future(future)

    async def run(self) -> Outcome:
        """Run the handler and post its result; ``CancelledError`` when the job is stopped.
        ``on_handler_done`` is called once the handler is done, before the result is posted
        (not for a job that asks for a fresh worker: this worker takes no other job)."""
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        with ProgressReporter(self.job_id, loop, self._channel.post_progress) as reporter:
            payload, is_stream, refresh = await self._execute()
            self.reporting = True
            await reporter.flush()
        refresh = refresh or self._config.refresh_worker
        if refresh:
            payload["stopPod"] = True
        else:
            self.slot_freed = True
            self._on_handler_done()
        await self._post(payload, is_stream)
        return Outcome(payload, is_stream, refresh, self._chunks, time.perf_counter() - started)

    async def _post(self, payload: dict[str, Any], is_stream: bool) -> None:
        try:
            await self._channel.post_result(self.job_id, payload, is_stream=is_stream)
        except (TypeError, ValueError) as exc:  # the output is not JSON
            failure = TypeError(f"the handler's result is not JSON: {exc}")
            await self._channel.post_result(self.job_id, self._error(failure), is_stream=is_stream)
        except BrokerRefused as exc:
            if exc.status not in (400, 413, 422) or "error" in payload:
                raise
            # e.g. an output over the broker's size limit: fail the job rather than lose it
            failure = RuntimeError(f"the broker refused the result: {exc}")
            await self._channel.post_result(self.job_id, self._error(failure), is_stream=is_stream)

    def _error(self, exc: BaseException) -> dict[str, Any]:
        return error_payload(exc, self._config.worker_id)

    async def _execute(self) -> tuple[dict[str, Any], bool, bool]:
        """``(payload, is_stream, refresh)``."""
        try:
            if self._kind is HandlerKind.SYNC:
                value = await self._in_thread(self._handler, self.job)
            elif self._kind is HandlerKind.ASYNC:
                value = await self._handler(self.job)
            else:
                value = self._handler(self.job)
            if inspect.isawaitable(value) and not inspect.isasyncgen(value):
                value = await value
        except Exception as exc:
            return self._error(exc), False, False
        if inspect.isgenerator(value) or inspect.isasyncgen(value):
            payload = await self._stream(value)
            return payload, True, False
        payload, refresh = result_payload(value)
        return payload, False, refresh

    async def _stream(self, source: Any) -> dict[str, Any]:
        """Stream the items of a (sync or async) generator; the final result's payload."""
        pump = (
            SyncGeneratorPump(source, self._executor, self._thread_call)
            if inspect.isgenerator(source)
            else None
        )
        items: AsyncIterator[Any] = pump.items() if pump is not None else source
        sender = ChunkSender(self._channel, self.job_id)
        outputs: list[Any] | None = [] if self._config.aggregate_stream else None
        finished = False
        try:
            try:
                async for item in items:
                    output, body = chunk_body(item)
                    message = chunk_error(output)
                    if message is not None:
                        await sender.finish()
                        finished = True
                        return {"error": message}
                    try:
                        encoded = encode_body(body)
                    except (TypeError, ValueError) as exc:
                        raise TypeError(f"chunk {self._chunks} is not JSON: {exc}") from None
                    await sender.put(encoded)
                    self._chunks += 1
                    if outputs is not None:
                        outputs.append(output)
            except Exception as exc:
                await sender.finish()  # the chunks produced before the error still count
                finished = True
                return self._error(exc)
            await sender.finish()
            finished = True
            return {"output": outputs if outputs is not None else []}
        finally:
            if not finished:  # stopped: drop what is not posted, close the generator
                sender.cancel()
            if pump is not None:
                pump.close()
            elif not finished:
                await _close_async_generator(source)


async def _close_async_generator(agen: Any) -> None:
    """``aclose()`` a stopped async generator without letting it block the stop."""
    with contextlib.suppress(Exception, asyncio.CancelledError):  # best effort: it was stopped
        await asyncio.wait_for(agen.aclose(), timeout=1.0)
