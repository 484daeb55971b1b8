"""Chat through an endpoint's OpenAI-compatible route: ``client.endpoint(ID).chat(messages)``.

``POST {queue_url}/v2/{endpoint_id}/openai/v1/chat/completions``, the route the ``openai``
package is pointed at (:attr:`EndpointChat.openai_base_url`), spoken here with httpx only.

- ``chat(messages)`` (``stream=True``) returns a :class:`ChatStream`: an iterator of
  :class:`~podbook.api.openai.ChatDelta` s read from the Server-Sent Events as they arrive;
  once it has ended, ``.result`` is the :class:`~podbook.api.openai.ChatResult` (the whole
  text, ``usage``, ``finish_reason``, time to first token, tokens/s). Closing it (``close()``,
  leaving a ``with`` block, from another thread too) closes the HTTP stream, and the service
  cancels the request's job. The async twin, :class:`AsyncChatStream`, is read with
  ``async for``.
- ``chat(messages, stream=False)`` returns the :class:`ChatResult` (async: awaitable).

Errors: an OpenAI-shaped error body (``{"error": {"message", "type", ...}}``), at the start or
as an event in the stream, becomes podbook's typed exception for its status (``BadRequest``,
``NotFound``, ``ServerError``, ...) whose ``str()`` is the message on one line. A request the
service would refuse (no messages, an unknown role, ``temperature`` out of range) raises
:class:`~podbook.errors.InvalidRequest` and nothing is sent. A 429 is retried after
``Retry-After`` as the client's retry policy says; a request that may have reached the
service is never sent again (it would start a second job).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

import httpx

from podbook.client._core import Call, call_result, invalid_request_from
from podbook.client._sse import SseEvent, SseParser
from podbook.errors import APIError, ConnectionFailed, error_class_for_status

if TYPE_CHECKING:
    from podbook.api.openai import ChatCompletion, ChatDelta, ChatResult, Usage
    from podbook.client._async import AsyncClient
    from podbook.client._sync import Client

__all__ = [
    "AsyncChatStream",
    "AsyncEndpointChat",
    "ChatStream",
    "ChatTally",
    "EndpointChat",
    "chat_call",
]

CHAT_READ_TIMEOUT = 600.0
"""Seconds a chat request may wait for its next bytes (a cold worker may take minutes to
send the first token); ``chat(..., timeout=)`` changes it."""
JOB_ID_HEADER = "x-request-id"
"""The header in which the local emulator names the job that serves an ``/openai`` request."""
STREAM_ACCEPT = "text/event-stream, application/json, application/problem+json"
DONE = "[DONE]"


def _openai():
    from podbook.api import openai

    return openai


def chat_call(
    endpoint_path_id: str,
    messages: Any,
    *,
    stream: bool,
    model: str | None,
    params: Mapping[str, Any],
    timeout: float | None,
) -> Call[ChatCompletion]:
    """The checked ``POST .../openai/v1/chat/completions`` call (``InvalidRequest``, nothing
    sent, for a body the service would refuse)."""
    from podbook.api.validation import RequestRejected
    from podbook.client.resources.base import model_parser

    openai = _openai()
    try:
        body = openai.chat_request_body(messages, stream=stream, model=model, params=params)
    except RequestRejected as exc:
        raise invalid_request_from(exc) from None
    return Call(
        "POST",
        f"/v2/{endpoint_path_id}{openai.OPENAI_PREFIX}/chat/completions",
        base="queue",
        json=body,
        parse=model_parser(openai.ChatCompletion),
        timeout=CHAT_READ_TIMEOUT if timeout is None else timeout,
    )


def stream_error(error: Any, url: str) -> APIError:
    """The typed exception for an ``{"error": ...}`` event inside a stream: its status is the
    error's ``code`` when that is an HTTP error status, else 500."""
    fields = error if isinstance(error, Mapping) else {"message": str(error)}
    title, detail = _openai().openai_error_line(fields)
    code = fields.get("code")
    status = code if isinstance(code, int) and 400 <= code <= 599 else 500
    return error_class_for_status(status)(status, title or "Error", detail, method="POST", url=url)


_CHUNK_KEYS = frozenset({"choices", "usage", "object", "id"})
_PREVIEW_CHARS = 120


def not_openai(url: str, body: Any, status: int = 200) -> APIError:
    """The error for an answer that is not in the OpenAI chat format (a handler that is not
    OpenAI-compatible, such as ``echo``, answered the route)."""
    preview = json.dumps(body, ensure_ascii=False, default=str)
    if len(preview) > _PREVIEW_CHARS:
        preview = preview[: _PREVIEW_CHARS - 1] + "…"
    detail = (
        f"the endpoint did not answer in the OpenAI chat format (it sent {preview}); its "
        "handler is not OpenAI-compatible: serve one made with podbook.openai_handler"
    )
    return APIError(status, "Unexpected response", detail, method="POST", url=url)


class ChatTally:
    """The I/O-free state of one chat request: the reply so far, its usage and its timings.

    ``clock`` is :func:`time.monotonic` (tests pass their own).
    """

    def __init__(self, url: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self._clock = clock
        self.parser = SseParser()
        self.started = clock()
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.pieces = 0
        self.parts: list[str] = []
        self.role = "assistant"
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None
        self.id: str | None = None
        self.job_id: str | None = None
        self.ended = False

    def restart(self) -> None:
        """Start the clock again (a 429 was waited out before the request went through)."""
        self.started = self._clock()

    def take_response(self, response: httpx.Response) -> None:
        """Note what the answer's headers say (the job id, on the local emulator)."""
        self.job_id = response.headers.get(JOB_ID_HEADER) or self.job_id

    def take_line(self, line: str) -> list[ChatDelta]:
        """The deltas of the event a line completes (none for other lines); raises the typed
        error of an error event."""
        event = self.parser.feed(line)
        return self.take_event(event) if event is not None else []

    def finish_stream(self) -> list[ChatDelta]:
        """At the end of the body: the deltas of an event the server sent without its closing
        blank line."""
        return self.take_line("") if not self.ended else []

    def take_event(self, event: SseEvent) -> list[ChatDelta]:
        """The deltas one Server-Sent Event carries (``[DONE]`` ends the reply)."""
        data = event.data.strip()
        if data == DONE:
            self.ended = True
            return []
        if not data:
            return []
        try:
            body = json.loads(data)
        except ValueError:
            return []  # not JSON: no chunk of ours (a server's own keep-alive, say)
        if not isinstance(body, dict):
            return []
        if "error" in body and not body.get("choices"):
            raise stream_error(body["error"], self.url)
        if not _CHUNK_KEYS & body.keys():
            raise not_openai(self.url, body)
        return self.take_chunk(body)

    def take_chunk(self, body: Mapping[str, Any]) -> list[ChatDelta]:
        """The deltas of one ``chat.completion.chunk`` (choice 0; others are ignored)."""
        openai = _openai()
        chunk = openai.ChatCompletionChunk.model_validate(body)
        self.id = chunk.id or self.id
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            self.usage = chunk.usage
        deltas = []
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            content = choice.delta.content or ""
            if choice.delta.role:
                self.role = choice.delta.role
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            if content:
                now = self._clock()
                self.first_at = now if self.first_at is None else self.first_at
                self.last_at = now
                self.pieces += 1
                self.parts.append(content)
            if content or choice.delta.role or choice.finish_reason:
                deltas.append(
                    openai.ChatDelta(
                        content=content,
                        role=choice.delta.role,
                        finish_reason=choice.finish_reason,
                    )
                )
        return deltas

    def result(self, *, stopped: bool = False) -> ChatResult:
        """The :class:`ChatResult` of the stream as read so far."""
        tokens = self.usage.completion_tokens if self.usage is not None else self.pieces
        rate = None
        if self.first_at is not None and self.last_at is not None:
            span = self.last_at - self.first_at
            if span > 0 and tokens > 1:
                rate = (tokens - 1) / span
        return _openai().ChatResult(
            text="".join(self.parts),
            role=self.role,
            finish_reason=self.finish_reason,
            usage=self.usage,
            model=self.model,
            id=self.id,
            job_id=self.job_id,
            time_to_first_token_s=None if self.first_at is None else self.first_at - self.started,
            tokens_per_s=rate,
            duration_s=self._clock() - self.started,
            pieces=self.pieces,
            stopped=stopped,
        )

    def completion_result(self, completion: ChatCompletion) -> ChatResult:
        """The :class:`ChatResult` of a non-streamed answer."""
        elapsed = self._clock() - self.started
        if not _CHUNK_KEYS & completion.model_fields_set.union(completion.model_extra or {}):
            raise not_openai(self.url, completion.model_extra or {})
        choice = next((c for c in completion.choices if c.index == 0), None)
        content = choice.message.content if choice is not None else None
        text = content if isinstance(content, str) else ""
        usage = completion.usage
        tokens = usage.completion_tokens if usage is not None else (1 if text else 0)
        return _openai().ChatResult(
            text=text,
            role=choice.message.role if choice is not None else "assistant",
            finish_reason=choice.finish_reason if choice is not None else None,
            usage=usage,
            model=completion.model,
            id=completion.id,
            job_id=self.job_id,
            time_to_first_token_s=elapsed,
            tokens_per_s=tokens / elapsed if elapsed > 0 and tokens else None,
            duration_s=elapsed,
            pieces=1 if text else 0,
        )


def _is_event_stream(response: httpx.Response) -> bool:
    return response.headers.get("Content-Type", "").startswith("text/event-stream")


class _ChatReader:
    """What both stream faces share: the call, the tally, and what an answer means. The
    request goes through the client's ``stream`` (its retries, ``Retry-After`` and errors)."""

    def __init__(self, client: Client | AsyncClient, call: Call[Any]) -> None:
        self._client = client
        self._call = replace(call, headers={"Accept": STREAM_ACCEPT})
        self._tally = ChatTally(client.settings.queue_url + call.path)
        self._response: httpx.Response | None = None
        self._closed = False
        self.result: ChatResult | None = None

    @property
    def job_id(self) -> str | None:
        """The job serving the request, once the answer's headers named it."""
        return self._tally.job_id

    @property
    def text(self) -> str:
        """The reply so far."""
        return "".join(self._tally.parts)

    def _started(self, response: httpx.Response) -> bool:
        """Take the answer's headers; True when it is an event stream (else read it whole)."""
        self._response = response
        self._tally.take_response(response)
        return _is_event_stream(response)

    def _refused(self, error: APIError) -> None:
        """An error answer: note the job it names (the local emulator's ``x-request-id``)."""
        self._tally.job_id = error.headers.get(JOB_ID_HEADER) or self._tally.job_id

    def _whole(self, response: httpx.Response) -> list[ChatDelta]:
        """The deltas of an answer read whole."""
        self.result = self._tally.completion_result(call_result(self._call, response))
        return _whole_reply(self.result)

    def partial(self) -> ChatResult:
        """The :class:`ChatResult` as read so far (the final one once the reply ended)."""
        return self.result if self.result is not None else self._tally.result()

    def _ended(self) -> None:
        self.result = self._tally.result(stopped=self._closed)

    def _released(self) -> None:
        self._response = None
        if self.result is None:
            self.result = self._tally.result(stopped=True)


class ChatStream(_ChatReader):
    """A streamed reply (sync iterator of :class:`~podbook.api.openai.ChatDelta`); see the
    module docstring. ``result`` is set once the reply has ended or the stream was closed."""

    _client: Client

    def __init__(self, client: Client, call: Call[Any]) -> None:
        super().__init__(client, call)
        self._deltas = self._run()

    def __iter__(self) -> Iterator[ChatDelta]:
        return self

    def __next__(self) -> ChatDelta:
        return next(self._deltas)

    def _run(self) -> Iterator[ChatDelta]:
        tally = self._tally
        tally.restart()
        try:
            with self._client.stream(self._call, on_retry=tally.restart) as response:
                if not self._started(response):
                    response.read()
                    yield from self._whole(response)
                    return
                for line in response.iter_lines():
                    yield from tally.take_line(line)
                    if tally.ended:
                        break
                yield from tally.finish_stream()
                self._ended()
        except APIError as error:
            self._refused(error)
            raise
        except ConnectionFailed:
            if not self._closed:  # else: the end of a stream closed by us
                raise
        finally:
            self._released()

    def read(self) -> ChatResult:
        """Read the rest of the reply; returns the :class:`ChatResult`."""
        for _ in self:
            pass
        assert self.result is not None
        return self.result

    def close(self) -> None:
        """Stop reading and close the HTTP stream (the service then cancels the job). Safe
        from another thread: the iterator ends at its next read."""
        self._closed = True
        response = self._response
        if response is not None:
            with contextlib.suppress(Exception):
                response.close()
        with contextlib.suppress(ValueError):  # "generator already executing": another thread
            self._deltas.close()
        self._released()

    def __enter__(self) -> ChatStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncChatStream(_ChatReader):
    """The async twin of :class:`ChatStream`: ``async for delta in endpoint.chat(...)``;
    ``await stream.aclose()`` (or leaving ``async with``) closes the HTTP stream."""

    _client: AsyncClient

    def __init__(self, client: AsyncClient, call: Call[Any]) -> None:
        super().__init__(client, call)
        self._deltas = self._run()

    def __aiter__(self) -> AsyncIterator[ChatDelta]:
        return self

    async def __anext__(self) -> ChatDelta:
        return await self._deltas.__anext__()

    async def _run(self) -> AsyncIterator[ChatDelta]:
        tally = self._tally
        tally.restart()
        try:
            async with self._client.stream(self._call, on_retry=tally.restart) as response:
                if not self._started(response):
                    await response.aread()
                    for delta in self._whole(response):
                        yield delta
                    return
                async for line in response.aiter_lines():
                    for delta in tally.take_line(line):
                        yield delta
                    if tally.ended:
                        break
                for delta in tally.finish_stream():
                    yield delta
                self._ended()
        except APIError as error:
            self._refused(error)
            raise
        except ConnectionFailed:
            if not self._closed:
                raise
        finally:
            self._released()

    async def read(self) -> ChatResult:
        """Read the rest of the reply; returns the :class:`ChatResult`."""
        async for _ in self:
            pass
        assert self.result is not None
        return self.result

    async def aclose(self) -> None:
        """Stop reading and close the HTTP stream (the service then cancels the job)."""
        self._closed = True
        response = self._response
        if response is not None:
            with contextlib.suppress(Exception):
                await response.aclose()
        with contextlib.suppress(RuntimeError):  # "already running": another task reads it
            await self._deltas.aclose()
        self._released()

    async def __aenter__(self) -> AsyncChatStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _whole_reply(result: ChatResult) -> list[ChatDelta]:
    """A non-streamed answer as one delta (a server that answered JSON to a stream request)."""
    return [
        _openai().ChatDelta(
            content=result.text, role=result.role, finish_reason=result.finish_reason
        )
    ]


def _base_url(client: Client | AsyncClient, path_id: str) -> str:
    return f"{client.settings.queue_url}/v2/{path_id}{_openai().OPENAI_PREFIX}"


StreamT = TypeVar("StreamT", "ChatStream", "AsyncChatStream")
ResultT = TypeVar("ResultT")


class _EndpointChat(Generic[StreamT, ResultT]):
    """The OpenAI-compatible face of an endpoint client, sync or async by its stream type."""

    _client: Any
    _path_id: str
    _stream: type[StreamT]

    @property
    def openai_base_url(self) -> str:
        """The ``base_url`` for the ``openai`` package (or any OpenAI client):
        ``{queue_url}/v2/{endpoint_id}/openai/v1``, the same form locally and on the real
        service; use it with the service's API key."""
        return _base_url(self._client, self._path_id)

    @overload
    def chat(
        self,
        messages: Any,
        *,
        stream: Literal[True] = True,
        model: str | None = None,
        timeout: float | None = None,
        **params: Any,
    ) -> StreamT: ...

    @overload
    def chat(
        self,
        messages: Any,
        *,
        stream: Literal[False],
        model: str | None = None,
        timeout: float | None = None,
        **params: Any,
    ) -> ResultT: ...

    def chat(
        self,
        messages: Any,
        *,
        stream: bool = True,
        model: str | None = None,
        timeout: float | None = None,
        **params: Any,
    ) -> StreamT | ResultT:
        """Send a chat request through the endpoint's OpenAI-compatible route.

        ``messages``: ``[{"role": "user", "content": "Hi"}, ...]`` (or
        :class:`~podbook.api.openai.ChatMessage` s; a plain string is one user message).
        ``params`` go into the request body (``temperature=0.2``, ``max_tokens=200``, ...);
        ``model`` is left out when None (the worker's own model). ``timeout``: seconds to wait
        for the next bytes (default 600). Streamed: returns a :class:`ChatStream` (iterate it;
        ``.result`` at the end; async: ``async for delta in endpoint.chat(...)``). Not
        streamed: returns the :class:`~podbook.api.openai.ChatResult` (async:
        ``result = await endpoint.chat(..., stream=False)``).
        """
        call = chat_call(
            self._path_id, messages, stream=stream, model=model, params=params, timeout=timeout
        )
        chat = self._stream(self._client, call)
        return chat if stream else chat.read()  # type: ignore[return-value]


class EndpointChat(_EndpointChat[ChatStream, "ChatResult"]):
    """The OpenAI-compatible face of :class:`~podbook.client.resources.queue.EndpointClient`."""

    _stream = ChatStream


class AsyncEndpointChat(_EndpointChat[AsyncChatStream, Awaitable["ChatResult"]]):
    """The OpenAI-compatible face of
    :class:`~podbook.client.resources.queue.AsyncEndpointClient`."""

    _stream = AsyncChatStream
