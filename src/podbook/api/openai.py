"""The OpenAI-compatible route's wire shapes: chat messages, completion bodies, stream chunks,
usage and error bodies, and the client's summaries of a chat (:class:`ChatDelta`,
:class:`ChatResult`).

The route (``{queue_url}/v2/{endpoint_id}/openai/v1/...``) speaks the OpenAI format, whose
keys are snake_case on the wire, so these models use no camelCase aliases. Response models
keep fields they do not know (OpenAI-compatible servers add their own). Nothing here
imports the ``openai`` package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .validation import RequestRejected

__all__ = [
    "CHAT_ROLES",
    "OPENAI_PREFIX",
    "ChatChoice",
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChatDelta",
    "ChatMessage",
    "ChatResult",
    "ChunkChoice",
    "ChunkDelta",
    "ModelCard",
    "ModelList",
    "OpenAIError",
    "OpenAIErrorBody",
    "Usage",
    "chat_request_body",
    "openai_error_line",
]

OPENAI_PREFIX = "/openai/v1"
"""The path of the OpenAI-compatible route below ``/v2/{endpoint_id}``."""
CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
"""Message roles the OpenAI chat format knows."""
_RESERVED_PARAMS = frozenset({"messages", "stream"})
_RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "presence_penalty": (-2.0, 2.0),
    "frequency_penalty": (-2.0, 2.0),
}
_POSITIVE_INTS = ("max_tokens", "max_completion_tokens", "n")


class OpenAIModel(BaseModel):
    """Base of the OpenAI shapes: snake_case keys as sent, unknown fields kept."""

    model_config = ConfigDict(extra="allow")


class ChatMessage(OpenAIModel):
    """One message of a conversation: ``role`` and ``content`` (text, or a list of parts)."""

    role: str
    content: str | list[Any] | None = None
    name: str | None = None


class Usage(OpenAIModel):
    """Token counts of one completion."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ChunkDelta(OpenAIModel):
    """What one stream chunk adds to a choice: the role (first chunk), a piece of content."""

    role: str | None = None
    content: str | None = None


class ChunkChoice(OpenAIModel):
    """One choice of a stream chunk."""

    index: int = 0
    delta: ChunkDelta = Field(default_factory=ChunkDelta)
    finish_reason: str | None = None


class ChatCompletionChunk(OpenAIModel):
    """One ``chat.completion.chunk`` of a streamed answer (the last may carry only ``usage``)."""

    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    choices: list[ChunkChoice] = Field(default_factory=list)
    usage: Usage | None = None


class ChatChoice(OpenAIModel):
    """One choice of a non-streamed answer."""

    index: int = 0
    message: ChatMessage = Field(default_factory=lambda: ChatMessage(role="assistant"))
    finish_reason: str | None = None


class ChatCompletion(OpenAIModel):
    """The ``chat.completion`` body of a non-streamed answer."""

    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    choices: list[ChatChoice] = Field(default_factory=list)
    usage: Usage | None = None


class ModelCard(OpenAIModel):
    """One entry of ``GET /v1/models``."""

    id: str
    object: str | None = None
    owned_by: str | None = None


class ModelList(OpenAIModel):
    """``GET /v1/models``: ``{"object": "list", "data": [...]}``."""

    object: str | None = None
    data: list[ModelCard] = Field(default_factory=list)


class OpenAIError(OpenAIModel):
    """The ``error`` of an OpenAI-shaped error body."""

    message: str = ""
    type: str | None = None
    param: str | None = None
    code: int | str | None = None


class OpenAIErrorBody(OpenAIModel):
    """``{"error": {"message", "type", "param", "code"}}``."""

    error: OpenAIError


def openai_error_line(error: Mapping[str, Any]) -> tuple[str | None, str]:
    """``(title, detail)`` of an OpenAI error object: its ``type`` as the title and its
    ``message`` (with ``param`` when given) as one line."""
    message = str(error.get("message") or "").strip() or "the service gave no message"
    param = error.get("param")
    if param:
        message = f"{message} (param: {param})"
    kind = error.get("type")
    return (str(kind) if kind else None), " ".join(message.split())


# --- what the client yields ------------------------------------------------------------------


class ChatDelta(BaseModel):
    """One piece of a streamed reply: ``content`` (possibly empty), the ``role`` (on the
    first piece), and ``finish_reason`` (on the last: ``"stop"``, ``"length"``, ...)."""

    model_config = ConfigDict(frozen=True)

    content: str = ""
    role: str | None = None
    finish_reason: str | None = None
    index: int = 0


class ChatResult(BaseModel):
    """The whole reply of a chat request, with its usage and timings.

    ``time_to_first_token_s``: from sending the request to the first piece of content (for a
    non-streamed request, to the answer). ``tokens_per_s``: generation speed after the first
    token (streamed: ``completion_tokens - 1`` over the time from the first to the last piece;
    non-streamed: ``completion_tokens`` over the whole request). Tokens are ``usage``'s when
    the server reports it, else the count of content pieces. ``job_id`` is the queue job that
    served it when the server says so.
    """

    text: str = ""
    role: str = "assistant"
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None
    id: str | None = None
    job_id: str | None = None
    time_to_first_token_s: float | None = None
    tokens_per_s: float | None = None
    duration_s: float | None = None
    pieces: int = 0
    """How many pieces of content arrived (1 for a non-streamed answer)."""
    stopped: bool = False
    """True when the reader stopped before the server ended the reply (the stream closed)."""

    @property
    def message(self) -> ChatMessage:
        """The reply as a message, to append to the conversation."""
        return ChatMessage(role=self.role, content=self.text)

    @property
    def completion_tokens(self) -> int | None:
        """The reply's tokens as the server counted them (None when it did not say)."""
        return self.usage.completion_tokens if self.usage is not None else None

    @property
    def tokens(self) -> int:
        """The reply's tokens: the server's count, else the pieces received (an OpenAI
        stream sends about one token a piece)."""
        counted = self.completion_tokens
        return counted if counted is not None else self.pieces


# --- the request -----------------------------------------------------------------------------


def _message_dict(message: Any) -> Any:
    if isinstance(message, BaseModel):
        return message.model_dump(exclude_none=True)
    if isinstance(message, Mapping):
        return dict(message)
    return message


def _messages(messages: Any) -> list[Any]:
    if isinstance(messages, (str, Mapping, BaseModel)):
        messages = [messages]
    if not isinstance(messages, Iterable):
        raise RequestRejected.from_errors(
            422, [f"messages: must be a list of messages, not {type(messages).__name__}"]
        )
    items = [
        {"role": "user", "content": m} if isinstance(m, str) else _message_dict(m) for m in messages
    ]
    if not items:
        raise RequestRejected.from_errors(422, ["messages: give at least one message"])
    return items


def _message_errors(items: list[Any]) -> list[str]:
    errors: list[str] = []
    roles = ", ".join(sorted(CHAT_ROLES))
    for i, item in enumerate(items):
        where = f"messages[{i}]"
        if not isinstance(item, dict):
            errors.append(f"{where}: must be an object with role and content")
            continue
        role, content = item.get("role"), item.get("content")
        if role not in CHAT_ROLES:
            errors.append(f"{where}.role: must be one of {roles}, not {role!r}")
        if content is not None and not isinstance(content, (str, list)):
            kind = type(content).__name__
            errors.append(f"{where}.content: must be text or a list of parts, not {kind}")
    return errors


def _param_errors(params: Mapping[str, Any]) -> list[str]:
    errors = [f"{name}: is set by chat() itself" for name in params if name in _RESERVED_PARAMS]
    for name, (low, high) in _RANGES.items():
        value = params.get(name)
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not low <= value <= high
        ):
            errors.append(f"{name}: must be a number from {low:g} to {high:g}, not {value!r}")
    for name in _POSITIVE_INTS:
        value = params.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            errors.append(f"{name}: must be a whole number of at least 1, not {value!r}")
    return errors


def chat_request_body(
    messages: Any,
    *,
    stream: bool,
    model: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of ``POST .../openai/v1/chat/completions``, checked before sending.

    ``messages``: a list of :class:`ChatMessage` s or ``{"role", "content"}`` dicts (a plain
    string is a user message). ``params`` go into the body as given (``temperature``,
    ``max_tokens``, ``top_p``, ``stop``, ``seed``, a server's own extras...); the common ones
    are range-checked. A streamed request asks for the final ``usage`` chunk
    (``stream_options.include_usage``) unless ``params`` says otherwise. Raises
    :class:`~podbook.api.validation.RequestRejected` (422) for a body that cannot be right.
    """
    params = dict(params or {})
    items = _messages(messages)
    errors = _message_errors(items) + _param_errors(params)
    if model is not None and (not isinstance(model, str) or not model.strip()):
        errors.append(f"model: must be a non-empty string, not {model!r}")
    if errors:
        raise RequestRejected.from_errors(422, errors)
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    body["messages"] = items
    body.update(params)
    body["stream"] = bool(stream)
    if stream:
        body.setdefault("stream_options", {"include_usage": True})
    return body
