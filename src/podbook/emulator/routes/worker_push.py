"""The push path: one WebSocket per podbook worker, ``/v2/{endpoint}/ws/{worker_id}``.

podbook's own worker opens it (authenticated by its worker key, exactly like the HTTP worker
routes of :mod:`podbook.emulator.routes.worker`) and then speaks JSON text frames instead
of one HTTP request per take, result and chunk. The broker does the same moves as for the
HTTP protocol, so a job taken over the socket is as durable, retried and stopped as one taken
over HTTP. See ``docs/queue-push.md``.

Frames are JSON text (sent as binary frames: UTF-8 JSON, no decoding on the way). Worker →
emulator:

- ``{"type": "take", "n": N, "busy": bool}``: hand me up to ``N`` jobs (a long-poll, one at
  a time; ``busy`` false is the HTTP take's ``job_in_progress=0``);
- ``{"type": "done", "seq": S, "id": JOB, "body": {...}}``: a result or progress update (the
  job-done body), ``{"type": "stream", "seq": S, "id": JOB, "body": {...}}``: chunks (the
  job-stream body); each is answered ``{"type": "ack", "seq": S}`` once committed, or
  ``{"type": "error", "seq": S, "status": 409, "error": "..."}``;
- ``{"type": "ping", "jobs": [...]}``: a heartbeat naming the jobs it runs (the HTTP ping's
  ``job_id``), ``{"type": "bye"}``: it is leaving (the ping's ``status=unhealthy``).

Emulator → worker: ``{"type": "jobs", "jobs": [...]}`` (the answer of a take: job-take's
work items, ``[]`` when the long-poll ended empty) and ``{"type": "stop", "ids": [...]}``
(job-stop, pushed as soon as the broker stops a job). A refused key or endpoint closes the
handshake (HTTP 403) before anything is accepted; the worker then uses HTTP.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from podbook.emulator.broker.errors import QueueRefusal
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.broker.service import QueueService
from podbook.emulator.routes.queue import queue_service
from podbook.emulator.routes.worker import worker_queue

log = logging.getLogger("podbook.emulator.broker")

PUSH_PATH = "/v2/{endpoint_id:endpoint}/ws/{worker_id}"
POLICY_VIOLATION = 1008
"""The close code of a refused handshake (answered as HTTP 403)."""
SERVICE_RESTART = 1012
"""The close code when the emulator shuts down."""


class PushSession:
    """One connected worker: its socket, the broker calls its frames become, its tasks."""

    def __init__(
        self, socket: WebSocket, queue: EndpointQueue, service: QueueService, worker_id: str
    ) -> None:
        self.socket = socket
        self.queue = queue
        self.broker = service.broker
        self.settings = service.settings
        self.worker_id = worker_id
        self.gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._send_lock = asyncio.Lock()
        self._take: asyncio.Task[None] | None = None

    async def send(self, message: dict[str, Any]) -> None:
        """One frame to the worker (frames from several tasks never interleave)."""
        data = orjson.dumps(message)
        async with self._send_lock:
            await self.socket.send_bytes(data)

    async def serve(self) -> None:
        """Read frames until the worker goes; stop signals are pushed meanwhile."""
        stops = asyncio.create_task(self._push_stops())
        try:
            while True:
                message = await self.socket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                raw = message.get("text") or message.get("bytes") or b""
                await self._handle(orjson.loads(raw))
        except (WebSocketDisconnect, orjson.JSONDecodeError):
            return
        finally:
            # The take and the stop poll see ``gone`` and return (nothing is handed out).
            self.gone.set_result(None)
            await asyncio.gather(
                stops, *([self._take] if self._take else []), return_exceptions=True
            )

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "take":
            if self._take is None or self._take.done():
                count = min(max(int(message.get("n") or 1), 1), 1000)
                self._take = asyncio.create_task(self._take_jobs(count, not message.get("busy")))
        elif kind in ("done", "stream"):
            await self._post(kind, message)
        elif kind == "ping":
            jobs = message.get("jobs")
            running = [i for i in jobs if isinstance(i, str)] if isinstance(jobs, list) else None
            self.broker.ping(self.queue, self.worker_id, True, running)
        elif kind == "bye":
            self.broker.ping(self.queue, self.worker_id, False)

    async def _post(self, kind: str, message: dict[str, Any]) -> None:
        seq, job_id, body = message.get("seq"), str(message.get("id")), message.get("body")
        try:
            if kind == "done":
                self.broker.result(self.queue, self.worker_id, job_id, body)
            else:
                # The body's size as the HTTP route measures it (the posted bytes), so a chunk
                # over the limit is split the same way, alone or in a batch.
                size = len(orjson.dumps(body))
                self.broker.stream_chunk(self.queue, self.worker_id, job_id, body, size)
        except QueueRefusal as error:
            await self.send(
                {"type": "error", "seq": seq, "status": error.status, "error": error.message}
            )
            return
        if kind == "done":
            await asyncio.sleep(0)  # a /runsync this result ends answers first
        await self.send({"type": "ack", "seq": seq})

    async def _take_jobs(self, count: int, idle: bool) -> None:
        jobs = await self.broker.take(
            self.queue,
            self.worker_id,
            count,
            self.settings.take_wait_seconds,
            self.gone,
            idle=idle,
        )
        if self.gone.done():
            return  # handed out to a worker already gone: the broker sees it as for HTTP
        if not jobs and self.broker.closing:
            await self.socket.close(code=SERVICE_RESTART)  # the worker reconnects later
            return
        await self.send({"type": "jobs", "jobs": [job.work_item() for job in jobs]})

    async def _push_stops(self) -> None:
        while not self.gone.done() and not self.broker.closing:
            ids = await self.broker.stop_signals(
                self.queue, self.worker_id, self.settings.stop_wait_seconds, self.gone
            )
            if ids:
                await self.send({"type": "stop", "ids": ids})


async def worker_push(socket: WebSocket) -> None:
    """``/v2/{endpoint}/ws/{worker_id}``: refuse (403) or accept and serve the worker."""
    service = queue_service(socket)
    try:
        queue = worker_queue(socket, service)
    except QueueRefusal as error:
        await socket.close(code=POLICY_VIOLATION, reason=error.message[:120])
        return
    await socket.accept()
    session = PushSession(socket, queue, service, socket.path_params["worker_id"])
    queue.worker(session.worker_id)  # connected: counted from now
    try:
        await session.serve()
    except Exception:  # a bug here must not take the emulator down; the worker reconnects
        log.exception("push session of worker %s ended by an error", session.worker_id)


def routes() -> list[BaseRoute]:
    """The push route."""
    return [WebSocketRoute(PUSH_PATH, worker_push)]
