"""One request to a pod's kernel in flight: :class:`Execution`, the outputs it yields as
they arrive (what :meth:`podbook.remote.RemoteKernel.execute` returns)."""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from podbook.errors import RemoteTimeout
from podbook.remote import _kernel_wire as wire
from podbook.remote.outputs import ExecuteDone, KernelOutput, Reconnected

if TYPE_CHECKING:
    from podbook.remote.kernel import RemoteKernel

__all__ = ["Execution", "Pending"]

REPLY_GRACE = 10.0
"""Seconds to wait for the kernel's idle status once its reply came (all the request's
outputs precede that status; should it be lost, the reply ends the request)."""

POLL = 0.2
"""The longest single wait (so that signals and deadlines are seen promptly)."""


class Pending:
    """One request in flight: its frame (to send again if it was lost) and the messages
    routed to it."""

    __slots__ = ("msg_id", "queue", "seen", "sent", "text")

    def __init__(self, msg_id: str, text: str) -> None:
        self.msg_id = msg_id
        self.text = text
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.seen = False  # the kernel has answered something: it got the request
        self.sent = False


class Execution(Iterator[KernelOutput]):
    """The outputs of one request as they arrive, ending with :class:`ExecuteDone`.

    Returned by :meth:`RemoteKernel.execute` once the request is sent. Iterating waits for
    the next output. A ``KeyboardInterrupt`` while it waits (a notebook's Stop button)
    interrupts the remote kernel and is raised again; so does any exception leaving a
    ``with`` block around it. When ``timeout`` runs out the remote kernel is interrupted
    and :class:`podbook.errors.RemoteTimeout` is raised. Dropping the iterator (or
    :meth:`close`) only stops listening: the code runs on.
    """

    def __init__(
        self,
        kernel: RemoteKernel,
        pending: Pending,
        timeout: float | None,
        *,
        interrupt_on_stop: bool = True,
    ) -> None:
        self.kernel = kernel
        self.msg_id = pending.msg_id
        self.done: ExecuteDone | None = None
        """The end, once it arrived."""
        self.reply: dict[str, Any] | None = None
        """The ``execute_reply``'s content, once it arrived."""
        self._pending: Pending | None = pending
        self._timeout = timeout
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._interrupt_on_stop = interrupt_on_stop
        self._idle = False
        self._grace: float | None = None

    def __repr__(self) -> str:
        state = "done" if self.done else ("closed" if self._pending is None else "running")
        return f"<Execution {self.msg_id} {state}>"

    def __iter__(self) -> Execution:
        return self

    def __next__(self) -> KernelOutput:
        while True:
            pending = self._pending
            if pending is None:
                raise StopIteration
            if self._reply_and_idle():
                return self._finish()
            try:
                item = self._wait(pending)
            except KeyboardInterrupt:
                self._stop()
                raise
            if item is None:
                continue
            if isinstance(item, BaseException):
                self.close()
                raise item
            if isinstance(item, Reconnected):
                return item
            output = self._take(item)
            if output is not None:
                return output

    def _wait(self, pending: Pending) -> Any:
        """The next item routed to the request, or None after a short wait."""
        now = time.monotonic()
        if self._deadline is not None and now >= self._deadline:
            self._stop()
            assert self._timeout is not None
            raise RemoteTimeout(self.kernel.where, self._timeout)
        if self._grace is not None and now >= self._grace:
            self._idle = True  # the idle status was lost: the reply is the end
            return None
        wait = POLL
        for bound in (self._deadline, self._grace):
            if bound is not None:
                wait = min(wait, max(bound - now, 0.0))
        try:
            return pending.queue.get(timeout=wait)
        except queue.Empty:
            return None

    def _take(self, msg: dict[str, Any]) -> KernelOutput | None:
        kind = wire.msg_type(msg)
        channel = msg.get("channel")
        if kind == "status" and channel == "iopub":
            if (msg.get("content") or {}).get("execution_state") == "idle":
                self._idle = True
            return None
        if kind == "execute_reply":
            self.reply = dict(msg.get("content") or {})
            self._grace = time.monotonic() + REPLY_GRACE
            return None
        if channel == "iopub":
            return wire.to_output(msg)
        return None

    def _reply_and_idle(self) -> bool:
        return self.reply is not None and self._idle

    def _finish(self) -> ExecuteDone:
        reply = self.reply or {}
        status = reply.get("status")
        if status not in ("ok", "error", "aborted"):
            status = "error" if "ename" in reply else "ok"
        error = wire.error_of(reply) if status == "error" else None
        self.done = ExecuteDone(
            status=status, execution_count=reply.get("execution_count"), error=error
        )
        self.close()
        return self.done

    def _stop(self) -> None:
        """Stop listening, and interrupt the remote code if it has not ended."""
        running = self.done is None and self._pending is not None
        self.close()
        if running and self._interrupt_on_stop:
            self.kernel._interrupt_quietly()

    def close(self) -> None:
        """Stop listening (the code runs on; :meth:`RemoteKernel.interrupt` stops it)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self.kernel._forget(pending)

    def wait(self) -> ExecuteDone:
        """Read every output to the end and return the end (outputs are discarded)."""
        for _ in self:
            pass
        assert self.done is not None
        return self.done

    def __enter__(self) -> Execution:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._stop()
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
