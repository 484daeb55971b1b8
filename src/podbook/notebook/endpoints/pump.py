"""The stream pump: reads a job's stream on background threads, never on the kernel's.

Two daemon threads per followed job:

- the **reader** long-polls ``/stream/{id}`` (through the client) and puts every chunk into
  a :class:`StreamBuffer` and a :class:`RateMeter`, and notes the status each answer carries;
  when the buffer holds as many unsent chunks as it keeps (the reader can outrun the
  flusher: one answer may carry hundreds of chunks that were waiting on the server), it
  wakes the flusher and waits for room, so no chunk is dropped on its way to the panel;
- the **flusher** hands what arrived to the panel in batches: it wakes when the first chunk
  of a batch arrives, calls ``flush(False)``, then lets chunks gather for
  :data:`FLUSH_INTERVAL` seconds (so messages go out about every 50–100 ms while chunks
  flow, and a lone chunk goes out at once); while nothing arrives it still calls
  ``flush(False)`` every :data:`IDLE_TICK` seconds (the rate decays). Once the reader has
  ended it calls ``flush(True)`` once and stops.

A cell that blocks (``time.sleep``) does not stop either thread. Neither prints anything.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from podbook.notebook.endpoints.rate import RateMeter
from podbook.notebook.endpoints.records import chunk_parts
from podbook.notebook.endpoints.streambuffer import StreamBuffer

log = logging.getLogger(__name__)

FLUSH_INTERVAL = 0.075
IDLE_TICK = 0.5


@dataclass(eq=False)
class StreamPump:
    """Follows one stream: ``open_stream()`` yields the ``/stream`` answers (objects with
    ``status`` and ``stream``, a list of ``{output, metrics}`` chunks) until the job ended.

    ``flush(final)`` is called on the flusher thread (see the module docstring). After the
    reader ended, ``failure`` holds the exception that stopped it (None when the stream
    ended normally) and ``status`` the last status the stream reported.
    """

    open_stream: Callable[[], Iterable[Any]]
    flush: Callable[[bool], None]
    buffer: StreamBuffer
    meter: RateMeter
    _: KW_ONLY
    name: str = "podbook-stream"
    status: str | None = field(default=None, init=False)
    failure: BaseException | None = field(default=None, init=False)
    _data: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _threads: list[threading.Thread] = field(default_factory=list, init=False, repr=False)

    def start(self) -> StreamPump:
        """Start the reader and the flusher threads."""
        self._threads = [
            threading.Thread(target=self._read, name=f"{self.name}-reader", daemon=True),
            threading.Thread(target=self._flush_loop, name=f"{self.name}-flusher", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        return self

    @property
    def running(self) -> bool:
        """True until the final flush has been made."""
        return any(thread.is_alive() for thread in self._threads)

    @property
    def reading(self) -> bool:
        """True while the reader still follows the stream."""
        return bool(self._threads) and not self._done.is_set()

    def stop(self) -> None:
        """Stop following (the reader leaves after its current long-poll; no final flush)."""
        self._stopping.set()
        self._data.set()

    def join(self, timeout: float | None = None) -> None:
        """Wait for both threads (for tests and for a retry that restarts the pump)."""
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout)

    # -- threads ----------------------------------------------------------------------------

    def _read(self) -> None:
        try:
            for answer in self.open_stream():
                if self._stopping.is_set():
                    return
                chunks = getattr(answer, "stream", None)
                if chunks is None and isinstance(answer, dict):
                    chunks = answer.get("stream")
                for chunk in chunks or ():
                    if not self._wait_for_room():
                        return
                    output, metrics = chunk_parts(chunk)
                    self.buffer.add(output)
                    self.meter.add(output, metrics)
                status = getattr(answer, "status", None)
                if status is None and isinstance(answer, dict):
                    status = answer.get("status")
                if status:
                    self.status = str(status)
                self._data.set()
        except BaseException as err:  # noqa: BLE001 - reported through ``failure``
            self.failure = err
        finally:
            self._done.set()
            self._data.set()

    def _wait_for_room(self) -> bool:
        """Wait while the buffer is full, the flusher woken to send what waits; False when
        the pump is stopping instead."""
        while self.buffer.full:
            if self._stopping.is_set():
                return False
            self._data.set()
            self.buffer.wait_for_room(IDLE_TICK)
        return True

    def _flush_loop(self) -> None:
        while not self._stopping.is_set():
            self._data.wait(IDLE_TICK)
            self._data.clear()
            if self._stopping.is_set():
                return
            final = self._done.is_set()
            try:
                self.flush(final)
            except Exception as err:  # noqa: BLE001 - the flusher must survive a bad flush
                log.debug("podbook stream flush failed: %s", err)
            if final:
                return
            self._stopping.wait(FLUSH_INTERVAL)
