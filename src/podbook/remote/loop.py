"""The one background event loop that every SSH connection of :mod:`podbook.remote` lives on.

asyncssh is async-only, and a notebook's kernel already runs a loop of its own (never
``asyncio.run`` inside something a magic calls), so this module owns one daemon thread
(``podbook-remote``) that runs one asyncio loop for the life of the process.
:func:`call` runs a coroutine there and blocks the calling thread until it ends; what the
coroutine reports on the way (output chunks, progress snapshots) is handed back to the
calling thread and run there, so a callback that prints lands in the caller's cell.

Ctrl-C (``KeyboardInterrupt``) in the calling thread cancels the coroutine; the coroutine's
own cleanup (closing a channel, ending a remote process) runs for up to
:data:`CANCEL_GRACE` seconds before the interrupt is raised again in the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["CANCEL_GRACE", "Emit", "call", "get_loop", "submit"]

T = TypeVar("T")

Emit = Callable[[Callable[[], Any]], None]
"""Hands a callable to the calling thread, which runs it (the loop thread never blocks)."""

CANCEL_GRACE = 10.0
"""Seconds an interrupted coroutine gets for its cleanup before the interrupt is re-raised."""

_WAKE_EVERY = 0.2
"""How often a waiting caller wakes up without news (keeps Ctrl-C prompt on every platform)."""


class _LoopThread:
    """A daemon thread running one asyncio event loop, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0

    def get(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            alive = self._thread is not None and self._thread.is_alive()
            if self._loop is None or not alive or self._pid != os.getpid():
                ready = threading.Event()
                loop = _new_loop()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=run, name="podbook-remote", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread, self._pid = loop, thread, os.getpid()
            return self._loop

    def is_current(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed (it comes with ``uvicorn[standard]``): a pull
    costs about a quarter less CPU on it; else asyncio's own."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


_LOOP = _LoopThread()


def get_loop() -> asyncio.AbstractEventLoop:
    """The module's event loop (its thread starts on first use)."""
    return _LOOP.get()


def submit(coro: Awaitable[T]) -> Future[T]:
    """Schedule ``coro`` on the module's loop; a :class:`concurrent.futures.Future` of it.

    For async callers on another loop: ``await asyncio.wrap_future(submit(coro))``."""
    return asyncio.run_coroutine_threadsafe(_as_coroutine(coro), get_loop())


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable


def call(work: Callable[[Emit], Awaitable[T]], *, grace: float = CANCEL_GRACE) -> T:
    """Run ``work(emit)`` on the module's loop and wait for its result in this thread.

    ``emit(fn)`` (called from the loop) queues ``fn`` to be run here, in order, while the
    work goes on. An exception from ``fn`` (or a ``KeyboardInterrupt`` while waiting)
    cancels the work, waits up to ``grace`` seconds for its cleanup, and is raised here.
    """
    if _LOOP.is_current():
        raise RuntimeError(
            "podbook.remote: a blocking call from the remote loop's own thread would wait "
            "forever; call it from another thread"
        )
    events: queue.SimpleQueue[Callable[[], Any] | None] = queue.SimpleQueue()
    finished = threading.Event()

    async def runner() -> T:
        try:
            return await work(events.put)
        finally:
            finished.set()

    future = submit(runner())
    future.add_done_callback(lambda _: events.put(None))
    try:
        while True:
            try:
                item = events.get(timeout=_WAKE_EVERY)
            except queue.Empty:
                continue
            if item is None:
                break
            item()
        # callbacks queued after the end marker cannot exist: the work is done
        return future.result()
    except BaseException:
        if not finished.is_set():
            future.cancel()  # cancels the task on the loop; its cleanup runs there
            with contextlib.suppress(BaseException):  # a second Ctrl-C stops the wait
                finished.wait(grace)
        raise
