"""``{emulator_url}/lb/{endpoint_id}/{path}``: a request passed through to a worker.

Every method; the path after ``/lb/{endpoint_id}`` and the query as sent; the headers
without the hop-by-hop ones, ``Host`` (the worker's own) and ``Authorization`` (the
caller's API key never reaches a worker), plus ``X-Forwarded-For``, ``-Host`` and ``-Proto``.
The request body streams to the worker as it arrives and the answer streams back as the
worker writes it (status, headers and body bytes untouched, compressed or not). A caller
that goes away mid-answer closes the worker's connection too.

Errors are ``{"error": ...}`` as on the queue: 401 without a valid key, 403 for a read-only
key on anything but GET/HEAD, 404 for an unknown endpoint, 400 for a QUEUE endpoint and when
no worker is ready (the service's code for "no worker can take it"), 502 when the worker
cannot be reached or breaks off before answering, 524 when it has not answered within the
request timeout. A connection refused before any byte of the body was read is tried on
another healthy worker (nothing reached the first one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from podbook.emulator.broker.errors import QueueRefusal
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.loadbalancer.balancer import LoadBalancer, NoWorkerReady
from podbook.emulator.loadbalancer.pool import LbWorker
from podbook.emulator.routes.errors import queue_error, use_format
from podbook.emulator.routes.queue import queue_caller, queue_service

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("podbook.emulator.loadbalancer")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

LOAD_BALANCER = "LOAD_BALANCER"
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED = HOP_BY_HOP | {"host", "authorization"}
_READ_METHODS = frozenset({"GET", "HEAD"})


class ClientGone(Exception):
    """The caller closed its connection while its request body was being read."""


class RequestBody:
    """The caller's request body as an async iterator of chunks, read as the worker takes it."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self.started = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self.started = True
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            if chunk:
                yield chunk
            if not message.get("more_body", False):
                return


def _dropped(headers: list[tuple[bytes, bytes]]) -> set[bytes]:
    """Header names not to forward: hop-by-hop ones and those ``Connection`` names."""
    names = {name.encode() for name in _NOT_FORWARDED}
    for name, value in headers:
        if name.lower() == b"connection":
            names |= {token.strip().lower() for token in value.split(b",") if token.strip()}
    return names


def forwarded_request_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """The caller's headers as the worker gets them."""
    raw: list[tuple[bytes, bytes]] = list(scope.get("headers") or [])
    dropped = _dropped(raw)
    headers = [(name, value) for name, value in raw if name.lower() not in dropped]
    host = next((value for name, value in raw if name.lower() == b"host"), b"")
    client = scope.get("client")
    if client:
        headers.append((b"x-forwarded-for", str(client[0]).encode("latin-1")))
    if host:
        headers.append((b"x-forwarded-host", host))
    headers.append((b"x-forwarded-proto", str(scope.get("scheme", "http")).encode("latin-1")))
    return headers


def forwarded_response_headers(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    """The worker's answer headers as the caller gets them (hop-by-hop ones dropped)."""
    raw = list(response.headers.raw)
    dropped = _dropped(raw) - {b"authorization"}
    return [(name.lower(), value) for name, value in raw if name.lower() not in dropped]


def _has_body(scope: Scope) -> bool:
    for name, value in scope.get("headers") or ():
        if name == b"content-length":
            return value.strip() != b"0"
        if name == b"transfer-encoding":
            return True
    return False


def worker_target(scope: Scope, endpoint_id: str) -> str:
    """The path and query to ask the worker for (``/`` for the endpoint's root)."""
    raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
    prefix = f"/lb/{endpoint_id}".encode()
    path = raw_path[len(prefix) :] if raw_path.startswith(prefix) else raw_path
    path = path or b"/"
    query: bytes = scope.get("query_string") or b""
    return (path + (b"?" + query if query else b"")).decode("latin-1")


def resolve(request: Request) -> EndpointQueue:
    """The caller's load-balancing endpoint named in the path (401/403/404/400 otherwise)."""
    caller = queue_caller(request)
    endpoint_id = request.path_params["endpoint_id"]
    queue = queue_service(request).broker.require_endpoint(caller.account_id, endpoint_id)
    if request.method not in _READ_METHODS and not caller.can_write:
        raise QueueRefusal(403, "this API key is read-only (GET and HEAD only); use a full key")
    if queue.record.get("type") != LOAD_BALANCER:
        raise QueueRefusal(
            400,
            f"endpoint {endpoint_id!r} is a {queue.record.get('type') or 'QUEUE'} endpoint: "
            f"send its jobs to /v2/{endpoint_id}/run or /runsync; /lb/ takes requests for "
            'endpoints created with "type": "LOAD_BALANCER"',
        )
    return queue


def no_worker_error(endpoint_id: str, reason: str) -> QueueRefusal:
    """The 400 a request gets when no worker can take it."""
    return QueueRefusal(
        400,
        f"endpoint {endpoint_id!r} has no worker ready ({reason}); start one with "
        f"`podbook worker --lb app.py:app --endpoint {endpoint_id}` or "
        f"`%endpoint serve APP --lb --name {endpoint_id}`, then retry",
    )


class Lease:
    """One request counted in flight on a worker until :meth:`end` (which is idempotent):
    ended as soon as the worker's answer has been read, so the caller's next request sees
    the worker free again."""

    def __init__(self, balancer: LoadBalancer, worker: LbWorker) -> None:
        self.balancer = balancer
        self.worker = worker
        self._ended = False

    def end(self) -> None:
        """The request is over for the worker."""
        if not self._ended:
            self._ended = True
            self.balancer.release(self.worker)


def _failure(
    endpoint_id: str, worker: LbWorker, exc: BaseException, timeout: float
) -> QueueRefusal:
    """The error a caller gets when its request could not be passed to ``worker``."""
    if isinstance(exc, asyncio.TimeoutError):
        return QueueRefusal(
            524,
            f"endpoint {endpoint_id!r}: worker {worker.worker_id} did not answer within "
            f"{timeout:g} s",
        )
    if isinstance(exc, ClientGone):
        return QueueRefusal(499, "the caller closed the connection")
    return QueueRefusal(
        502,
        f"endpoint {endpoint_id!r}: worker {worker.worker_id} broke off before answering "
        f"({type(exc).__name__})",
    )


class LoadBalancerProxy:
    """The ASGI app behind ``/lb/{endpoint_id}/{path}``."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        use_format(request, queue_error)
        queue = resolve(request)
        balancer = queue_service(request).balancer
        upstream, lease = await self._forward(scope, receive, queue, balancer)
        try:
            await self._relay(upstream, lease, receive, send)
        finally:
            await upstream.aclose()
            lease.end()

    async def _forward(
        self, scope: Scope, receive: Receive, queue: EndpointQueue, balancer: LoadBalancer
    ) -> tuple[httpx.Response, Lease]:
        """Send the request to a worker; its answer's head (the body still to read)."""
        import httpx  # on first use: the emulator starts without it

        endpoint_id = queue.endpoint_id
        body = RequestBody(receive) if _has_body(scope) else None
        headers = forwarded_request_headers(scope)
        target = worker_target(scope, endpoint_id)
        tried: set[str] = set()
        timeout = balancer.settings.request_timeout_seconds
        while True:
            try:
                worker = await balancer.acquire(queue.key, frozenset(tried), wait=not tried)
            except NoWorkerReady as exc:
                if tried:
                    raise QueueRefusal(502, f"endpoint {endpoint_id!r}: {exc}") from None
                raise no_worker_error(endpoint_id, str(exc)) from None
            lease = Lease(balancer, worker)
            client = balancer.proxy_client
            outgoing = client.build_request(
                scope["method"], worker.base_url + target, headers=headers, content=body
            )
            try:
                upstream = await asyncio.wait_for(client.send(outgoing, stream=True), timeout)
            except (httpx.HTTPError, asyncio.TimeoutError, ClientGone) as exc:
                lease.end()
                if not isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
                    raise _failure(endpoint_id, worker, exc, timeout) from None
                reason = f"could not connect ({type(exc).__name__})"
                balancer.unreachable(balancer.pool(queue.key), worker, reason)
                if body is not None and body.started:
                    raise QueueRefusal(502, worker.describe()) from None
                tried.add(worker.worker_id)  # nothing reached it: another worker may take it
                continue
            return upstream, lease

    async def _relay(
        self, upstream: httpx.Response, lease: Lease, receive: Receive, send: Send
    ) -> None:
        """Stream the worker's answer to the caller; stop when either side goes away."""
        await send(
            {
                "type": "http.response.start",
                "status": upstream.status_code,
                "headers": forwarded_response_headers(upstream),
            }
        )
        pump = asyncio.ensure_future(self._pump(upstream, lease, send))
        gone = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            await asyncio.wait({pump, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, gone):
                task.cancel()
            outcomes = await asyncio.gather(pump, gone, return_exceptions=True)
        failure = outcomes[0]
        if isinstance(failure, Exception):
            # The answer is cut short: returning without its end makes the server close the
            # connection, so the caller sees a truncated body, never a complete-looking one.
            log.warning(
                "worker %s broke off its answer (%s)",
                lease.worker.worker_id,
                type(failure).__name__,
            )

    @staticmethod
    async def _pump(upstream: httpx.Response, lease: Lease, send: Send) -> None:
        async for chunk in upstream.aiter_raw():
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        lease.end()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
