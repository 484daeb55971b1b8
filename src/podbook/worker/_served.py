"""What ``podbook.serve`` and ``serve_app`` share: a daemon thread with an event loop of its own
(:class:`Served`) and the registry of what this process serves (:class:`ServedRegistry`)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Generic, TypeVar

from podbook.errors import ConfigError

__all__ = ["Served", "ServedRegistry"]

S = TypeVar("S", bound="Served")


class Served:
    """Something served from a daemon thread: :meth:`_run` runs there on the thread's own
    event loop, in a copy of the context of the code that made it; :attr:`_ready` is set
    once it is ready, and when it ends."""

    def __init__(self, thread_name: str) -> None:
        self._ready = threading.Event()
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run, args=(self._main,), name=thread_name, daemon=True
        )

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        """Serve on ``loop`` (in the thread) until stopped."""
        raise NotImplementedError

    def _failed(self, error: BaseException) -> None:
        """Keep ``error``, which ended :meth:`_run`, for :meth:`start` to report."""
        raise NotImplementedError

    def stop(self, timeout: float = 15.0) -> None:
        """End the thread."""
        raise NotImplementedError

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            self._run(loop)
        except BaseException as exc:  # noqa: BLE001 - reported by start()
            self._failed(exc)
        finally:
            self._ready.set()
            loop.close()

    def _start_thread(self, ready_timeout: float, too_late: str) -> None:
        """Start the thread and wait until it is ready; when it is not within
        ``ready_timeout`` seconds, stop it and raise ``ConfigError(too_late)``."""
        self._thread.start()
        if not self._ready.wait(ready_timeout):
            self.stop()
            raise ConfigError(too_late)

    @property
    def running(self) -> bool:
        """Whether its thread is alive."""
        return self._thread.is_alive()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ServedRegistry(Generic[S]):
    """What this process serves: one per broker (its queue URL) and endpoint."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._served: dict[tuple[str, str], S] = {}

    def get(self, key: tuple[str, str]) -> S | None:
        with self._lock:
            return self._served.get(key)

    def take(self, key: tuple[str, str]) -> S | None:
        """Remove and return what is served for ``key``, if anything."""
        with self._lock:
            return self._served.pop(key, None)

    def put(self, key: tuple[str, str], served: S) -> None:
        with self._lock:
            self._served[key] = served

    def forget(self, key: tuple[str, str], served: S) -> None:
        """Remove ``served`` if it is still what is served for ``key``."""
        with self._lock:
            if self._served.get(key) is served:
                del self._served[key]
