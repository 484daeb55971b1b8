"""The push path: a worker's jobs, results, chunks, pings and stops over one WebSocket.

The podbook emulator offers ``/v2/{endpoint}/ws/{worker_id}`` next to the HTTP worker routes
(see ``docs/queue-push.md`` and :mod:`podbook.emulator.routes.worker_push` for the frames).
:class:`PushChannel` is a :class:`~podbook.worker._protocol.WorkerChannel` that uses it
whenever it can and the HTTP protocol otherwise:

- a broker that refuses the handshake (the real service, an older emulator: any HTTP answer
  but 101) gets HTTP from then on, exactly as before;
- a connection that drops (an emulator restart) fails the waiting take or stop poll as an
  unreachable broker does (the runner backs off and asks again, which reconnects); a result,
  progress update or chunk whose acknowledgement did not come goes again over HTTP, with the
  HTTP path's retries;
- a body over :data:`PUSH_MAX_BYTES` always goes over HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Iterable
from typing import Any

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from podbook import __version__
from podbook.worker._config import WorkerConfig
from podbook.worker._protocol import BrokerUnavailable, WorkerChannel, refusal

__all__ = ["PUSH_MAX_BYTES", "PushChannel", "push_url", "worker_channel"]

logger = logging.getLogger("podbook.worker")

PUSH_MAX_BYTES = 4 * 1024 * 1024
"""Result and chunk bodies larger than this go over HTTP (the socket carries small frames)."""
OPEN_TIMEOUT = 5.0


def push_url(config: WorkerConfig) -> str | None:
    """The push socket's URL for ``config`` (from its take URL), or None when the take URL is
    not the worker protocol's ``.../job-take/{worker_id}`` or push is turned off."""
    if not config.push or "/job-take/" not in config.take_url:
        return None
    url = config.take_url.split("?", 1)[0].replace("/job-take/", "/ws/")
    if url.startswith("https://"):
        return "wss://" + url[len("https://") :]
    if url.startswith("http://"):
        return "ws://" + url[len("http://") :]
    return None


def worker_channel(
    config: WorkerConfig, *, transport: httpx.AsyncBaseTransport | None = None
) -> WorkerChannel:
    """The channel a runner talks through: push when the broker may offer it (HTTP only
    with a custom ``transport``, which a socket would bypass)."""
    if transport is None and push_url(config) is not None:
        return PushChannel(config)
    return WorkerChannel(config, transport=transport)


class _Dropped(Exception):
    """The socket closed before the answer came."""


class PushChannel(WorkerChannel):
    """A :class:`WorkerChannel` that pushes over a WebSocket when the broker has one."""

    def __init__(self, config: WorkerConfig) -> None:
        super().__init__(config)
        self._url = push_url(config)
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._connecting = asyncio.Lock()
        self._jobs: asyncio.Future[list[Any]] | None = None
        self._stops: asyncio.Queue[list[str] | None] = asyncio.Queue()
        self._acks: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._seq = itertools.count(1)

    @property
    def pushing(self) -> bool:
        """Whether the socket is connected now."""
        return self._socket is not None

    # -- the connection ------------------------------------------------------------------

    async def _connected(self) -> ClientConnection | None:
        """The socket (connecting first when needed), or None once the broker has refused
        it: HTTP from then on. :class:`BrokerUnavailable` when the broker cannot be reached."""
        if self._socket is not None or self._url is None:
            return self._socket
        async with self._connecting:
            if self._socket is not None or self._url is None:
                return self._socket
            try:
                socket = await connect(
                    self._url,
                    additional_headers={"Authorization": self.config.worker_key},
                    user_agent_header=f"podbook-worker/{__version__}",
                    compression=None,
                    max_size=None,
                    open_timeout=OPEN_TIMEOUT,
                    proxy=None,
                )
            except InvalidStatus as exc:
                self.contact.answered()
                status = exc.response.status_code
                if status >= 500:
                    raise BrokerUnavailable(
                        f"push socket: {status} from {self.config.broker_url}"
                    ) from None
                logger.info(
                    "worker %s: the broker has no push socket (%d); using HTTP",
                    self.config.worker_id,
                    status,
                )
                self._url = None
                return None
            except (OSError, TimeoutError, WebSocketException) as exc:
                failure = BrokerUnavailable(
                    f"push socket: cannot reach {self.config.broker_url} ({type(exc).__name__})"
                )
                self.contact.failed(str(failure))
                raise failure from None
            self.contact.answered()
            self._socket = socket
            self._stops = asyncio.Queue()
            self._reader = asyncio.create_task(self._read(socket), name="podbook-push-read")
            logger.info("worker %s: jobs come over the push socket", self.config.worker_id)
            return socket

    async def _read(self, socket: ClientConnection) -> None:
        """Dispatch the broker's frames until the socket closes, then fail what waits."""
        stops = self._stops
        try:
            async for raw in socket:
                message = orjson.loads(raw)
                kind = message.get("type")
                if kind == "jobs":
                    waiter = self._jobs
                    if waiter is not None and not waiter.done():
                        waiter.set_result(message.get("jobs") or [])
                elif kind == "stop":
                    stops.put_nowait([i for i in message.get("ids") or [] if isinstance(i, str)])
                elif kind in ("ack", "error"):
                    ack = self._acks.pop(message.get("seq"), None)
                    if ack is not None and not ack.done():
                        ack.set_result(message)
        except (ConnectionClosed, orjson.JSONDecodeError):
            pass
        finally:
            if self._socket is socket:  # not closed by this worker: the connection is lost
                self._socket = None
                self.contact.failed(f"the push socket to {self.config.broker_url} closed")
            if self._jobs is not None and not self._jobs.done():
                self._jobs.set_exception(_Dropped())
            for ack in self._acks.values():
                if not ack.done():
                    ack.set_exception(_Dropped())
            self._acks.clear()
            stops.put_nowait(None)
            logger.debug("worker %s: push socket closed", self.config.worker_id)

    async def _send(self, socket: ClientConnection, frame: bytes) -> None:
        try:
            await socket.send(frame)
        except ConnectionClosed:
            raise _Dropped() from None

    def _drop(self) -> None:
        """Close the socket now (the broker then hands this worker nothing more)."""
        socket = self._socket
        if socket is not None:
            self._socket = None
            socket.transport.abort()

    # -- the protocol --------------------------------------------------------------------

    async def take(self, batch_size: int, *, in_progress: bool) -> list[dict[str, Any]]:
        """Up to ``batch_size`` jobs pushed by the broker (``[]`` when its long-poll ended
        empty), or the HTTP take."""
        socket = await self._connected()
        if socket is None:
            return await super().take(batch_size, in_progress=in_progress)
        waiter = self._jobs = asyncio.get_running_loop().create_future()
        frame = {"type": "take", "n": batch_size, "busy": in_progress}
        try:
            await self._send(socket, orjson.dumps(frame))
            jobs = await waiter
        except _Dropped:
            raise BrokerUnavailable(
                f"job-take: the push socket to {self.config.broker_url} closed"
            ) from None
        except asyncio.CancelledError:
            if not waiter.done():
                self._drop()  # a take that nobody waits for must not hand out jobs
            raise
        return [job for job in jobs if isinstance(job, dict) and isinstance(job.get("id"), str)]

    async def stop_signals(self) -> list[str]:
        """Ids of this worker's jobs to stop, as the broker pushes them (or the HTTP poll)."""
        socket = await self._connected()
        if socket is None:
            return await super().stop_signals()
        ids = await self._stops.get()
        if ids is None:
            raise BrokerUnavailable(f"job-stop: the push socket to {self.config.broker_url} closed")
        return ids

    async def ping(self, job_ids: Iterable[str]) -> None:
        """A heartbeat naming the jobs in progress (over the socket when it is connected)."""
        socket = self._socket
        if socket is not None and self.config.ping_url:
            with contextlib.suppress(_Dropped):
                return await self._send(
                    socket, orjson.dumps({"type": "ping", "jobs": list(job_ids)})
                )
        await super().ping(job_ids)

    async def farewell(self) -> None:
        """Say goodbye over the socket when it is connected, else over HTTP."""
        socket = self._socket
        if socket is not None and self.config.ping_url:
            with contextlib.suppress(_Dropped):
                return await self._send(socket, b'{"type":"bye"}')
        await super().farewell()

    async def aclose(self) -> None:
        """Close the socket, then the HTTP pools."""
        socket, reader = self._socket, self._reader
        self._socket = None  # closed by this worker: no lost connection to note
        if socket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(socket.close(), timeout=2.0)
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        await super().aclose()

    async def _deliver(
        self, kind: str, job_id: str, url: str, body: bytes, what: str, *, retries: bool
    ) -> None:
        """Over the socket when it is connected and acknowledges; else the HTTP post."""
        socket = self._socket
        if socket is not None and len(body) <= PUSH_MAX_BYTES:
            seq = next(self._seq)
            ack = self._acks[seq] = asyncio.get_running_loop().create_future()
            head = b'{"type":"%s","seq":%d,"id":%s,"body":' % (
                kind.encode(),
                seq,
                orjson.dumps(job_id),
            )
            try:
                await self._send(socket, head + body + b"}")
                reply = await ack
            except _Dropped:
                self._acks.pop(seq, None)  # not acknowledged: HTTP below
            else:
                if reply.get("type") == "ack":
                    return
                raise refusal(int(reply.get("status") or 500), str(reply.get("error")), what)
        await super()._deliver(kind, job_id, url, body, what, retries=retries)
