"""Stopping a sync handler in its thread: :class:`HandlerInterrupted` raised inside it.

A thread cannot be cancelled, so a job the worker abandons (its broker is gone: its result
could never be reported) would otherwise run its sync handler to the end for nothing, maybe
beside the re-run the broker starts elsewhere. :class:`InterruptibleCall` runs a function in
a pool thread so that :meth:`InterruptibleCall.interrupt` can raise
:class:`HandlerInterrupted` in it (CPython's ``PyThreadState_SetAsyncExc``): the exception
comes at the handler's next Python instruction (a call into C code, ``time.sleep`` or a
blocking read, finishes first), its ``finally`` blocks run, and it never escapes the call
(no exception is left pending once the call has returned). Elsewhere than CPython it does
nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["HandlerInterrupted", "InterruptibleCall"]


class HandlerInterrupted(BaseException):
    """Raised inside a sync handler whose job the worker abandoned (its broker is gone).

    A ``BaseException``, like ``KeyboardInterrupt``: a handler's ``except Exception`` does
    not swallow it, its ``finally`` blocks run.
    """


_raise_in: Callable[[int, Any], int] | None = None
_clear_in: Callable[[int, Any], int] | None = None
with contextlib.suppress(AttributeError, OSError):  # not CPython: no interruption
    _raise_in = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
        ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
    )
    _clear_in = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
        ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
    )


class InterruptibleCall:
    """Calls in pool threads, one after the other, that :meth:`interrupt` may stop (the
    one running, and any later one, which then raises at once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread_id: int | None = None
        self._interrupted = False

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in this thread (:class:`HandlerInterrupted` once interrupted)."""
        with self._lock:
            if self._interrupted:
                raise HandlerInterrupted()
            self._thread_id = threading.get_ident()
        try:
            return fn(*args)
        finally:
            with self._lock:
                self._thread_id = None
                if self._interrupted and _clear_in is not None:
                    _clear_in(threading.get_ident(), None)  # one not delivered yet: dropped

    def interrupt(self) -> bool:
        """Raise :class:`HandlerInterrupted` in the thread running the call (or make a call
        not started yet raise it at once); True when a running call was interrupted."""
        if self._interrupted:  # once: the lock is not taken again
            return False
        with self._lock:
            self._interrupted = True
            if self._thread_id is None or _raise_in is None:
                return False
            return _raise_in(self._thread_id, HandlerInterrupted) == 1
