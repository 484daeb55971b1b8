"""One question of a ``%%chat`` cell and its reply: what ``%%chat`` returns.

A :class:`ChatTurn` owns the client's :class:`~podbook.client.resources.chat.ChatStream`.
With a live front end, the chat panel reads it on background threads (the kernel stays free,
so the panel's Stop button is heard); without one (terminal IPython) the magic reads it in
the cell and prints the pieces as they arrive. Either way :meth:`ChatTurn.finish` records
the exchange in the endpoint's conversation and wakes whoever :meth:`waits <ChatTurn.wait>`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podbook.api.openai import ChatResult
    from podbook.notebook.chat.conversation import Conversation

__all__ = ["DONE", "FAILED", "STOPPED", "STREAMING", "WAITING", "ChatTurn", "chat_stats"]

WAITING = "WAITING"
"""Sent; no piece of the reply yet."""
STREAMING = "STREAMING"
DONE = "DONE"
STOPPED = "STOPPED"
"""Stop was pressed (or ``turn.stop()`` called): the stream closed, the job cancelled."""
FAILED = "FAILED"
ENDED = (DONE, STOPPED, FAILED)


def chat_stats(result: ChatResult | None) -> dict[str, Any]:
    """The panel's ``stats`` trait from a (partial or final) result: ``ttft`` (seconds) and
    ``tokensPerSecond`` (rounded), ``tokens`` (the server's count, else the pieces received),
    ``finishReason``, ``model``, ``jobId``."""
    if result is None:
        return {}
    stats = {
        "ttft": None
        if result.time_to_first_token_s is None
        else round(result.time_to_first_token_s, 3),
        "tokensPerSecond": None if result.tokens_per_s is None else round(result.tokens_per_s, 1),
        "tokens": result.tokens or None,
        "finishReason": result.finish_reason,
        "model": result.model,
        "jobId": result.job_id,
    }
    return {key: value for key, value in stats.items() if value is not None}


class ChatTurn:
    """A question sent to an endpoint and its reply, streamed.

    ``text`` is the reply so far; once it has ended, ``result`` is the
    :class:`~podbook.api.openai.ChatResult` (usage, time to first token, tokens/s) and
    ``status`` is ``DONE``, ``STOPPED`` or ``FAILED`` (then ``error`` says why, in one line).
    :meth:`stop` closes the stream (the service cancels the job); :meth:`wait` blocks until
    the reply has ended.
    """

    def __init__(self, conversation: Conversation, prompt: str, stream: Any) -> None:
        self.endpoint_id = conversation.endpoint_id
        self.prompt = prompt
        self.status = WAITING
        self.error = ""
        self.failure: BaseException | None = None
        self.result: ChatResult | None = None
        self._conversation = conversation
        self._stream = stream
        self._done = threading.Event()
        self._listeners: list[Callable[[ChatTurn], None]] = []
        self.panel: Any = None
        """The turn's live panel, when one shows it."""
        conversation.pending = self

    # -- state --------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The reply so far (all of it once ended)."""
        return self.result.text if self.result is not None else self._stream.text

    @property
    def done(self) -> bool:
        """True once the reply has ended (done, stopped or failed)."""
        return self._done.is_set()

    @property
    def job_id(self) -> str | None:
        """The queue job that serves the question, once the answer named it."""
        return self._stream.job_id

    def stats(self) -> dict[str, Any]:
        """Time to first token, tokens/s, tokens, ... of the reply so far."""
        return chat_stats(self.result if self.result is not None else self._stream.partial())

    def on_end(self, listener: Callable[[ChatTurn], None]) -> None:
        """Call ``listener(turn)`` once the reply has ended (at once if it has)."""
        self._listeners.append(listener)
        if self.done:
            listener(self)

    # -- reading ------------------------------------------------------------------------------

    def answers(self) -> Iterator[dict[str, Any]]:
        """The reply as the stream pump reads it: ``{"stream": [{"output": piece}], "status"}``
        per piece of text (see :class:`~podbook.notebook.endpoints.pump.StreamPump`)."""
        for delta in self._stream:
            if delta.content:
                self.status = STREAMING
                yield {"stream": [{"output": delta.content}], "status": STREAMING}

    def read_printing(self, write: Callable[[str], Any]) -> None:
        """Read the whole reply here, ``write`` -ing each piece as it arrives (no front end).
        An interrupt (Ctrl-C) stops it like the Stop button; a failure is raised."""
        failure: BaseException | None = None
        try:
            for delta in self._stream:
                if delta.content:
                    self.status = STREAMING
                    write(delta.content)
        except KeyboardInterrupt:
            self.stop()
        except Exception as err:
            failure = err
        self.finish(failure)
        if failure is not None:
            raise failure

    def finish(self, failure: BaseException | None) -> None:
        """The reply has ended: note how, record the exchange, wake the waiters."""
        from podbook.notebook.errors import describe_failure

        result = self._stream.partial()
        self.result = result
        if failure is not None:
            self.failure = failure
            self.error = describe_failure(failure, "chat").splitlines()[0]
            self.status = FAILED
        else:
            self.status = STOPPED if result.stopped else DONE
            if result.text:
                self._conversation.record(self.prompt, result.text, result.role)
        if self._conversation.pending is self:
            self._conversation.pending = None
        self._done.set()
        for listener in list(self._listeners):
            listener(self)

    # -- actions ------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the reply: close the stream (the service cancels its job). Safe from any
        thread; a reply that has ended is left as it is."""
        if not self.done:
            self._stream.close()

    def wait(self, timeout: float | None = None) -> ChatResult:
        """Block until the reply has ended; returns its result (raises the failure of a
        failed turn, ``TimeoutError`` after ``timeout`` seconds)."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"the reply of {self.endpoint_id} did not end in {timeout:g} s")
        if self.failure is not None:
            raise self.failure
        assert self.result is not None
        return self.result

    def wait_quietly(self, timeout: float | None = None) -> bool:
        """Block until the reply has ended (True) or ``timeout`` seconds passed (False);
        never raises the turn's failure."""
        return self._done.wait(timeout)

    def __repr__(self) -> str:
        from podbook.notebook.chat.static import turn_text

        return turn_text(
            self.endpoint_id, self.prompt, self.text, self.status, self.stats(), self.error
        )
