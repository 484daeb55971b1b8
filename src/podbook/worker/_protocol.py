"""The worker side of the worker protocol, over httpx (no import of the emulator).

One :class:`WorkerChannel` per runner: job-take (single and batch) and job-stop long-polls,
result / progress / stream-chunk posts, and pings, as ``reference/queue-and-worker-protocol.md``
describes them. The worker key goes raw into ``Authorization`` (as the ``runpod`` SDK sends
it) and never into a log line or an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import ssl
import zlib
from collections.abc import Iterable
from typing import Any

import httpx

from podbook import __version__
from podbook.errors import PodbookError
from podbook.worker._config import WorkerConfig
from podbook.worker._contact import BrokerContact

__all__ = [
    "BrokerRefused",
    "BrokerUnavailable",
    "Throttled",
    "WorkerChannel",
    "encode_body",
]

logger = logging.getLogger("podbook.worker")

LONG_POLL_TIMEOUT = httpx.Timeout(120.0, connect=5.0)
"""Take and stop long-polls: the broker holds them for less than 90 s."""
POST_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
POST_RETRY_DELAYS = (0.1, 0.5, 1.0, 2.0, 2.0, 2.0, 5.0, 5.0, 5.0, 10.0, 10.0, 10.0, 10.0)
"""Pauses before the retries of a result post that met a 5xx or a dropped connection: about
a minute in all, so a result outlives a broker restart (a job whose result was lost would
run again elsewhere)."""
DEFAULT_THROTTLE_SECONDS = 5.0
POOL_SHARD_JOBS = 8
"""Jobs whose posts share one connection pool. httpcore's pool (1.0) scans all its
connections for each idle one on every request (work quadratic in its size) and checks each
connection's socket (a system call apiece): a worker running 300 streams through one pool spent
most of its CPU there (profiled with bench/stream.py), so posts are spread over
``concurrency / POOL_SHARD_JOBS`` pools, each job's always through the same one."""


class BrokerRefused(PodbookError):
    """The broker refused a call (bad worker key, unknown endpoint or job); ``status``."""

    def __init__(self, message: str, status: int = 400) -> None:
        self.status = status
        super().__init__(message)


class BrokerUnavailable(PodbookError):
    """The broker could not be reached or answered 5xx; worth trying again later."""


class Throttled(PodbookError):
    """The broker answered 429; ``retry_after`` seconds to wait."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(f"the broker is throttling this worker; retrying in {retry_after:g} s")


def encode_body(payload: Any) -> bytes:
    """JSON text of ``payload``; ``TypeError`` names the value that is not JSON."""
    return json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        for name in ("error", "detail", "title", "message"):
            if isinstance(body.get(name), str) and body[name].strip():
                return body[name].strip()
    text = " ".join(response.text.split())
    return text[:200] or response.reason_phrase


def refusal(status: int, text: str, what: str, retry_after: float = 0.0) -> PodbookError:
    """The error of a broker answer ``status`` (400 or more) to ``what``."""
    if status == 429:
        return Throttled(retry_after)
    if status in (401, 403):
        return BrokerRefused(
            f"{what}: {status} {text}; the worker key is wrong or belongs "
            "to another endpoint (get one with `podbook worker-env ENDPOINT`)",
            status,
        )
    if status >= 500:
        return BrokerUnavailable(f"{what}: {status} {text}")
    return BrokerRefused(f"{what}: {status} {text}", status)


def log_undelivered(job_id: str, what: str, exc: PodbookError) -> None:
    """Log a post the broker did not take. Its 409 says the job ended meanwhile (cancelled or
    timed out: the stop is on its way), which is no news for the user, so it is only info; a
    kernel serving the handler would otherwise print it into a notebook cell."""
    ended = isinstance(exc, BrokerRefused) and exc.status == 409
    logger.log(logging.INFO if ended else logging.WARNING, "job %s: %s: %s", job_id, what, exc)


def _ping_params(job_ids: Iterable[str]) -> dict[str, str]:
    return {"job_id": ",".join(job_ids), "runpod_version": f"podbook-{__version__}"}


class WorkerChannel:
    """HTTP calls of one worker to its broker.

    They do not go through :class:`~podbook.client.AsyncClient`, on purpose: they are the
    worker's hot path and speak another protocol than the client's. The URLs are the
    ``RUNPOD_WEBHOOK_*`` templates (absolute, any host; the client's calls name one of the
    service's three bases), the worker key goes raw into ``Authorization`` (the client sends
    the user's key as ``Bearer``), posts are spread over :data:`POOL_SHARD_JOBS`-job
    connection pools, a result is retried for about a minute (:data:`POST_RETRY_DELAYS`,
    5xx and dropped connections, a POST included) and each try tells :attr:`contact` whether
    the broker answered; a 429's ``Retry-After`` is read with the parser the client uses
    (:func:`~podbook.api.ratelimit.parse_retry_after`).
    """

    def __init__(
        self, config: WorkerConfig, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.config = config
        self.contact = BrokerContact()
        """Whether the broker answers, as this channel's calls find out."""
        self.stream_batches: bool | None = None
        """Whether the broker takes ``{"stream": [...]}`` posts (None: not known yet)."""
        shards = max(1, math.ceil(config.concurrency / POOL_SHARD_JOBS))
        keepalive = math.ceil(config.concurrency / shards) + 8
        tls = httpx.create_ssl_context() if shards > 1 else True  # one for all pools
        self._polls = self._client(config, transport, keepalive, tls)
        """Long-polls, pings (and the posts of the first share of jobs)."""
        self._posters = [self._polls] + [
            self._client(config, transport, keepalive, tls) for _ in range(shards - 1)
        ]

    @staticmethod
    def _client(
        config: WorkerConfig,
        transport: httpx.AsyncBaseTransport | None,
        keepalive: int,
        tls: ssl.SSLContext | bool,
    ) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            verify=tls,
            headers={
                "Authorization": config.worker_key,
                "User-Agent": f"podbook-worker/{__version__}",
            },
            timeout=POST_TIMEOUT,
            transport=transport,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=keepalive),
        )

    def _poster(self, job_id: str) -> httpx.AsyncClient:
        """The connection pool that carries ``job_id``'s posts (always the same one, so its
        posts stay in order)."""
        return self._posters[zlib.crc32(job_id.encode()) % len(self._posters)]

    async def aclose(self) -> None:
        """Close the connection pools."""
        for client in self._posters:
            await client.aclose()

    def _check(self, response: httpx.Response, what: str) -> None:
        status = response.status_code
        if status >= 400:
            retry_after = 0.0
            if status == 429:  # imported only when throttled (podbook.api loads pydantic)
                from podbook.api.ratelimit import parse_retry_after

                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                retry_after = DEFAULT_THROTTLE_SECONDS if retry_after is None else retry_after
            raise refusal(status, _error_text(response), what, retry_after)

    async def _get(self, url: str, what: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self._polls.get(url, **kwargs)
        except httpx.TransportError as exc:
            failure = BrokerUnavailable(
                f"{what}: cannot reach {self._where(url)} ({type(exc).__name__})"
            )
            self.contact.failed(str(failure))
            raise failure from None
        self.contact.answered()
        self._check(response, what)
        return response

    @staticmethod
    def _where(url: str) -> str:
        parsed = httpx.URL(url)
        return f"{parsed.scheme}://{parsed.netloc.decode()}"

    async def take(self, batch_size: int, *, in_progress: bool) -> list[dict[str, Any]]:
        """Long-poll for up to ``batch_size`` jobs; ``[]`` when the poll ended empty."""
        url = self.config.batch_take_url(batch_size)
        url += f"&job_in_progress={1 if in_progress else 0}"
        response = await self._get(url, "job-take", timeout=LONG_POLL_TIMEOUT)
        if response.status_code == 204 or not response.content:
            return []
        try:
            body = response.json()
        except ValueError:
            logger.warning("job-take answered something that is not JSON; ignored")
            return []
        jobs = [body] if isinstance(body, dict) else body if isinstance(body, list) else []
        valid = [job for job in jobs if isinstance(job, dict) and isinstance(job.get("id"), str)]
        if len(valid) != len(jobs):
            logger.warning(
                "job-take answered %d item(s) without an id; ignored", len(jobs) - len(valid)
            )
        return valid

    async def stop_signals(self) -> list[str]:
        """Long-poll job-stop: ids of this worker's jobs to stop (``[]`` when none)."""
        response = await self._get(self.config.stop_url, "job-stop", timeout=LONG_POLL_TIMEOUT)
        if response.status_code == 204 or not response.content:
            return []
        try:
            body = response.json()
        except ValueError:
            return []
        ids = body.get("jobsToStop") if isinstance(body, dict) else None
        return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []

    async def ping(self, job_ids: Iterable[str]) -> None:
        """One heartbeat, naming the jobs in progress."""
        if not self.config.ping_url:
            return
        await self._get(self.config.ping_url, "ping", params=_ping_params(job_ids))

    async def probe(self, job_ids: Iterable[str], timeout: float) -> bool:
        """Whether the broker answers now: one ping over HTTP (never the push socket, where a
        frame sent is no answer), given ``timeout`` seconds. Without a ping URL, whether the
        last call reached it."""
        if not self.config.ping_url:
            return self.contact.answering
        with contextlib.suppress(PodbookError):  # the contact records how it went
            params = _ping_params(job_ids)
            await self._get(self.config.ping_url, "ping", params=params, timeout=timeout)
        return self.contact.answering

    async def farewell(self) -> None:
        """Tell the broker this worker is leaving (a last ping with ``status=unhealthy``), so
        it stops counting it at once; failures are ignored."""
        if not self.config.ping_url:
            return
        params = {"status": "unhealthy", "check": "shutdown", "reason": "worker stopped"}
        with contextlib.suppress(httpx.HTTPError):
            await self._polls.get(self.config.ping_url, params=params, timeout=2.0)

    async def _post(self, url: str, body: bytes, what: str, *, retries: bool, job_id: str) -> None:
        delays = POST_RETRY_DELAYS if retries else ()
        attempt = 0
        client = self._poster(job_id)
        while True:
            try:
                response = await client.post(
                    url, content=body, headers={"Content-Type": "application/json"}
                )
            except httpx.TransportError as exc:
                failure: PodbookError = BrokerUnavailable(
                    f"{what}: cannot reach {self._where(url)} ({type(exc).__name__})"
                )
                self.contact.failed(str(failure))
            else:
                self.contact.answered()
                try:
                    self._check(response, what)
                    return
                except (BrokerUnavailable, Throttled) as exc:
                    failure = exc
            if attempt >= len(delays):
                raise failure
            pause = failure.retry_after if isinstance(failure, Throttled) else delays[attempt]
            await asyncio.sleep(pause)
            attempt += 1

    async def _deliver(
        self, kind: str, job_id: str, url: str, body: bytes, what: str, *, retries: bool
    ) -> None:
        """Deliver a ``done`` (result, progress) or ``stream`` body of ``job_id``: one HTTP
        post to ``url`` here; the push channel sends it over its socket when it can."""
        await self._post(url, body, what, retries=retries, job_id=job_id)

    async def post_result(self, job_id: str, payload: dict[str, Any], *, is_stream: bool) -> None:
        """Post the job's result (retried on 5xx and dropped connections, never on 4xx)."""
        url = self.config.result_url(job_id, is_stream=is_stream)
        body = encode_body(payload)
        await self._deliver("done", job_id, url, body, f"result of {job_id}", retries=True)

    async def post_progress(self, job_id: str, value: Any) -> None:
        """Post a progress update (``{"status": "IN_PROGRESS", "output": value}``)."""
        url = self.config.result_url(job_id, is_stream=False)
        body = encode_body({"status": "IN_PROGRESS", "output": value})
        await self._deliver("done", job_id, url, body, f"progress of {job_id}", retries=False)

    async def post_chunk(self, job_id: str, body: bytes) -> None:
        """Post one streamed chunk: the JSON text of ``{"output": chunk}`` (+ ``metrics``)."""
        url = self.config.chunk_url(job_id)
        await self._deliver("stream", job_id, url, body, f"chunk of {job_id}", retries=True)

    async def post_chunks(self, job_id: str, bodies: list[bytes]) -> None:
        """Post chunks in order: several in one ``{"stream": [...]}`` post when the broker
        takes it (the emulator does), else one post each (the protocol of the reference)."""
        if len(bodies) > 1 and self.stream_batches is not False:
            url = self.config.chunk_url(job_id)
            body = b'{"stream":[' + b",".join(bodies) + b"]}"
            try:
                await self._deliver(
                    "stream", job_id, url, body, f"chunks of {job_id}", retries=True
                )
            except BrokerRefused as exc:
                if exc.status != 400 or self.stream_batches:
                    raise
                self.stream_batches = False  # a broker that knows single chunks only
                logger.debug("the broker takes one chunk per post: %s", exc)
            else:
                self.stream_batches = True
                return
        for body in bodies:
            await self.post_chunk(job_id, body)
