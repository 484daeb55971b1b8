"""The kernel side of a pod panel's Logs tab: follow a pod's log on a background thread.

The view asks with ``{"type": "logs", "follow": true, "have": SEQ}`` when the tab opens and
``{"type": "logs", "follow": false}`` when it closes. While at least one view follows, a
daemon thread reads ``client.pods.logs(pod, follow=True)`` (which resumes a dropped stream
by itself) into a bounded buffer (the last :data:`KEEP_LINES` lines) and a flusher sends
the new lines to the view every ~:data:`FLUSH_SECONDS` as one custom message::

    {"type": "log-lines", "lines": [{"seq", "ts", "source", "line"}, ...]}

A view that (re)opens gets the buffered lines after its ``have`` at once. When the stream
ends (the pod was terminated) the view gets ``{"type": "log-end"}``; an error that stops the
reader is sent as ``{"type": "log-end", "error": "<one line>"}``.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

KEEP_LINES = 500
BACKFILL = 200
FLUSH_SECONDS = 0.1

Send = Callable[[dict[str, Any]], None]


def line_payload(line: Any) -> dict[str, Any]:
    """A log line as the view receives it."""
    return {"seq": line.seq, "ts": line.ts, "source": line.source, "line": line.line}


class StreamReader:
    """A daemon thread reading one pod's log stream: :meth:`start`, :meth:`stop` (which
    closes the stream, so the thread ends at its next line or keep-alive) and ``running``.
    Subclasses read in :meth:`_read` and keep the open stream in ``_stream``."""

    thread_name = "podbook-log"

    def __init__(self, pod_id: str, client: Callable[[], Any]) -> None:
        self.pod_id = pod_id
        self._client = client
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._stream: Any = None

    @property
    def running(self) -> bool:
        """Whether the reader thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start reading (a no-op while the reader runs)."""
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._read, name=f"{self.thread_name}-{self.pod_id}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop reading (the thread ends at its next line or keep-alive)."""
        self._stop.set()
        stream = self._stream
        if stream is not None:
            with contextlib.suppress(Exception):  # best effort from another thread
                stream.close()

    def _read(self) -> None:  # pragma: no cover - every subclass has its own
        raise NotImplementedError


class LogFollower(StreamReader):
    """Follows one pod's log for the views of one panel (see the module docstring)."""

    thread_name = "podbook-logs"

    def __init__(self, pod_id: str, client: Callable[[], Any], send: Send) -> None:
        super().__init__(pod_id, client)
        self._send = send
        self._lock = threading.Lock()
        self.lines: deque[dict[str, Any]] = deque(maxlen=KEEP_LINES)
        self._pending: list[dict[str, Any]] = []
        self._followers = 0
        self.ended: dict[str, Any] | None = None
        self.source: str | None = None
        self.backfill = BACKFILL

    def handle(self, content: dict[str, Any]) -> None:
        """A ``logs`` message from a view."""
        if content.get("follow"):
            have = content.get("have")
            self._followers += 1
            self._replay(have if isinstance(have, int) else 0)
            self.start()
        else:
            self._followers = max(0, self._followers - 1)
            if self._followers == 0:
                self.stop()

    def _replay(self, have: int) -> None:
        with self._lock:
            lines = [line for line in self.lines if line["seq"] is None or line["seq"] > have]
            ended = self.ended
        if lines:
            self._send({"type": "log-lines", "lines": lines})
        if ended is not None and not self.running:
            self._send(ended)

    def start(self) -> None:
        """Start reading and flushing to the views (a no-op while the reader runs)."""
        if self.running:
            return
        self.ended = None
        super().start()
        threading.Thread(target=self._flush_loop, name="podbook-logs-flush", daemon=True).start()

    def _read(self) -> None:
        from podbook.errors import PodbookError
        from podbook.notebook.errors import describe_failure

        end: dict[str, Any] = {"type": "log-end"}
        last = self.lines[-1]["seq"] if self.lines else None
        try:
            client = self._client()
            self._stream = client.pods.logs(
                self.pod_id, source=self.source, tail=self.backfill, follow=True
            )
            for line in self._stream:
                if self._stop.is_set():
                    return
                payload = line_payload(line)
                if last is not None and payload["seq"] is not None and payload["seq"] <= last:
                    continue
                with self._lock:
                    self.lines.append(payload)
                    self._pending.append(payload)
        except PodbookError as err:
            end["error"] = describe_failure(err)
        except Exception as err:  # noqa: BLE001 - the reader must not die silently
            if self._stop.is_set():
                return
            end["error"] = f"the log stream failed: {type(err).__name__}: {err}"
        finally:
            self._stream = None
        if not self._stop.is_set():
            self._flush()
            self.ended = end
            self._send(end)
            self._stop.set()

    def _flush_loop(self) -> None:
        while not self._stop.wait(FLUSH_SECONDS):
            self._flush()

    def _flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            self._send({"type": "log-lines", "lines": pending})
