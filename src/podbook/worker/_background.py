"""``podbook.serve(fn, endpoint=ID, concurrency=N)``: serve a handler from a notebook.

The runner runs in a background thread with its own event loop, so cells keep running
while jobs are served. It started in a copy of the calling cell's context, so what the
handler prints lands in that cell's output. The worker key is fetched through the user's
client (the local emulator only; the endpoint is created when it does not exist), and
serving the same endpoint again from the same process replaces the earlier worker.

A served worker's handler can be swapped while it serves (:meth:`ServedWorker.reload`, or a
watched file: :meth:`ServedWorker.watch`, see :mod:`podbook.worker._reload`): the next job runs
the new code, a running one finishes on the old, and the worker stays the one it was.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from podbook.errors import ConfigError, PodbookError
from podbook.worker._config import WorkerConfig, new_worker_id
from podbook.worker._handlers import handler_kind
from podbook.worker._keys import fetch_worker_key, local_endpoint
from podbook.worker._reload import HandlerWatch, Reload, code_label, record_release
from podbook.worker._runner import Runner
from podbook.worker._served import Served, ServedRegistry

__all__ = ["ServedWorker", "serve", "served_worker"]

logger = logging.getLogger("podbook.worker")

READY_TIMEOUT = 15.0

_SERVED: ServedRegistry[ServedWorker] = ServedRegistry()


class ServedWorker(Served):
    """A handler served from a background thread; :meth:`stop` ends it.

    Also a context manager (``with podbook.serve(fn, endpoint="demo"): ...``).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        endpoint_id: str,
        client: Any,
        *,
        concurrency: int,
        refresh_worker: bool,
        aggregate_stream: bool,
        owns_client: bool,
    ) -> None:
        super().__init__(f"podbook-serve-{endpoint_id}")
        self.fn = fn
        self.endpoint_id = endpoint_id
        self.concurrency = concurrency
        self._client = client
        self._owns_client = owns_client
        self._options = {
            "concurrency": concurrency,
            "refresh_worker": refresh_worker,
            "aggregate_stream": aggregate_stream,
        }
        self._lock = threading.Lock()
        self._runner: Runner | None = None
        self._stop_requested = False
        self._error: BaseException | None = None
        self._watch: HandlerWatch | None = None
        self.worker_id = ""
        self.reloads = 0

    # -- life cycle ----------------------------------------------------------------------

    def _config(self) -> WorkerConfig:
        key = fetch_worker_key(self._client, self.endpoint_id)
        return WorkerConfig.for_endpoint(
            self._client.settings.queue_url,
            self.endpoint_id,
            key,
            worker_id=new_worker_id(),
            **self._options,
        )

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        while True:
            config = self._config()
            with self._lock:
                if self._stop_requested:
                    return
                runner = Runner(self.fn, config, on_ready=self._ready.set)
                self._runner = runner
                self.worker_id = config.worker_id
            reason = loop.run_until_complete(runner.run())
            if reason != "refresh" or self._stop_requested:
                return
            logger.info("endpoint %s: starting a fresh worker (refresh_worker)", self.endpoint_id)

    def _failed(self, error: BaseException) -> None:
        self._error = error

    def start(self, ready_timeout: float = READY_TIMEOUT) -> ServedWorker:
        """Start the thread and wait until the broker has seen the worker."""
        self._start_thread(
            ready_timeout,
            f"the worker for {self.endpoint_id!r} did not reach the emulator within "
            f"{ready_timeout:g} s; is it running?",
        )
        if self._error is not None:
            self._thread.join(5)
            self.stop()
            error = self._error
            if isinstance(error, PodbookError):
                raise error
            raise ConfigError(f"the worker for {self.endpoint_id!r} failed to start: {error}")
        return self

    def stop(self, timeout: float = 15.0) -> None:
        """Stop taking jobs, let running ones finish (10 s grace; none when the emulator does
        not answer: their results could not be reported), end the thread and the watch of
        its handler file, if any."""
        self.stop_watching()
        with self._lock:
            self._stop_requested = True
            runner = self._runner
        if runner is not None:
            runner.request_stop_threadsafe()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
            if self._thread.is_alive() and runner is not None:
                runner.request_stop_threadsafe(force=True)
                self._thread.join(5)
        _SERVED.forget((self._client.settings.queue_url, self.endpoint_id), self)
        if self._owns_client:
            self._client.close()

    # -- hot reload ----------------------------------------------------------------------

    def reload(
        self, fn: Callable[..., Any], *, name: str | None = None, label: str | None = None
    ) -> Reload:
        """Serve ``fn`` from the next job on (a running job finishes on the old code; the
        worker stays the same) and record the change as a release of the endpoint.

        ``name`` is how the line names the handler (its ``__qualname__`` by default);
        ``label`` what the release records (``name`` and a digest of ``fn``'s source).
        """
        if not callable(fn):
            raise TypeError(f"reload() needs a handler function, got {type(fn).__name__}")
        handler_kind(fn)
        if not self.running:
            raise ConfigError(
                f"the worker for {self.endpoint_id!r} is stopped; serve the endpoint again"
            )
        name = name or getattr(fn, "__qualname__", type(fn).__name__)
        release, why = record_release(self._client, self.endpoint_id, label or code_label(fn, name))
        with self._lock:
            self.fn = fn
            runner = self._runner
        if runner is not None:
            runner.swap_handler(fn)
        self.reloads += 1
        logger.info("endpoint %s: handler %s reloaded", self.endpoint_id, name)
        return Reload(self.endpoint_id, name, release, why)

    def watch(self, watch: HandlerWatch, report: Callable[[str], None] = print) -> None:
        """Reload from ``watch``'s file whenever it changes, until :meth:`stop` or
        :meth:`stop_watching` (a watch already running is stopped first). ``report`` gets
        one line per reload, and one per file that could not be loaded (the old handler
        goes on)."""
        self.stop_watching()

        def changed(fn: Callable[..., Any], label: str) -> None:
            if not self.running:
                watch.stop()
                raise ConfigError("the worker has stopped; serve the endpoint again")
            report(self.reload(fn, name=watch.name, label=label).line())

        def failed(error: str) -> None:
            report(
                f"endpoint {self.endpoint_id}: {watch.name} not reloaded, the old handler "
                f"goes on: {error}"
            )

        with self._lock:
            self._watch = watch
        watch.start(changed, failed)

    def stop_watching(self) -> None:
        """Stop reloading from a watched file (the handler served now goes on)."""
        with self._lock:
            watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()

    @property
    def watching(self) -> HandlerWatch | None:
        """The watched handler file, if any."""
        return self._watch

    # -- state ---------------------------------------------------------------------------

    @property
    def counts(self) -> dict[str, int]:
        """Jobs completed, failed and stopped by the current worker."""
        runner = self._runner
        return dict(runner.counts) if runner is not None else {}

    @property
    def running_jobs(self) -> list[str]:
        """Ids of the jobs in progress."""
        runner = self._runner
        return runner.running_jobs if runner is not None else []

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        watch = self._watch
        name = watch.name if watch else getattr(self.fn, "__qualname__", type(self.fn).__name__)
        watching = ", watching its file" if watch else ""
        return (
            f"<ServedWorker {name} on endpoint {self.endpoint_id!r}: {state}{watching}, "
            f"concurrency {self.concurrency}, worker {self.worker_id or '-'}>"
        )


def served_worker(queue_url: str, endpoint_id: str) -> ServedWorker | None:
    """The worker this process serves ``endpoint_id`` with on the broker at ``queue_url``
    (running), if any."""
    worker = _SERVED.get((queue_url, endpoint_id))
    return worker if worker is not None and worker.running else None


def serve(
    fn: Callable[..., Any],
    endpoint: str,
    concurrency: int = 1,
    *,
    client: Any = None,
    refresh_worker: bool = False,
    aggregate_stream: bool = True,
    ready_timeout: float = READY_TIMEOUT,
) -> ServedWorker:
    """Serve ``fn`` on ``endpoint`` of the local emulator from a background thread.

    ``fn`` is a handler (sync, async, generator or async generator function taking the
    job). The endpoint is created when it does not exist. Returns once the emulator has
    seen the worker; ``.stop()`` ends it. Serving the same endpoint again from this
    process stops the earlier worker first. Against the real cloud: ``ConfigError``.
    """
    if not callable(fn):
        raise TypeError(f"serve() needs a handler function, got {type(fn).__name__}")
    handler_kind(fn)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a whole number of 1 or more, got {concurrency!r}")
    client, owns_client, endpoint_id = local_endpoint(client, endpoint, "podbook.serve")
    key = (client.settings.queue_url, endpoint_id)
    previous = _SERVED.take(key)
    if previous is not None:
        logger.info("endpoint %s: replacing the worker served earlier", endpoint_id)
        previous.stop()
    worker = ServedWorker(
        fn,
        endpoint_id,
        client,
        concurrency=concurrency,
        refresh_worker=refresh_worker,
        aggregate_stream=aggregate_stream,
        owns_client=owns_client,
    )
    _SERVED.put(key, worker)
    return worker.start(ready_timeout)
