"""Reading a job's stream without losing or repeating a chunk when the network drops.

The service's ``GET /stream/{id}`` drains: each answer carries the chunks buffered since the
previous read, so an answer lost on the way (a connection dropped mid-response) takes its
chunks with it, and asking again cannot bring them back. :class:`StreamReader` therefore asks
with ``?cursor=N``, N being the index of the next chunk it wants (the number received so far).

- A server that offers the resumable cursor (the podbook emulator) answers the chunks from N
  on, adds ``cursor`` (index of the first) and ``next``, and drains nothing. A read that
  failed (dropped, refused, 5xx) is simply asked again with the same N, after the client's
  backoff, for up to the retry policy's ``max_wait`` seconds without an answer; every chunk
  arrives once, in order.
- A server that ignores the parameter (the real service) answers as usual, without ``next``;
  the reader then stops sending it. A read that failed before it was sent, or with a 5xx, is
  asked again; one that failed after it was sent may have drained chunks, and
  :class:`~podbook.errors.StreamInterrupted` (``lost=True``) says so instead of going on
  without them.

Before the first answer the reader does not know which kind of server it talks to: a read
that failed then is asked again with the cursor, and the answer tells whether anything can
have been lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING

import httpx

from podbook.errors import BadRequest, ConnectionFailed, ServerError, StreamInterrupted

if TYPE_CHECKING:
    from podbook.api.queue import StreamChunk, StreamResponse
    from podbook.client._core import Call, RetryPolicy

__all__ = ["StreamReader"]


@dataclass(eq=False)
class StreamReader:
    """The state of one stream read: where it is, whether the server offers the cursor, and
    how long reads have been failing. Pure logic; the sync and async faces do the I/O."""

    endpoint_id: str
    job_id: str
    make_call: Callable[[int | None], Call[StreamResponse]]
    """The ``/stream`` call asking from a cursor (None: without ``?cursor=``)."""
    retry: RetryPolicy
    url: str
    _: KW_ONLY
    received: int = 0
    """Index of the next chunk wanted (chunks delivered so far, plus the start cursor)."""
    offered: bool | None = field(default=None, init=False)
    """Whether the server offers the cursor (None until its first answer)."""
    failures: int = field(default=0, init=False)
    """Reads that failed in a row since the last answer."""
    drops: int = field(default=0, init=False)
    """Reads that failed after they were sent (answers lost on the way), in all."""
    _suspect: bool = field(default=False, init=False)
    """A read failed after it was sent, before the server was known."""
    _failing_since: float | None = field(default=None, init=False)
    _asked_at: float = field(default=0.0, init=False)

    def call(self) -> Call[StreamResponse]:
        """The next ``/stream`` call (with ``?cursor=`` unless the server ignores it)."""
        self._asked_at = time.monotonic()
        return self.make_call(None if self.offered is False else self.received)

    def accept(self, batch: StreamResponse) -> list[StreamChunk]:
        """The chunks of ``batch`` not delivered yet, in order; raises
        :class:`StreamInterrupted` when an earlier lost answer may have taken chunks."""
        self.failures = 0
        self._failing_since = None
        if batch.next is None:  # the server ignores the cursor: a draining read
            self.offered = False
            if self._suspect:
                raise self._interrupted("an answer was lost on the way", lost=True)
            self.received += len(batch.stream)
            return list(batch.stream)
        self.offered = True
        self._suspect = False
        first = batch.cursor if batch.cursor is not None else self.received
        items = list(batch.stream[max(0, self.received - first) :])
        self.received = max(self.received, batch.next)
        return items

    def delay_after(self, error: Exception) -> float:
        """Seconds to wait before asking again after ``error``; raises what cannot be retried
        (the error itself, or :class:`StreamInterrupted`)."""
        if isinstance(error, BadRequest) and self.offered is None:
            self.offered = False  # a server that refuses the unknown parameter: ask without it
            return 0.0
        if isinstance(error, ConnectionFailed):
            cause = error.__cause__
            sent = not isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout))
            if sent:
                self.drops += 1
                if self.offered is False:
                    raise self._interrupted(error.reason, lost=True) from error
                if self.offered is None:
                    self._suspect = True
            reason = error.reason
        elif isinstance(error, ServerError):
            reason = f"{error.status} {error.title}"
        else:
            raise error
        self.failures += 1
        if self._failing_since is None:
            self._failing_since = self._asked_at
        delay = self.retry.backoff_delay(self.failures)
        if time.monotonic() + delay - self._failing_since > self.retry.max_wait:
            raise self._interrupted(
                f"{reason}; no answer for {self.retry.max_wait:g} s", lost=self._suspect
            ) from error
        return delay

    def _interrupted(self, reason: str, *, lost: bool) -> StreamInterrupted:
        return StreamInterrupted(
            self.job_id,
            self.endpoint_id,
            self.url,
            reason,
            received=self.received,
            cursor=None if self.offered is False else self.received,
            lost=lost,
        )

    def answer(self, batch: StreamResponse, items: list[StreamChunk]) -> StreamResponse:
        """``batch`` with only the new ``items`` (the same object when nothing was skipped)."""
        if len(items) == len(batch.stream):
            return batch
        return batch.model_copy(update={"stream": items})
