"""The REST routes' plumbing: :class:`ApiRequest` and :func:`api_route`.

:func:`api_route` wraps a handler so that it runs only for an authenticated caller (401
otherwise), counts against the caller's rate limit (429 beyond), refuses writes from
read-only keys (403) and carries the ``RateLimit`` headers on every answer. Its errors are
answered problem+json by the app's exception handlers (:mod:`podbook.emulator.routes.errors`),
which add the same headers (never a traceback).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from podbook.emulator import podkeys
from podbook.emulator.auth import Caller, authenticate, require_write
from podbook.emulator.context import Emulator
from podbook.emulator.problems import Problem, not_found
from podbook.emulator.routes.errors import keep_quota_headers
from podbook.emulator.store import Collection, Record, Store

_READ_METHODS = frozenset({"GET", "HEAD"})


@dataclass
class ApiRequest:
    """What a route handler receives: the request, the caller and the emulator."""

    request: Request
    caller: Caller
    emulator: Emulator

    @property
    def account_id(self) -> str:
        """The caller's account."""
        return self.caller.account_id

    @property
    def store(self) -> Store:
        """The emulator's store."""
        return self.emulator.store

    def param(self, name: str) -> str:
        """A path parameter."""
        return self.request.path_params[name]

    def record(self, collection: Collection, kind: str) -> Record:
        """The caller's record in ``collection`` that the ``id`` path parameter names; 404
        naming ``kind`` when there is none (another account's gets the same answer)."""
        record_id = self.param("id")
        record = collection.get(self.account_id, record_id)
        if record is None:
            raise not_found(kind, record_id)
        return record

    async def record_with_body(self, collection: Collection, kind: str) -> tuple[Record, Any]:
        """:meth:`record` (a 404 comes before the body is read) and the JSON body; the record
        is read again once the body has arrived, so a change made meanwhile is not lost."""
        self.record(collection, kind)
        body = await self.json()
        return self.record(collection, kind), body

    def query_flag(self, name: str) -> bool:
        """A boolean query parameter (``true``/``1``/``yes``); 400 for anything else."""
        raw = self.request.query_params.get(name)
        if raw is None:
            return False
        value = raw.strip().lower()
        if value in ("true", "1", "yes"):
            return True
        if value in ("false", "0", "no"):
            return False
        raise Problem(
            400,
            f"query parameter {name}={raw!r} is invalid; use true or false",
            errors=[f"{name}: must be true or false"],
        )

    async def json(self) -> Any:
        """The request body as JSON, or a 400 :class:`Problem` naming the parse error."""
        raw = await self.request.body()
        if not raw.strip():
            message = "request body is empty; send a JSON object"
            raise Problem(400, message, errors=[f"$: {message}"])
        try:
            return json.loads(raw, parse_constant=_refuse_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            message = f"request body is not valid JSON ({exc}); send a JSON object"
        except RecursionError:
            message = "request body is nested too deeply; send a plain JSON object"
        raise Problem(400, message, errors=[f"$: {message}"])


def _refuse_constant(name: str) -> Any:
    """``NaN`` and ``Infinity`` are not JSON (Python's parser accepts them by default)."""
    raise ValueError(f"{name} is not a JSON value")


Handler = Callable[[ApiRequest], Awaitable[Response]]


def api_route(path: str, handler: Handler, methods: Sequence[str]) -> Route:
    """A Starlette route for an authenticated, rate-limited API handler."""

    async def endpoint(request: Request) -> Response:
        emulator: Emulator = request.app.state.emulator
        caller = authenticate(emulator.store, request.headers.get("authorization"))
        headers = emulator.limiter.hit(caller.account_id)
        keep_quota_headers(request, headers)
        if caller.pod_id is not None:
            podkeys.check_scope(caller.pod_id, request.method, path, request.path_params.get("id"))
        if request.method not in _READ_METHODS:
            require_write(caller)
        response = await handler(ApiRequest(request, caller, emulator))
        response.raw_headers.extend(
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers.items()
        )
        return response

    endpoint.__name__ = handler.__name__
    endpoint.__wrapped__ = handler  # type: ignore[attr-defined]  # the route table names it
    return Route(path, endpoint, methods=list(methods))
