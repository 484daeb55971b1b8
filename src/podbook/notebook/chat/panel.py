"""ChatPanel: one ``%%chat`` turn, live (view: ``views/chat.js``).

Traits: ``endpoint``, ``prompt`` (the user's message), ``status`` (WAITING, STREAMING, DONE,
STOPPED, FAILED), ``pieces`` (how many pieces of the reply arrived), ``tail`` (the last ≤ 200
pieces as ``{"i", "output"}``), ``reply`` (the whole reply, set once it has ended: a
re-rendered view and a saved notebook show all of it), ``stats`` (ttft, tokensPerSecond,
tokens, finishReason, model, jobId), ``busy`` ("stop" while stopping), ``error``.

The reply is read by a :class:`~podbook.notebook.endpoints.pump.StreamPump` on background threads
(the kernel stays free, so Stop is heard while it streams): pieces go to the view as
``{"type": "chunks", "start", "items"}`` messages about every 75 ms, as for a job's stream.
The view's ``{"type": "ready", "have": n}`` is answered with the pieces after ``n`` still in
the tail; ``{"type": "stop"}`` closes the stream (the service cancels the job). No key or
client object ever reaches a trait.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import traitlets

from podbook.notebook.chat.static import turn_html, turn_text
from podbook.notebook.chat.turn import ENDED, ChatTurn
from podbook.notebook.endpoints.pump import StreamPump
from podbook.notebook.endpoints.rate import RateMeter
from podbook.notebook.endpoints.streambuffer import StreamBuffer
from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, now_iso, run_in_worker

STATS_INTERVAL = 0.25
"""Seconds between two updates of the ``stats`` trait while the reply streams."""


class ChatPanel(Panel):
    """A chat turn: the question, the reply as it streams, time to first token, tokens/s, Stop."""

    _esm = view_asset("chat.js")
    _css = view_asset("podbook.css")
    needs: ClassVar[frozenset[str]] = frozenset()

    endpoint = traitlets.Unicode("").tag(sync=True)
    prompt = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    pieces = traitlets.Int(0).tag(sync=True)
    tail = traitlets.List().tag(sync=True)
    reply = traitlets.Unicode("").tag(sync=True)
    stats = traitlets.Dict().tag(sync=True)
    busy = traitlets.Unicode("").tag(sync=True)

    def __init__(self, turn: ChatTurn) -> None:
        super().__init__()
        self.turn = turn
        self._buffer = StreamBuffer()
        self._stats_at = 0.0
        self._view_ready = False
        self._pump = StreamPump(
            turn.answers,
            self._flush,
            self._buffer,
            RateMeter(),
            name=f"podbook-chat-{turn.endpoint_id[:24]}",
        )
        with self.hold_sync():
            self.endpoint = turn.endpoint_id
            self.prompt = turn.prompt
            self.status = turn.status
        self.on_msg(self._on_view_message)

    def start(self) -> ChatPanel:
        """Start reading the reply (on the pump's threads)."""
        self._pump.start()
        return self

    @property
    def final(self) -> bool:
        """True once the reply has ended."""
        return self.status in ENDED

    @property
    def settled(self) -> bool:
        """True once the reply has ended and the displays were re-sent with it."""
        return self.final and not self._pump.running

    def _flush(self, final: bool) -> None:
        """Send what arrived (on the pump's flusher thread); at the end, finish the turn."""
        try:
            self._send_progress(final)
        finally:
            if final:
                self._ended(self._pump.failure)

    def _send_progress(self, final: bool) -> None:
        buffer = self._buffer
        while (batch := buffer.take()) is not None:
            self.send(batch.message())
        now = time.monotonic()
        with self._lock, self.hold_sync():
            self.pieces = buffer.total
            if self.turn.status != self.status and self.status not in ENDED:
                self.status = self.turn.status
            if now - self._stats_at >= STATS_INTERVAL:
                self.stats = self.turn.stats()
                self._stats_at = now
            tail = buffer.tail_to_send(now, final=final, view_ready=self._view_ready)
            if tail is not None:
                self.tail = tail

    def _ended(self, failure: BaseException | None) -> None:
        self.turn.finish(failure)
        stats = self.turn.stats()
        result = self.turn.result
        if result is not None and result.stopped and result.completion_tokens is None:
            # stopped before the server counted: the tokens are the pieces this panel got
            stats["tokens"] = self._buffer.total
        with self._lock, self.hold_sync():
            self.reply = self.turn.text
            self.pieces = self._buffer.total
            self.stats = stats
            self.error = self.turn.error
            self.status = self.turn.status
            self.busy = ""
            self.updated = now_iso()
        self.refresh_displays()

    def refresh_displays(self) -> None:
        """Re-send the displays with the reply (:meth:`Panel.redisplay`)."""
        self.redisplay()

    # -- the view's messages ------------------------------------------------------------------

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "stop":
            self.request_stop()
        elif kind == "ready":
            self._view_ready = True
            batch = self._buffer.backlog_after(content.get("have"))
            if batch is not None:  # the pieces after ``have`` still in the tail
                self.send(batch.message())

    def request_stop(self) -> None:
        """Stop the reply (the Stop button): the stream is closed on a worker thread."""
        if self.final or self.busy:
            return
        with self._lock:
            self.busy = "stop"
        run_in_worker(self.turn.stop)

    # -- static forms -------------------------------------------------------------------------

    def _snapshot_args(self) -> tuple[str, str, str, str, dict[str, Any], str]:
        turn = self.turn
        return (turn.endpoint_id, turn.prompt, turn.text, turn.status, turn.stats(), turn.error)

    def snapshot_text(self) -> str:
        return turn_text(*self._snapshot_args())

    def snapshot_html(self) -> str:
        return turn_html(*self._snapshot_args())
