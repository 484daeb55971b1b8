"""Giving memory back after a long drain: the emulator's allocator and its trims.

A drain of 100,000 jobs allocates and frees millions of small objects. CPython's own
allocator keeps every 1 MB arena in which a single object survives (a worker log line, a
grown table), so the freed jobs stay resident for ever; the C library's ``malloc`` keeps
memory at the granularity of a 4 KB page and gives every free page back on ``malloc_trim``.
So ``podbook emulator`` runs with the system allocator (:func:`use_system_allocator`, on
Linux with glibc, unless ``PYTHONMALLOC`` says otherwise), and the broker trims once many
jobs were forgotten (:class:`TrimAfterRelease`). ``docs/benchmarks.md`` has the figures.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import gc
import os
import sys
import time
from collections.abc import Callable, MutableMapping, MutableSet
from typing import Any

ALLOCATOR_VAR = "PYTHONMALLOC"
SET_BY_PODBOOK_VAR = "PODBOOK_SET_PYTHONMALLOC"
"""Says that podbook, not the user, chose the allocator (the launcher in
``podbook.client._local`` or :func:`use_system_allocator`): the emulator's children (workers,
pods) get the user's environment back."""


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (None elsewhere: macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:  # the process's own symbols: libc is loaded (find_library would run ldconfig)
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except AttributeError:
        return None


def use_system_allocator(argv: list[str]) -> None:
    """Start this process again with ``PYTHONMALLOC=malloc`` where that lets memory go back
    (glibc; ``PYTHONMALLOC`` not set by the user); otherwise return and go on as it is.

    The interpreter chooses its allocator before it runs any code, hence the ``exec``: the
    same process id, arguments and file descriptors, one interpreter start more. The
    embedded emulator's launcher sets the variables itself, so it is not restarted.
    """
    if os.environ.pop(SET_BY_PODBOOK_VAR, None):  # chosen for this process, not its children
        os.environ.pop(ALLOCATOR_VAR, None)
        return
    if os.environ.get(ALLOCATOR_VAR) or _malloc_trim() is None:
        return
    env = {**os.environ, ALLOCATOR_VAR: "malloc", SET_BY_PODBOOK_VAR: "1"}
    os.execve(sys.executable, [sys.executable, "-m", "podbook", *argv], env)


def trim() -> None:
    """Give the free pages of the C heap back to the system (a no-op where it cannot)."""
    malloc_trim = _malloc_trim()
    if malloc_trim is not None:
        malloc_trim(0)


def release_if_empty(*tables: MutableMapping[Any, Any] | MutableSet[Any]) -> None:
    """Clear each of ``tables`` that is empty: CPython keeps a dict's or set's table at the
    largest size it ever had until it is cleared (100,000 jobs: megabytes)."""
    for table in tables:
        if not table:
            table.clear()


class TrimAfterRelease:
    """Calls :func:`trim` once a burst of releases (forgotten jobs) is over: after at least
    ``every`` of them, when none came for ``quiet`` seconds; nothing when no loop runs.

    Never while the burst goes on: on a heap of gigabytes (a million jobs queued) a trim, and
    a garbage collection even more, takes seconds, and trimming every few seconds halved the
    drain. Before the trim, a full collection when ``small()`` says what is left is small
    (the broker: few jobs held): not for the garbage it finds (little), but because a full
    collection empties the interpreter's free lists, thousands of spare tuples, floats, lists
    and dicts kept from the burst and scattered over its heap, each holding a page
    (``bench/scale.py``: 4 to 5 MB after 30,000 jobs). On a small heap it takes milliseconds.
    """

    def __init__(
        self, every: int = 256, quiet: float = 0.5, small: Callable[[], bool] | None = None
    ) -> None:
        self.every = every
        self.quiet = quiet
        self.small = small
        self._released = 0
        self._last = 0.0
        self._pending: asyncio.TimerHandle | None = None

    def released(self, count: int = 1) -> None:
        """Count ``count`` releases; arm a trim once enough are."""
        self._released += count
        self._last = time.monotonic()
        if self._pending is not None or self._released < self.every:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._pending = loop.call_later(self.quiet, self._due)

    def _due(self) -> None:
        idle_for = time.monotonic() - self._last
        if idle_for < self.quiet:  # the burst goes on
            self._pending = asyncio.get_running_loop().call_later(self.quiet - idle_for, self._due)
            return
        self._pending = None
        self._released = 0
        if self.small is not None and self.small():
            gc.collect()
        trim()

    def cancel(self) -> None:
        """Drop a trim on its way (the loop is closing)."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
