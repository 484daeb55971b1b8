"""Each endpoint's conversation in a notebook session: the system message and the messages
exchanged so far, sent again with every new question (the route keeps no state).

A question's turn is recorded once its reply has ended: the user's message and the reply
(a stopped reply as far as it came; a failed turn leaves nothing). While a turn streams it is
the conversation's ``pending`` turn; the next question on the same endpoint waits for it.
"""

from __future__ import annotations

import threading
from typing import Any

from podbook.notebook.session import PerSession

__all__ = ["ChatHistory", "Conversation", "Conversations", "close_conversations", "for_session"]


class ChatHistory(list):
    """The result of ``%chat history``: the messages (``ChatMessage``) of one endpoint's
    conversation, system message first; displays as a transcript."""

    endpoint_id: str = ""


class Conversation:
    """One endpoint's chat (thread-safe: a turn records its reply from a reader thread)."""

    def __init__(self, endpoint_id: str) -> None:
        self.endpoint_id = endpoint_id
        self.system: str | None = None
        self.pending: Any = None
        self._messages: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def request_messages(self, prompt: str) -> list[dict[str, str]]:
        """What a new question sends: the system message, the conversation, the question."""
        with self._lock:
            head = [{"role": "system", "content": self.system}] if self.system else []
            return [*head, *self._messages, {"role": "user", "content": prompt}]

    def record(self, prompt: str, reply: str, role: str = "assistant") -> None:
        """Keep one exchange: the user's ``prompt`` and the ``reply``."""
        with self._lock:
            self._messages.append({"role": "user", "content": prompt})
            self._messages.append({"role": role, "content": reply})

    def history(self) -> ChatHistory:
        """The conversation as ``ChatMessage`` s, system message first."""
        from podbook.api.openai import ChatMessage

        with self._lock:
            head = [{"role": "system", "content": self.system}] if self.system else []
            items = [*head, *self._messages]
        history = ChatHistory(ChatMessage.model_validate(m) for m in items)
        history.endpoint_id = self.endpoint_id
        return history

    def __len__(self) -> int:
        with self._lock:
            return len(self._messages)

    def reset(self) -> None:
        """Forget the messages and the system message (a streaming turn is stopped)."""
        pending = self.pending
        if pending is not None:
            pending.stop()
        with self._lock:
            self._messages.clear()
            self.system = None


class Conversations:
    """The conversations of one notebook session, by endpoint, and the last endpoint used."""

    def __init__(self) -> None:
        self._by_endpoint: dict[str, Conversation] = {}
        self._lock = threading.Lock()
        self.last: str | None = None

    def get(self, endpoint_id: str) -> Conversation:
        """The endpoint's conversation (a new, empty one the first time)."""
        with self._lock:
            conversation = self._by_endpoint.get(endpoint_id)
            if conversation is None:
                conversation = self._by_endpoint[endpoint_id] = Conversation(endpoint_id)
            return conversation

    def known(self) -> list[Conversation]:
        """Every conversation started in this session, oldest first."""
        with self._lock:
            return list(self._by_endpoint.values())

    def close(self) -> None:
        """Stop every streaming turn (the extension is unloading)."""
        for conversation in self.known():
            if conversation.pending is not None:
                conversation.pending.stop()


_sessions: PerSession[Conversations] = PerSession(lambda _session: Conversations())


def for_session(session: Any) -> Conversations:
    """The :class:`Conversations` of a notebook session (created on first use)."""
    return _sessions.of(session)


def close_conversations(session: Any) -> None:
    """Stop the streaming turns of ``session`` and forget its conversations."""
    _sessions.close(session)
