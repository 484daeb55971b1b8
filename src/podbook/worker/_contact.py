"""Whether a worker's broker answers, as its calls find out.

Each call of a :class:`~podbook.worker._protocol.WorkerChannel` tells the channel's
:class:`BrokerContact` how it went: an answer (any HTTP status, a push socket handshake), or
a failure to reach the broker (a refused, dropped or timed-out connection, a push socket that
closed). The runner watches it: a broker that has not answered for a whole ping interval is
gone (killed, or the network with it), and the jobs running for it are abandoned, since
their results could not be reported (see :class:`~podbook.worker._runner.Runner`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

__all__ = ["BrokerContact"]


class BrokerContact:
    """Since when the broker has not answered (``down_since``, monotonic; None while it
    answers), and the last failure (``error``)."""

    def __init__(self) -> None:
        self.down_since: float | None = None
        self.error = ""
        self._changed = asyncio.Event()

    @property
    def answering(self) -> bool:
        """Whether the last call that ended reached the broker."""
        return self.down_since is None

    def answered(self) -> None:
        """A call got an answer."""
        if self.down_since is not None:
            self.down_since = None
            self._changed.set()

    def failed(self, error: str) -> None:
        """A call could not reach the broker (``error`` says how, without any key)."""
        self.error = error
        if self.down_since is None:
            self.down_since = time.monotonic()
            self._changed.set()

    async def changed(self, timeout: float | None = None) -> None:
        """Wait until the broker starts or stops answering, or ``timeout`` seconds pass
        (for one waiter: the runner's watch)."""
        self._changed.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)
