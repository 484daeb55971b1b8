"""An ASGI guard that refuses request bodies over their route's limit without reading them.

The limit depends on the path: ``/v2/{endpoint}/run`` 10 MB and ``/runsync`` 20 MB (the
seed's payload limits), a worker's result and stream posts 50 MB, every other route 1 MB
(REST bodies are small JSON documents). A ``Content-Length`` over the limit is answered at
once, before any byte of the body is read; a body sent without one (chunked) is counted as
it streams in and refused as soon as the count passes the limit. Either way the answer is
413 in the route family's error format (``{"error": ...}`` on queue and worker routes,
problem+json elsewhere) with ``Connection: close``, so the rest of the body is never taken in.
Requests to load-balancing endpoints (``/lb/...``) are not limited here: their bodies stream
to the user's own server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from podbook.api.queue import MB, RUN_MAX_BYTES, RUNSYNC_MAX_BYTES
from podbook.emulator.broker.endpoints import RESERVED_IDS
from podbook.emulator.problems import Problem
from podbook.emulator.routes.errors import problem_response, queue_error

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PASS_THROUGH_PREFIX = "/lb/"
"""Load-balancing requests stream to the user's own server, which sets its own limits."""
REST_MAX_BYTES = 1 * MB
WORKER_POST_MAX_BYTES = 50 * MB
_WORKER_POSTS = frozenset({"job-done", "job-stream"})


@dataclass(frozen=True)
class BodyRule:
    """The largest body a route takes, and how that route family reports errors."""

    limit: int
    queue: bool  # ``{"error": ...}`` bodies rather than problem+json
    hint: str


def rule_for(path: str) -> BodyRule:
    """The body rule of a request path."""
    parts = path.split("/")
    if len(parts) >= 4 and parts[1] == "v2" and parts[2] not in RESERVED_IDS and parts[2]:
        operation = parts[3]
        if operation == "run":
            return BodyRule(
                RUN_MAX_BYTES,
                True,
                "use runsync (up to 20 MB), or pass large data by reference (a URL)",
            )
        if operation in ("runsync", "openai"):
            return BodyRule(
                RUNSYNC_MAX_BYTES,
                True,
                "pass large data by reference (a URL, or storage the worker reads)",
            )
        if operation in _WORKER_POSTS:
            return BodyRule(
                WORKER_POST_MAX_BYTES,
                True,
                "return a reference (a URL) to large results instead of the data",
            )
        return BodyRule(REST_MAX_BYTES, True, "send a smaller JSON body")
    return BodyRule(REST_MAX_BYTES, False, "send a smaller JSON body")


def _megabytes(size: int) -> str:
    return f"{size / MB:g} MB"


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or ():
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


class BodyTooLarge(BaseException):
    """Raised from ``receive`` once a streamed body passes its route's limit.

    A ``BaseException``, so that a handler's ``except Exception`` (which answers 500 and logs
    a traceback) lets it through to :class:`BodyLimit`, which has answered 413 already.
    """


class BodyLimit:
    """ASGI middleware: 413 for any request body over :func:`rule_for`'s limit."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(PASS_THROUGH_PREFIX):
            await self.app(scope, receive, send)
            return
        rule = rule_for(scope["path"])
        declared = _declared_length(scope)
        if declared is not None and declared > rule.limit:
            await self._refuse(scope, receive, send, rule, f"{declared:,} bytes")
            return
        received = 0
        refused = False
        started = False

        async def counting_receive() -> Message:
            nonlocal received, refused
            if refused:
                raise BodyTooLarge
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > rule.limit:
                    refused = True
                    if not started:
                        await self._refuse(
                            scope, receive, send, rule, f"more than {rule.limit:,} bytes"
                        )
                    raise BodyTooLarge
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 went out already
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except BodyTooLarge:
            if not refused:
                raise
            # Otherwise answered already: whatever the route did after the refusal is moot.

    @staticmethod
    async def _refuse(
        scope: Scope, receive: Receive, send: Send, rule: BodyRule, size: str
    ) -> None:
        detail = (
            f"request body is too large for {scope['path']}: {size}, the limit is "
            f"{_megabytes(rule.limit)} ({rule.limit:,} bytes); {rule.hint}"
        )
        headers = {"Connection": "close"}
        if rule.queue:
            response = queue_error(413, detail, headers)
        else:
            response = problem_response(
                Problem(413, detail, title="Content Too Large", headers=headers)
            )
        await response(scope, receive, send)
