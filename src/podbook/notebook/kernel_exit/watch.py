"""When the kernel ends, do what ``on_exit`` says for the pods it created, once.

Two hooks start it: the shell's ``exit_now`` turning true (``exit`` in a cell or in terminal
IPython, and ipykernel's answer to a shutdown or restart request, which is what
``jupyter_client``'s ``shutdown_kernel`` and ``restart_kernel`` send, and what JupyterLab,
nbclient and papermill use) and, as a fallback, :mod:`atexit`. The work runs in a thread
started by the first hook; :mod:`atexit` waits for it (at most the deadline) before the
process goes. A kernel killed outright (``kill -9``, ``shutdown_kernel(now=True)``) runs
neither: that is what the pod guard is for.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from podbook.notebook.kernel_exit.ledger import Ledger
from podbook.notebook.kernel_exit.report import report
from podbook.notebook.kernel_exit.settle import DEFAULT_BUDGET, one_line, settle

_GRACE = 0.5
"""Seconds :mod:`atexit` waits past the deadline for the lines to be written."""


def _stderr_fd() -> int:
    """The process's own stderr: ipykernel's ``sys.stderr.fileno()`` is the terminal or log
    it was started with (fd 2 itself is piped into the notebook), elsewhere it is fd 2."""
    for stream in (sys.stderr, sys.__stderr__):
        with contextlib.suppress(Exception):
            return int(stream.fileno())  # type: ignore[union-attr]
    return 2


def _write_stdout(text: str) -> None:
    with contextlib.suppress(Exception):
        sys.stdout.write(text)
        sys.stdout.flush()


def emit(lines: list[str]) -> None:
    """Write ``lines`` to the process's stderr, and to ``sys.stdout`` too when that is a
    separate stream still connected (a kernel's: the notebook may still show it)."""
    if not lines:
        return
    text = "".join(line + "\n" for line in lines)
    with contextlib.suppress(OSError):
        os.write(_stderr_fd(), text.encode("utf-8", errors="replace"))
    out = sys.stdout
    if out is None or out is sys.__stdout__ or getattr(out, "closed", False):
        return
    writer = threading.Thread(target=_write_stdout, args=(text,), daemon=True)
    writer.start()
    writer.join(_GRACE)  # a kernel's flush waits on its I/O thread: never hang on it


class ExitWatch:
    """The pods this kernel created (:attr:`ledger`) and the hooks that settle them when it
    ends. ``on_exit`` returns the configured default, read when the kernel ends."""

    def __init__(
        self, shell: Any, on_exit: Callable[[], str], budget: float = DEFAULT_BUDGET
    ) -> None:
        self.ledger = Ledger()
        self._shell = shell
        self._on_exit = on_exit
        self._budget = budget
        self._lock = threading.Lock()
        self._armed = False
        self._thread: threading.Thread | None = None
        self._deadline = 0.0

    def track(self, pod: Any, settings: Any, on_exit: str | None = None) -> None:
        """Remember ``pod``, created through a client with ``settings``; ``on_exit``
        overrides ``PodMagics.on_exit`` for it."""
        self.ledger.add(pod, settings, on_exit)
        with self._lock:
            if self._armed:
                return
            self._armed = True
        atexit.register(self._at_exit)
        if hasattr(self._shell, "observe"):
            self._shell.observe(self._on_exit_now, names="exit_now")

    def close(self) -> None:
        """Unhook (``%unload_ext podbook``): the pods are then left as they are."""
        with self._lock:
            armed, self._armed = self._armed, False
        if not armed:
            return
        atexit.unregister(self._at_exit)
        with contextlib.suppress(ValueError):
            self._shell.unobserve(self._on_exit_now, names="exit_now")

    def start(self) -> threading.Thread:
        """Settle the pods in a thread (started once; later calls return the same one)."""
        with self._lock:
            if self._thread is None:
                try:
                    default = self._on_exit()
                except Exception:  # noqa: BLE001 - a broken setting must not lose the warning
                    default = "warn"
                self._deadline = time.monotonic() + self._budget
                self._thread = threading.Thread(
                    target=self._run, args=(default,), name="podbook-kernel-exit", daemon=True
                )
                self._thread.start()
            return self._thread

    def _on_exit_now(self, change: Any) -> None:
        if change.get("new"):
            self.start()

    def _at_exit(self) -> None:
        thread = self.start()
        thread.join(max(0.0, self._deadline - time.monotonic()) + _GRACE)

    def _run(self, default: str) -> None:
        try:
            finished, unfinished = settle(self.ledger.pods(), default, self._budget)
            emit(report(finished, unfinished, self._budget))
        except Exception as err:  # noqa: BLE001 - at exit: one line, never a traceback
            emit([f"podbook: could not settle the pods this kernel created: {one_line(err)}"])
