"""``podbook.openai_handler``: a plain text generator as an OpenAI-compatible handler.

::

    from podbook import openai_handler

    async def generate(prompt_or_messages, params):
        for word in ["Hello", " there", "!"]:
            yield word

    handler = openai_handler(generate, model="my-model")

``podbook worker handler.py --endpoint ID`` (or ``podbook.serve(handler, ...)``, or
``runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})``) then serves
the endpoint's OpenAI-compatible route, ``{queue_url}/v2/ID/openai/v1``, the way the service's
vLLM worker does: for a job whose input has ``openai_route`` (and ``openai_input``, the request
body), ``/v1/chat/completions`` and ``/v1/completions`` answer in OpenAI's format, streamed
(``"stream": true``: one SSE string ``data: {chunk}\\n\\n`` per piece, the role first, then a
chunk with ``finish_reason``, the ``usage`` chunk when ``stream_options.include_usage``, and
``data: [DONE]``) or whole (``chat.completion`` / ``text_completion`` with ``usage``);
``/v1/models`` lists ``model``; any other route answers vLLM's "Invalid route" error object.
A job without ``openai_route`` (``/run`` with ``{"prompt": ...}`` or ``{"messages": [...]}``)
streams the bare text pieces.

``generate(prompt_or_messages, params)`` receives the chat ``messages`` (a list of
``{"role", "content"}``) or the completion ``prompt`` (a string), and ``params``: every other
field of the request body (``max_tokens``, ``temperature``, ``stop``, extra fields such as
``delay_ms``...). It is a sync or async generator of text pieces; a sync one runs in a thread,
so it may block. ``max_tokens`` (or ``max_completion_tokens``) is enforced here: generation
stops after that many pieces (``finish_reason: "length"``). Usage counts pieces as completion
tokens and words and punctuation of the prompt as prompt tokens. Any ``model`` is accepted and
echoed back (the answer names the one asked for, ``model`` when none was).
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson

__all__ = ["DEFAULT_MODEL", "OpenAIFormatter", "RequestError", "openai_handler"]

DEFAULT_MODEL = "podbook-model"
CHAT_ROUTE = "/v1/chat/completions"
COMPLETIONS_ROUTE = "/v1/completions"
MODELS_ROUTE = "/v1/models"
_DONE = "data: [DONE]\n\n"
_TOKEN = re.compile(r"\w+|[^\w\s]")

Generate = Callable[[Any, dict[str, Any]], Any]


class RequestError(ValueError):
    """A request that cannot be answered (a bad parameter): raised by the helper or by
    ``generate`` before its first piece, it is answered with an OpenAI error (HTTP 400)
    naming ``param``; raised later, the stream ends with that error."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def error_object(message: str, *, param: str | None = None, code: int = 400) -> dict[str, Any]:
    """vLLM's error object, which the service answers as an HTTP error with status ``code``."""
    return {
        "object": "error",
        "message": message,
        "type": "BadRequestError",
        "param": param,
        "code": code,
    }


def count_tokens(text: str) -> int:
    """A rough token count: words and punctuation marks."""
    return len(_TOKEN.findall(text))


def _sse(data: dict[str, Any]) -> str:
    return "data: " + orjson.dumps(data).decode("utf-8") + "\n\n"


def _prompt_text(source: Any) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        parts = []
        for item in source:
            content = item.get("content") if isinstance(item, dict) else item
            if isinstance(content, list):  # content parts: keep the text ones
                content = " ".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
            parts.append(str(content or ""))
        return "\n".join(parts)
    return ""


def _positive_int(params: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = params.get(name)
        if value is None:
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON does not tell 8 from 8.0
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RequestError(f"{name} must be a positive integer, got {value!r}", name)
        return value
    return None


def _check_common(body: dict[str, Any]) -> None:
    """The types of ``model``, ``stream`` and ``stream_options`` (a 400 when wrong)."""
    if "model" in body and not isinstance(body["model"], str):
        raise RequestError("model must be a string", "model")
    if body.get("stream") is not None and not isinstance(body["stream"], bool):
        raise RequestError("stream must be true or false", "stream")
    options = body.get("stream_options")
    if options is not None and not (
        isinstance(options, dict)
        and (options.get("include_usage") is None or isinstance(options["include_usage"], bool))
    ):
        raise RequestError('stream_options must be like {"include_usage": true}', "stream_options")


def _chat_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages must be a non-empty list of messages", "messages")
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RequestError(
                'each message must be like {"role": "user", "content": "..."}', "messages"
            )
        if not isinstance(message.get("content"), (str, list, type(None))):
            raise RequestError("a message's content must be a string, a list or null", "messages")
    return messages


def _completion_prompt(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and all(isinstance(part, str) for part in prompt):
        return "".join(prompt)
    if not isinstance(prompt, str):
        raise RequestError("prompt must be a string or a list of strings", "prompt")
    return prompt


class OpenAIFormatter:
    """One request's answer in OpenAI's format: the pieces in, the outputs to yield out.

    ``start()`` before the first piece, ``piece(text)`` per piece, ``finish()`` at the end;
    each returns what the handler yields (nothing for a request that is not streamed, whose
    whole body comes from ``finish()``).
    """

    def __init__(self, job_id: str, route: str, body: dict[str, Any], model: str) -> None:
        self.chat = route == CHAT_ROUTE
        _check_common(body)
        self.stream = body.get("stream") is True
        self.model = body.get("model") or model
        self.id = ("chatcmpl-" if self.chat else "cmpl-") + job_id
        self.created = int(time.time())
        self.source = _chat_messages(body) if self.chat else _completion_prompt(body)
        self.params = {k: v for k, v in body.items() if k not in ("messages", "prompt")}
        self.max_tokens = _positive_int(self.params, "max_completion_tokens", "max_tokens")
        options = body.get("stream_options") or {}
        self.include_usage = options.get("include_usage") is True
        self.prompt_tokens = count_tokens(_prompt_text(self.source))
        self.pieces: list[str] = []

    @property
    def full(self) -> bool:
        """Whether ``max_tokens`` pieces have been produced (stop generating)."""
        return self.max_tokens is not None and len(self.pieces) >= self.max_tokens

    def _chunk(self, delta_or_text: Any, finish: str | None) -> dict[str, Any]:
        if self.chat:
            choice = {"index": 0, "delta": delta_or_text, "logprobs": None, "finish_reason": finish}
            kind = "chat.completion.chunk"
        else:
            choice = {"index": 0, "text": delta_or_text, "logprobs": None, "finish_reason": finish}
            kind = "text_completion"
        return {
            "id": self.id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "choices": [choice],
        }

    def _usage(self) -> dict[str, int]:
        completion = len(self.pieces)
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": self.prompt_tokens + completion,
        }

    def start(self) -> list[str]:
        """The role chunk of a streamed chat; nothing otherwise."""
        if self.stream and self.chat:
            return [_sse(self._chunk({"role": "assistant", "content": ""}, None))]
        return []

    def piece(self, text: str) -> list[str]:
        """One generated piece: its chunk when streamed."""
        self.pieces.append(text)
        if not self.stream:
            return []
        return [_sse(self._chunk({"content": text} if self.chat else text, None))]

    def finish(self) -> list[Any]:
        """The end: the finish chunk, usage and ``[DONE]``; or the whole body."""
        reason = "length" if self.full else "stop"
        if self.stream:
            last = _sse(self._chunk({} if self.chat else "", reason))
            if self.include_usage:
                usage = {**self._chunk({}, None), "choices": [], "usage": self._usage()}
                last += _sse(usage)
            return [last + _DONE]
        text = "".join(self.pieces)
        if self.chat:
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": reason,
            }
            kind = "chat.completion"
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": reason}
            kind = "text_completion"
        return [
            {
                "id": self.id,
                "object": kind,
                "created": self.created,
                "model": self.model,
                "choices": [choice],
                "usage": self._usage(),
            }
        ]


def _models(model: str, owned_by: str) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"id": model, "object": "model", "created": int(time.time()), "owned_by": owned_by}
        ],
    }


def _native_request(data: Any) -> tuple[Any, dict[str, Any]]:
    """``(prompt_or_messages, params)`` of a job sent without ``openai_route``."""
    if isinstance(data, str):
        return data, {}
    if not isinstance(data, dict):
        raise RequestError('input must be {"prompt": "..."} or {"messages": [...]}')
    source = data.get("messages", data.get("prompt", ""))
    params = {k: v for k, v in data.items() if k not in ("messages", "prompt")}
    sampling = params.pop("sampling_params", None)
    if isinstance(sampling, dict):  # vLLM's native input keeps them apart
        params = {**sampling, **params}
    return source, params


async def _pieces(generate: Generate, source: Any, params: dict[str, Any]) -> AsyncIterator[str]:
    """The text pieces of ``generate``, sync or async (a sync one steps in a thread)."""
    produced = generate(source, params)
    if inspect.isawaitable(produced) and not inspect.isasyncgen(produced):
        produced = await produced
    if inspect.isasyncgen(produced) or hasattr(produced, "__anext__"):
        async for piece in produced:
            yield str(piece)
        return
    if isinstance(produced, str):
        yield produced
        return
    iterator: Iterator[Any] = iter(produced)
    end = object()
    # One thread of its own: the generator steps there in turn, and is closed there after
    # the step in progress (a stopped job does not wait for it).
    thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="podbook-generate")
    try:
        while True:
            piece = await asyncio.wrap_future(thread.submit(next, iterator, end))
            if piece is end:
                return
            yield str(piece)
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            thread.submit(close)
        thread.shutdown(wait=False)


async def _limited(pieces: AsyncIterator[str], limit: int | None) -> AsyncIterator[str]:
    """At most ``limit`` of ``pieces`` (all when None); the source is closed either way."""
    count = 0
    try:
        async for text in pieces:
            yield text
            count += 1
            if limit is not None and count >= limit:
                return
    finally:
        await pieces.aclose()  # type: ignore[attr-defined]


async def _answer(formatter: OpenAIFormatter, generate: Generate) -> AsyncIterator[Any]:
    pieces = _pieces(generate, formatter.source, formatter.params)
    started = False
    try:
        if not formatter.full:
            async for text in pieces:
                if not started:
                    started = True
                    for output in formatter.start():
                        yield output
                for output in formatter.piece(text):
                    yield output
                if formatter.full:
                    break
    except RequestError as exc:
        yield error_object(str(exc), param=exc.param)
        return
    finally:
        await pieces.aclose()
    if not started:
        for output in formatter.start():
            yield output
    for output in formatter.finish():
        yield output


def openai_handler(
    generate: Generate, *, model: str = DEFAULT_MODEL, owned_by: str = "podbook"
) -> Callable[[dict[str, Any]], AsyncIterator[Any]]:
    """A runpod-style handler (an async generator ``handler(job)``) that answers OpenAI chat
    and completion requests with the text pieces of ``generate`` (see the module doc)."""

    async def handler(job: dict[str, Any]) -> AsyncIterator[Any]:
        data = job.get("input")
        route = data.get("openai_route") if isinstance(data, dict) else None
        try:
            if route is None:
                source, params = _native_request(data)
                limit = _positive_int(params, "max_completion_tokens", "max_tokens")
                async for text in _limited(_pieces(generate, source, params), limit):
                    yield text
                return
            if route == MODELS_ROUTE:
                yield _models(model, owned_by)
                return
            if route not in (CHAT_ROUTE, COMPLETIONS_ROUTE):
                yield error_object(f"Invalid route: {route}")
                return
            body = data.get("openai_input")
            if not isinstance(body, dict):
                raise RequestError("the request body must be a JSON object")
            formatter = OpenAIFormatter(str(job.get("id", "")), route, body, model)
        except RequestError as exc:
            yield error_object(str(exc), param=exc.param)
            return
        async for output in _answer(formatter, generate):
            yield output

    handler.__name__ = handler.__qualname__ = getattr(generate, "__name__", "handler")
    handler.__doc__ = f"OpenAI-compatible handler around {handler.__name__} (model {model!r})."
    return handler
