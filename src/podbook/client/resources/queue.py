"""Queue endpoints: ``client.endpoint(ID)`` — run, runsync, status (plain, or held open
until the job ends), stream, cancel, retry, purge-queue, health and the recent requests of one
serverless endpoint, and chat through its OpenAI-compatible route
(:mod:`~podbook.client.resources.chat`: ``chat()``, ``openai_base_url``), and the base URL
of a load-balancing endpoint (``lb_url``).

Requests are checked before they are sent, with the limits of :mod:`podbook.api.queue`
(payload size on the encoded JSON, ``wait``, ``ttl``, ``executionTimeout``); a request the
service would refuse raises :class:`~podbook.errors.InvalidRequest` and nothing is sent.
Queue error bodies (``{"error": ...}``) become the same typed exceptions as REST errors.
Retries follow the client's :class:`~podbook.client._core.RetryPolicy`: a 429 is retried
after ``Retry-After`` (or an exponential backoff); a POST whose fate is unknown (``/run``,
``/runsync``, ``/cancel``, ...) is never resent. A stream read that failed is asked again
from where it stopped when the server offers the resumable cursor
(:mod:`~podbook.client.resources.streamcursor`). A held status read
(``status(job_id, wait=ms)``, the service's ``/status-sync``) against a service without that
route is done by polling ``/status``; the client remembers that service lacks it.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from podbook.client._core import BodyParser, Call, invalid_request_from
from podbook.client.jobs import AsyncJob, Job, StatusPoll
from podbook.client.resources.base import list_parser, model_parser, path_id, wire_keys
from podbook.client.resources.chat import AsyncEndpointChat, EndpointChat
from podbook.client.resources.streamcursor import StreamReader
from podbook.errors import InvalidRequest, NotFound, PodbookError

if TYPE_CHECKING:
    from podbook.api.queue import (
        HealthResponse,
        JobPolicy,
        JobRecord,
        PurgeResponse,
        QueueOperation,
        RequestRecord,
        S3Config,
        StreamChunk,
        StreamResponse,
    )
    from podbook.client._async import AsyncClient
    from podbook.client._sync import Client

__all__ = ["AsyncEndpointClient", "EndpointClient", "queue_calls", "submission_body"]

T = TypeVar("T")

RUNSYNC_TIMEOUT_MARGIN = 15.0
"""Seconds a ``/runsync`` or ``/status-sync`` request may take beyond its ``wait`` before
the client gives up."""
STREAM_TIMEOUT_MARGIN = 15.0
"""Seconds a ``/stream`` long-poll may take beyond its hold before the client gives up."""


def _queue():
    from podbook.api import queue

    return queue


def _refused(check: Callable[..., T], *args: Any) -> T:
    """``check(*args)``, with the contract's ``RequestRejected`` raised as ``InvalidRequest``."""
    from podbook.api.validation import RequestRejected

    try:
        return check(*args)
    except RequestRejected as exc:
        raise invalid_request_from(exc) from None


def _policy_wire(policy: JobPolicy | Mapping[str, Any]) -> Any:
    from pydantic import BaseModel

    from podbook.api.base import to_wire

    if isinstance(policy, BaseModel):
        return to_wire(policy)
    if isinstance(policy, Mapping):
        return wire_keys(dict(policy))
    return policy  # refused by the schema with a clear line


def submission_body(
    operation: QueueOperation,
    input: Mapping[str, Any],
    *,
    webhook: str | None = None,
    policy: JobPolicy | Mapping[str, Any] | None = None,
    s3_config: S3Config | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The wire body of a ``/run`` or ``/runsync`` submission, checked against the contract.

    ``input`` is sent exactly as given (its keys are the handler's, never renamed);
    ``policy`` and ``s3_config`` may use snake_case or camelCase keys. Raises
    :class:`InvalidRequest` (nothing sent) for a body the service would refuse: too large
    once encoded (10 MB ``/run``, 20 MB ``/runsync``), ``ttl``/``executionTimeout`` out of
    range, unknown properties, ``input`` not an object.
    """
    queue = _queue()
    body: dict[str, Any] = {"input": dict(input) if isinstance(input, Mapping) else input}
    if webhook is not None:
        body["webhook"] = webhook
    if policy is not None:
        body["policy"] = _policy_wire(policy)
    if s3_config is not None:
        body["s3Config"] = _policy_wire(s3_config)
    _refused(queue.validate_submission, body, operation)
    return body


def _queue_call(method: str, path: str, parse: BodyParser[T]) -> Call[T]:
    """A call on the queue base with no query and no body."""
    return Call(method, path, base="queue", parse=parse)


def _job_action(endpoint_id: str, action: str, job_id: Any) -> Call[JobRecord]:
    """``POST /v2/{endpoint}/{action}/{job}``, answered by the job's record."""
    path = f"/v2/{endpoint_id}/{action}/{path_id(job_id, 'job id')}"
    return _queue_call("POST", path, model_parser(_queue().JobRecord))


class queue_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the queue calls of one endpoint (no I/O)."""

    @staticmethod
    def run(endpoint_id: str, body: dict[str, Any]) -> Call[JobRecord]:
        """``POST /v2/{endpoint}/run`` with a checked submission body."""
        return Call(
            "POST",
            f"/v2/{endpoint_id}/run",
            base="queue",
            json=body,
            parse=model_parser(_queue().JobRecord),
        )

    @staticmethod
    def runsync(endpoint_id: str, body: dict[str, Any], wait: int | None) -> Call[JobRecord]:
        """``POST /v2/{endpoint}/runsync?wait=`` (the read timeout covers the wait)."""
        queue = _queue()
        params = None
        hold_ms = queue.WAIT_DEFAULT_MS
        if wait is not None:
            hold_ms = _refused(queue.check_wait, wait)
            params = {"wait": str(hold_ms)}
        return Call(
            "POST",
            f"/v2/{endpoint_id}/runsync",
            base="queue",
            params=params,
            json=body,
            parse=model_parser(queue.JobRecord),
            timeout=hold_ms / 1000 + RUNSYNC_TIMEOUT_MARGIN,
        )

    @staticmethod
    def status(endpoint_id: str, job_id: Any, ttl: int | None = None) -> Call[JobRecord]:
        """``GET /v2/{endpoint}/status/{job}`` (``?ttl=`` sets the job's time to live)."""
        queue = _queue()
        params = None if ttl is None else {"ttl": str(_refused(queue.check_ttl, ttl))}
        return Call(
            "GET",
            f"/v2/{endpoint_id}/status/{path_id(job_id, 'job id')}",
            base="queue",
            params=params,
            parse=model_parser(queue.JobRecord),
        )

    @staticmethod
    def status_sync(endpoint_id: str, job_id: Any, wait: int) -> Call[JobRecord]:
        """``GET /v2/{endpoint}/status-sync/{job}?wait=``: the job's record once it has
        ended, or when ``wait`` ms (1000..300000) have passed (the read timeout covers it)."""
        queue = _queue()
        hold_ms = _refused(queue.check_wait, wait)
        return Call(
            "GET",
            f"/v2/{endpoint_id}/status-sync/{path_id(job_id, 'job id')}",
            base="queue",
            params={"wait": str(hold_ms)},
            parse=model_parser(queue.JobRecord),
            timeout=hold_ms / 1000 + RUNSYNC_TIMEOUT_MARGIN,
        )

    @staticmethod
    def stream(
        endpoint_id: str, job_id: Any, wait: int | None = None, cursor: int | None = None
    ) -> Call[StreamResponse]:
        """``GET /v2/{endpoint}/stream/{job}``: drains the chunks buffered since the last call;
        with ``cursor`` (``?cursor=N``, an extension) a server that offers it answers the
        chunks from index N on instead, and drains nothing.

        The service holds the request while there is nothing to say (about 10 s, or
        ``wait`` ms); the read timeout covers that hold. The call is never resent by the
        client's retry policy (a draining read is not idempotent): the stream reader of
        ``stream_batches`` decides.
        """
        queue = _queue()
        params: dict[str, str] = {}
        hold_ms = queue.STREAM_WAIT_DEFAULT_MS
        if wait is not None:
            hold_ms = _refused(queue.check_wait, wait)
            params["wait"] = str(hold_ms)
        if cursor is not None:
            params["cursor"] = str(cursor)
        return Call(
            "GET",
            f"/v2/{endpoint_id}/stream/{path_id(job_id, 'job id')}",
            base="queue",
            params=params or None,
            parse=model_parser(queue.StreamResponse),
            timeout=hold_ms / 1000 + STREAM_TIMEOUT_MARGIN,
            resendable=False,
        )

    @staticmethod
    def cancel(endpoint_id: str, job_id: Any) -> Call[JobRecord]:
        """``POST /v2/{endpoint}/cancel/{job}``."""
        return _job_action(endpoint_id, "cancel", job_id)

    @staticmethod
    def retry(endpoint_id: str, job_id: Any) -> Call[JobRecord]:
        """``POST /v2/{endpoint}/retry/{job}`` (FAILED or TIMED_OUT jobs, before expiry)."""
        return _job_action(endpoint_id, "retry", job_id)

    @staticmethod
    def purge_queue(endpoint_id: str) -> Call[PurgeResponse]:
        """``POST /v2/{endpoint}/purge-queue`` (queued jobs only)."""
        return _queue_call(
            "POST", f"/v2/{endpoint_id}/purge-queue", model_parser(_queue().PurgeResponse)
        )

    @staticmethod
    def health(endpoint_id: str) -> Call[HealthResponse]:
        """``GET /v2/{endpoint}/health``."""
        return _queue_call(
            "GET", f"/v2/{endpoint_id}/health", model_parser(_queue().HealthResponse)
        )

    @staticmethod
    def requests(endpoint_id: str) -> Call[list[RequestRecord]]:
        """``GET /v2/{endpoint}/requests``: the endpoint's recent requests, newest first."""
        return _queue_call(
            "GET", f"/v2/{endpoint_id}/requests", list_parser(_queue().RequestRecord, "requests")
        )


def _chunks(batch: StreamResponse) -> list[StreamChunk]:
    return list(batch.stream)


def _stream_reader(
    endpoint: EndpointClient | AsyncEndpointClient, job_id: Any, wait: int | None, cursor: int
) -> StreamReader:
    """The reader of one stream of ``endpoint`` (its calls, the client's retry policy)."""
    client = endpoint._client
    path_id(job_id, "job id")
    if isinstance(cursor, bool) or not isinstance(cursor, int) or cursor < 0:
        raise InvalidRequest(f"cursor must be a non-negative integer, not {cursor!r}", status=400)
    call = queue_calls.stream(endpoint._path_id, job_id, wait)  # checks wait before anything
    return StreamReader(
        endpoint.id,
        str(job_id).strip(),
        lambda at: queue_calls.stream(endpoint._path_id, job_id, wait, at),
        client.retry,
        client.settings.queue_url + call.path,
        received=cursor,
    )


_without_status_sync: weakref.WeakSet[Any] = weakref.WeakSet()
"""Clients whose service answered 404 to ``/status-sync`` for a job ``/status`` knows."""


def _held_status_call(
    endpoint: EndpointClient | AsyncEndpointClient, job_id: Any, ttl: int | None, wait: int
) -> Call[JobRecord] | None:
    """The ``/status-sync`` call of ``status(job_id, wait=...)`` (``wait`` checked first), or
    None when this client's service lacks it (poll ``/status`` then)."""
    if ttl is not None:
        raise InvalidRequest(
            "give status() ttl or wait, not both: set the time to live with "
            "status(job_id, ttl=...) first",
            status=400,
        )
    call = queue_calls.status_sync(endpoint._path_id, job_id, wait)
    return None if endpoint._client in _without_status_sync else call


class _EndpointBase:
    _client: Client | AsyncClient

    def __init__(self, endpoint_id: Any) -> None:
        self._path_id = path_id(endpoint_id, "endpoint id")
        self.id: str = getattr(endpoint_id, "id", endpoint_id).strip()

    @property
    def lb_url(self) -> str:
        """Where a load-balancing endpoint takes requests: ``{lb_url}/{path}`` reaches the
        worker's own route ``/{path}`` (send the API key as ``Bearer``). The service's form,
        ``https://{endpoint_id}.api.runpod.ai``, against the real service; the emulator's
        path form, ``{emulator_url}/lb/{endpoint_id}``, locally. Nothing is sent."""
        from podbook.api.endpoints import load_balancer_url

        return load_balancer_url(self._client.settings.queue_url, self._path_id)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id!r}>"


class EndpointClient(EndpointChat, _EndpointBase):
    """One queue endpoint of a :class:`~podbook.client.Client`: ``client.endpoint("echo")``."""

    def __init__(self, client: Client, endpoint_id: str) -> None:
        super().__init__(endpoint_id)
        self._client = client

    def job(self, job_id: str) -> Job:
        """A :class:`Job` handle for a job submitted earlier (nothing is sent)."""
        path_id(job_id, "job id")
        return Job(self, job_id)

    def run(
        self,
        input: Mapping[str, Any],
        *,
        webhook: str | None = None,
        policy: JobPolicy | Mapping[str, Any] | None = None,
        s3_config: S3Config | Mapping[str, Any] | None = None,
    ) -> Job:
        """Submit a job (``POST /run``) and return its :class:`Job` handle (IN_QUEUE).

        ``policy``: ``{"execution_timeout": ms, "ttl": ms, "low_priority": bool}``
        (camelCase keys too). Never resent: if the answer is lost, the job may or may not
        exist, and a :class:`~podbook.errors.ConnectionFailed` says so.
        """
        body = submission_body("run", input, webhook=webhook, policy=policy, s3_config=s3_config)
        record = self._client.request(queue_calls.run(self._path_id, body))
        return Job(self, record.id, record)

    def runsync(
        self,
        input: Mapping[str, Any],
        *,
        wait: int | None = None,
        timeout: float | None = None,
        webhook: str | None = None,
        policy: JobPolicy | Mapping[str, Any] | None = None,
        s3_config: S3Config | Mapping[str, Any] | None = None,
    ) -> Job:
        """Run a job and wait for it (``POST /runsync?wait=ms``); returns its finished :class:`Job`.

        When the job does not finish within ``wait`` (1000..300000 ms, default 90000), the
        service answers with its id and a running status, and this goes on with held status
        reads (``/status-sync``, or ``/status`` polls where the service lacks it) until the
        job ends — or until ``timeout`` seconds have passed in all
        (:class:`~podbook.errors.WaitTimeout`; the job keeps running). The returned job's
        :meth:`Job.output` gives the result or raises ``JobFailed``/``JobTimedOut``/...
        """
        body = submission_body(
            "runsync", input, webhook=webhook, policy=policy, s3_config=s3_config
        )
        watch_start = _monotonic()
        record = self._client.request(queue_calls.runsync(self._path_id, body, wait))
        job = Job(self, record.id, record)
        if not record.is_terminal:
            remaining = (
                None if timeout is None else max(0.0, timeout - (_monotonic() - watch_start))
            )
            job.wait(timeout=remaining)
        return job

    def status(self, job_id: Any, *, ttl: int | None = None, wait: int | None = None) -> JobRecord:
        """The job's record (``GET /status``); ``ttl`` (ms, 10 s..7 d) sets its time to live.

        ``wait`` (ms, 1000..300000) holds the read open until the job has ended or that long
        has passed, then answers the record as it is (``GET /status-sync``, as the service's
        JS SDK reads it): the end is seen at once, with one request. A service without that
        route (404 while ``/status`` knows the job) is polled through ``/status`` instead.
        """
        if wait is None:
            return self._client.request(queue_calls.status(self._path_id, job_id, ttl))
        call = _held_status_call(self, job_id, ttl, wait)
        if call is not None:
            try:
                return self._client.request(call)
            except NotFound:
                record = self.status(job_id)  # NotFound again: the job is gone
                _without_status_sync.add(self._client)
        else:
            record = self.status(job_id)
        poll = StatusPoll(wait)
        while (pause := poll.pause(record)) is not None:
            time.sleep(pause)
            record = self.status(job_id)
        return record

    def stream_batches(
        self, job_id: Any, *, wait: int | None = None, cursor: int = 0
    ) -> Iterator[StreamResponse]:
        """Every ``/stream`` answer (status plus the new chunks), until the job has ended
        and nothing is left; each call long-polls, so a chunk arrives as soon as it exists.

        Dropped connections are ridden out with the resumable cursor when the server offers
        it (no chunk lost or repeated; ``cursor`` starts after that many chunks); see
        :mod:`podbook.client.resources.streamcursor` and
        :class:`~podbook.errors.StreamInterrupted`.
        """
        reader = _stream_reader(self, job_id, wait, cursor)
        while True:
            try:
                batch = self._client.request(reader.call())
            except PodbookError as error:
                time.sleep(reader.delay_after(error))
                continue
            items = reader.accept(batch)
            yield reader.answer(batch, items)
            if batch.is_terminal and not items:
                return

    def stream_chunks(
        self, job_id: Any, *, wait: int | None = None, cursor: int = 0
    ) -> Iterator[StreamChunk]:
        """The streamed chunks (``output`` and ``metrics``), in order, until the job ends."""
        for batch in self.stream_batches(job_id, wait=wait, cursor=cursor):
            yield from _chunks(batch)

    def stream(self, job_id: Any, *, wait: int | None = None, cursor: int = 0) -> Iterator[Any]:
        """The streamed outputs, in order; ends on every terminal status (CANCELLED too)."""
        for chunk in self.stream_chunks(job_id, wait=wait, cursor=cursor):
            yield chunk.output

    def cancel(self, job_id: Any) -> JobRecord:
        """Cancel a queued or running job (``POST /cancel``); answers at once (CANCELLED)."""
        return self._client.request(queue_calls.cancel(self._path_id, job_id))

    def retry(self, job_id: Any) -> JobRecord:
        """Queue a FAILED or TIMED_OUT job again: same id, original input (``POST /retry``)."""
        return self._client.request(queue_calls.retry(self._path_id, job_id))

    def purge_queue(self) -> PurgeResponse:
        """Remove every queued job (running jobs continue); ``.removed`` counts them."""
        return self._client.request(queue_calls.purge_queue(self._path_id))

    def health(self) -> HealthResponse:
        """Job and worker counts of the endpoint (``GET /health``)."""
        return self._client.request(queue_calls.health(self._path_id))

    def requests(self) -> list[RequestRecord]:
        """The endpoint's recent requests (jobs), newest first, with their status, timings and
        the OpenAI route they came through (``GET /requests``)."""
        return self._client.request(queue_calls.requests(self._path_id))


class AsyncEndpointClient(AsyncEndpointChat, _EndpointBase):
    """One queue endpoint of an :class:`~podbook.client.AsyncClient`; awaitable methods."""

    def __init__(self, client: AsyncClient, endpoint_id: str) -> None:
        super().__init__(endpoint_id)
        self._client = client

    def job(self, job_id: str) -> AsyncJob:
        """An :class:`AsyncJob` handle for a job submitted earlier (nothing is sent)."""
        path_id(job_id, "job id")
        return AsyncJob(self, job_id)

    async def run(
        self,
        input: Mapping[str, Any],
        *,
        webhook: str | None = None,
        policy: JobPolicy | Mapping[str, Any] | None = None,
        s3_config: S3Config | Mapping[str, Any] | None = None,
    ) -> AsyncJob:
        """Submit a job (``POST /run``); see :meth:`EndpointClient.run`."""
        body = submission_body("run", input, webhook=webhook, policy=policy, s3_config=s3_config)
        record = await self._client.request(queue_calls.run(self._path_id, body))
        return AsyncJob(self, record.id, record)

    async def runsync(
        self,
        input: Mapping[str, Any],
        *,
        wait: int | None = None,
        timeout: float | None = None,
        webhook: str | None = None,
        policy: JobPolicy | Mapping[str, Any] | None = None,
        s3_config: S3Config | Mapping[str, Any] | None = None,
    ) -> AsyncJob:
        """Run a job and wait for it; see :meth:`EndpointClient.runsync`."""
        body = submission_body(
            "runsync", input, webhook=webhook, policy=policy, s3_config=s3_config
        )
        watch_start = _monotonic()
        record = await self._client.request(queue_calls.runsync(self._path_id, body, wait))
        job = AsyncJob(self, record.id, record)
        if not record.is_terminal:
            remaining = (
                None if timeout is None else max(0.0, timeout - (_monotonic() - watch_start))
            )
            await job.wait(timeout=remaining)
        return job

    async def status(
        self, job_id: Any, *, ttl: int | None = None, wait: int | None = None
    ) -> JobRecord:
        """The job's record (``GET /status``), held open ``wait`` ms until the job ends
        (``/status-sync``); see :meth:`EndpointClient.status`."""
        if wait is None:
            return await self._client.request(queue_calls.status(self._path_id, job_id, ttl))
        call = _held_status_call(self, job_id, ttl, wait)
        if call is not None:
            try:
                return await self._client.request(call)
            except NotFound:
                record = await self.status(job_id)  # NotFound again: the job is gone
                _without_status_sync.add(self._client)
        else:
            record = await self.status(job_id)
        poll = StatusPoll(wait)
        while (pause := poll.pause(record)) is not None:
            import asyncio

            await asyncio.sleep(pause)
            record = await self.status(job_id)
        return record

    async def stream_batches(
        self, job_id: Any, *, wait: int | None = None, cursor: int = 0
    ) -> AsyncIterator[StreamResponse]:
        """Every ``/stream`` answer until the job has ended and nothing is left; see
        :meth:`EndpointClient.stream_batches` (dropped connections, the cursor)."""
        reader = _stream_reader(self, job_id, wait, cursor)
        while True:
            try:
                batch = await self._client.request(reader.call())
            except PodbookError as error:
                import asyncio

                await asyncio.sleep(reader.delay_after(error))
                continue
            items = reader.accept(batch)
            yield reader.answer(batch, items)
            if batch.is_terminal and not items:
                return

    async def stream_chunks(
        self, job_id: Any, *, wait: int | None = None, cursor: int = 0
    ) -> AsyncIterator[StreamChunk]:
        """The streamed chunks (``output`` and ``metrics``), in order, until the job ends."""
        async for batch in self.stream_batches(job_id, wait=wait, cursor=cursor):
            for chunk in _chunks(batch):
                yield chunk

    async def stream(
        self, job_id: Any, *, wait: int | None = None, cursor: int = 0
    ) -> AsyncIterator[Any]:
        """The streamed outputs, in order; ends on every terminal status (CANCELLED too)."""
        async for chunk in self.stream_chunks(job_id, wait=wait, cursor=cursor):
            yield chunk.output

    async def cancel(self, job_id: Any) -> JobRecord:
        """Cancel a queued or running job (``POST /cancel``)."""
        return await self._client.request(queue_calls.cancel(self._path_id, job_id))

    async def retry(self, job_id: Any) -> JobRecord:
        """Queue a FAILED or TIMED_OUT job again (``POST /retry``)."""
        return await self._client.request(queue_calls.retry(self._path_id, job_id))

    async def purge_queue(self) -> PurgeResponse:
        """Remove every queued job (``POST /purge-queue``)."""
        return await self._client.request(queue_calls.purge_queue(self._path_id))

    async def health(self) -> HealthResponse:
        """Job and worker counts of the endpoint (``GET /health``)."""
        return await self._client.request(queue_calls.health(self._path_id))

    async def requests(self) -> list[RequestRecord]:
        """The endpoint's recent requests, newest first (``GET /requests``)."""
        return await self._client.request(queue_calls.requests(self._path_id))


def _monotonic() -> float:
    import time

    return time.monotonic()
