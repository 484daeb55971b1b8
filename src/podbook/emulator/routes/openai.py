"""The OpenAI-compatible route of queue endpoints: ``/v2/{endpoint_id}/openai/{path}``.

``POST .../openai/v1/chat/completions``, ``POST .../openai/v1/completions`` and
``GET .../openai/v1/models`` (and any other path under ``/openai``: the worker answers it,
vLLM's with "Invalid route") each become an ordinary job on the endpoint's queue, with
``input = {"openai_route": "/v1/...", "openai_input": <the body as sent>}`` (no
``openai_input`` for a GET), as the service's vLLM worker expects. The job is visible like any
other (``/status``, ``/health``, ``/requests``, billing); the answer's ``x-request-id`` header
is its id (an emulator extension).

- ``"stream": true``: ``text/event-stream``; every item the handler yields is written the
  moment its chunk reaches the broker (the chunk wake-up of ``/stream``, read with a cursor;
  nothing is batched here), then ``data: [DONE]`` unless the handler sent it. The headers go
  out with the first chunk, so a handler that answers an error first gets an HTTP error.
- otherwise the first yielded (or the returned) object is the JSON body.
- errors are OpenAI-shaped ``{"error": {"message", "type", "param", "code"}}``; one that comes
  from the job's outcome (handler error, failure, cancel, time-out) carries
  ``x-should-retry: false``, so OpenAI clients do not run the job again on their own.
- a client that disconnects before the answer is complete cancels the job, as ``/cancel``
  does (its worker is told to stop).

Rate limit ``openai`` (2000 per 10 s, 400 concurrent): a request counts as concurrent until
its answer ends, a stream for as long as it streams.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import Receive, Scope, Send

from podbook.emulator.broker.core import Broker
from podbook.emulator.broker.errors import QueueRefusal
from podbook.emulator.broker.jobs import CANCELLED, COMPLETED, FAILED, Job
from podbook.emulator.openai_format import (
    DONE,
    error_body,
    handler_error,
    job_failure,
    response_body,
    sse_bytes,
)
from podbook.emulator.routes.convertors import KNOWN_OPENAI_ROUTES
from podbook.emulator.routes.queue import QueueRequest, queue_route
from podbook.emulator.tasks import cancel_and_wait

log = logging.getLogger("podbook.emulator.openai")

OPERATION = "openai"
"""The rate-limit operation of every ``/openai/...`` request."""
HOLD_SECONDS = 30.0
"""One long wait on the job's chunks or end (the answer waits as many times as it takes)."""
_OUTCOME_HEADERS = {"x-should-retry": "false"}


def _json(status: int, body: Any, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
    return status, orjson.dumps(body), {**headers, "content-type": "application/json"}


def openai_error_response(status: int, message: str, headers: Mapping[str, str]) -> Response:
    """An error of the request (auth, unknown endpoint, 429, bad body) in OpenAI's shape."""
    return Response(
        orjson.dumps(error_body(message, status)),
        status_code=status,
        headers=dict(headers),
        media_type="application/json",
    )


def _outcome_error(job: Job) -> tuple[int, dict[str, Any]]:
    """The error answer of a job that ended other than COMPLETED."""
    if job.status == FAILED:
        return job_failure(job.error)
    if job.status == CANCELLED:
        message = f"job {job.id} was cancelled before it answered"
        return 409, error_body(message, 409, type_="cancelled", code="job_cancelled")
    message = f"job {job.id} ran past the endpoint's executionTimeout"
    return 504, error_body(message, 504, type_="timeout", code="job_timed_out")


async def _disconnected(receive: Receive) -> None:
    """Return when the client has gone."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


class JobAnswer(Response):
    """The answer to one ``/openai`` request: its job's output, streamed or whole.

    While it is being answered it watches the connection: a client that leaves before the
    answer is complete cancels the job. Its end releases the request's concurrency count.
    """

    def __init__(
        self, broker: Broker, job: Job, *, stream: bool, release: Callable[[], None]
    ) -> None:
        super().__init__(status_code=200)
        self.broker = broker
        self.job = job
        self.stream = stream
        self._release = release
        self._complete = False
        self._headers = {"x-request-id": job.id}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        serving = asyncio.ensure_future(self._serve(send))
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({serving, gone}, return_when=asyncio.FIRST_COMPLETED)
            if serving.done():
                serving.result()
        finally:
            gone.cancel()
            if not serving.done():
                await cancel_and_wait(serving)
            self._end()

    def _end(self) -> None:
        job = self.job
        if not self._complete and not job.terminal and job.id in self.broker.jobs:
            log.info("job %s: the client left before the answer was complete; cancelled", job.id)
            self.broker.cancel(job)
        self._release()

    async def _serve(self, send: Send) -> None:
        if self.stream:
            await self._serve_stream(send)
        else:
            await self._send_whole(send, *await self._whole_answer())

    async def _send_whole(
        self, send: Send, status: int, body: bytes, headers: dict[str, str]
    ) -> None:
        raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        raw.append((b"content-length", str(len(body)).encode()))
        self._complete = True
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    def _error(
        self, status: int, body: dict[str, Any], *, outcome: bool = True
    ) -> tuple[int, bytes, dict[str, str]]:
        headers = {**self._headers, **(_OUTCOME_HEADERS if outcome else {})}
        return _json(status, body, headers)

    def _expired(self) -> tuple[int, bytes, dict[str, str]]:
        message = f"job {self.job.id} expired (TTL) before it answered"
        return self._error(504, error_body(message, 504, type_="timeout", code="job_expired"))

    async def _whole_answer(self) -> tuple[int, bytes, dict[str, str]]:
        """Hold until the job ends; its body or its error."""
        job = self.job
        while not job.terminal:
            if job.id not in self.broker.jobs:
                return self._expired()
            await self.broker.wait_done(job, HOLD_SECONDS)
        if job.status != COMPLETED:
            return self._error(*_outcome_error(job))
        chunks = [item["output"] for item in job.chunks] if job.chunk_base == 0 else None
        body = response_body(chunks, job.output if job.has_output() else None, job.has_output())
        failure = handler_error(body)
        if failure is not None:
            return self._error(*failure)
        return _json(200, body, self._headers)

    async def _serve_stream(self, send: Send) -> None:
        """Write each chunk as it reaches the broker; the headers go with the first one."""
        job = self.job
        cursor = 0
        started = False
        while True:
            try:
                page = await self.broker.drain_stream(job, HOLD_SECONDS, cursor)
            except QueueRefusal:  # deleted (TTL) while we waited
                if not started:
                    await self._send_whole(send, *self._expired())
                    return
                await self._finish(send, self._expired_event())
                return
            outputs = [item["output"] for item in page["stream"]]
            cursor = page["next"]
            if not started:
                if not outputs and not job.terminal:
                    continue
                first = outputs[0] if outputs else None
                early = self._early_answer(first)
                if early is not None:
                    await self._send_whole(send, *early)
                    return
                if not outputs and job.has_output():
                    outputs = [job.output]
                await self._start_stream(send)
                started = True
            data, done = self._encode(outputs)
            if done:
                await self._finish(send, data)
                return
            if data:
                await send({"type": "http.response.body", "body": data, "more_body": True})
            elif job.terminal:
                await self._finish(send, self._closing_event())
                return

    def _early_answer(self, first: Any) -> tuple[int, bytes, dict[str, str]] | None:
        """An error answered in place of the stream: the handler's first item was an error
        object, or the job ended without one chunk and not COMPLETED."""
        if first is not None:
            failure = handler_error(first)
            return self._error(*failure) if failure is not None else None
        if self.job.status != COMPLETED:
            return self._error(*_outcome_error(self.job))
        if self.job.has_output() and (failure := handler_error(self.job.output)):
            return self._error(*failure)
        return None

    @staticmethod
    def _encode(outputs: list[Any]) -> tuple[bytes, bool]:
        parts = [sse_bytes(output) for output in outputs]
        return b"".join(data for data, _ in parts), any(done for _, done in parts)

    def _closing_event(self) -> bytes:
        """What ends a stream whose job ended without ``[DONE]``."""
        if self.job.status == COMPLETED:
            return DONE
        _, body = _outcome_error(self.job)
        return b"data: " + orjson.dumps(body) + b"\n\n"

    def _expired_event(self) -> bytes:
        message = f"job {self.job.id} expired (TTL) before it ended"
        return b"data: " + orjson.dumps(error_body(message, 504, type_="timeout")) + b"\n\n"

    async def _start_stream(self, send: Send) -> None:
        headers = {
            **self._headers,
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "x-accel-buffering": "no",
        }
        raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": 200, "headers": raw})

    async def _finish(self, send: Send, last: bytes) -> None:
        self._complete = True
        await send({"type": "http.response.body", "body": last, "more_body": False})


def _request_body(raw: bytes) -> dict[str, Any]:
    """The JSON object a POST carries, or a 400."""
    if not raw.strip():
        raise QueueRefusal(400, "the request body is empty; send a JSON object")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise QueueRefusal(400, f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise QueueRefusal(400, "the request body must be a JSON object")
    return body


async def openai_request(req: QueueRequest) -> Response:
    """Any ``/openai/...`` request: a job with ``openai_route`` (and ``openai_input``)."""
    prefix = f"/v2/{req.queue.endpoint_id}/openai"
    route = req.request.url.path.removeprefix(prefix) or "/"
    job_input: dict[str, Any] = {"openai_route": route}
    body: dict[str, Any] | None = None
    if req.request.method == "POST":
        body = _request_body(await req.request.body())
        job_input["openai_input"] = body
    job = req.service.broker.submit(req.queue, {"input": job_input}, "run")
    stream = body is not None and body.get("stream") is True
    return JobAnswer(req.service.broker, job, stream=stream, release=req.hold_concurrency())


def routes() -> list[BaseRoute]:
    """The OpenAI-compatible routes: the known ones with their method, and any other path
    under ``/openai/`` (GET or POST; the worker answers it)."""
    base = "/v2/{endpoint_id:endpoint}/openai/"
    paths = [(base + path, [method]) for path, method in KNOWN_OPENAI_ROUTES.items()]
    paths.append((base + "{path:openai_other}", ["GET", "POST"]))
    return [
        queue_route(
            path, openai_request, methods, OPERATION, write=True, render_error=openai_error_response
        )
        for path, methods in paths
    ]
