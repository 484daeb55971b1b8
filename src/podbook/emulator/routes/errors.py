"""Errors into answers, in one place: the app's ``exception_handlers``.

Handlers raise and never build an error answer themselves:

- :class:`~podbook.emulator.problems.Problem`: problem+json (``title``, ``status``,
  ``detail``, ``errors[]``);
- :class:`~podbook.api.validation.RequestRejected` (a body or query the wire contract
  refuses): the same problem+json as its :class:`Problem`;
- :class:`~podbook.emulator.broker.errors.QueueRefusal`: the queue's ``{"error": ...}``;
- Starlette's ``HTTPException`` (no such route, method not allowed): problem+json naming the
  path (and the methods allowed);
- anything else: a 500 problem without a traceback (logged).

A route family that answers errors in another shape says so per request with
:func:`use_format` (the queue and worker routes: ``{"error": ...}`` for every error, a
refused key included, and a refused body is a 400; the OpenAI-compatible route: OpenAI's
error object). A REST route keeps its caller's ``RateLimit`` headers with
:func:`keep_quota_headers`, so its errors carry them too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import Match, Route

from podbook.api.queue import error_text
from podbook.api.validation import RequestRejected
from podbook.emulator.auth import find_caller
from podbook.emulator.broker.errors import QueueRefusal
from podbook.emulator.problems import Problem
from podbook.emulator.routes.jsonresp import dumps

log = logging.getLogger("podbook.emulator")

PROBLEM_TYPE = "application/problem+json"

ErrorFormat = Callable[[int, str, Mapping[str, str]], Response]
"""How a route family answers an error: (status, message, headers) → the response."""


def problem_response(problem: Problem, extra_headers: Mapping[str, str] | None = None) -> Response:
    """Render a :class:`Problem` as problem+json (``extra_headers`` over its own)."""
    body: dict[str, object] = {
        "title": problem.title,
        "status": problem.status,
        "detail": problem.detail,
    }
    if problem.errors:
        body["errors"] = problem.errors
    headers = {**problem.headers, **(extra_headers or {})}
    return Response(
        dumps(body), status_code=problem.status, headers=headers, media_type=PROBLEM_TYPE
    )


def as_problem(exc: RequestRejected) -> Problem:
    """The :class:`Problem` of a :class:`RequestRejected` (same status, detail, errors)."""
    return Problem(exc.status, exc.detail, title=exc.title or None, errors=exc.errors or None)


def queue_error(status: int, message: str, headers: Mapping[str, str]) -> Response:
    """The queue's error answer: ``{"error": message}``."""
    return Response(
        dumps({"error": message}),
        status_code=status,
        headers=dict(headers),
        media_type="application/json",
    )


def use_format(connection: HTTPConnection, answer: ErrorFormat) -> None:
    """Answer every error of this request with ``answer`` rather than problem+json."""
    connection.state.error_format = answer


def keep_quota_headers(request: Request, headers: Mapping[str, str]) -> None:
    """The caller's ``RateLimit`` headers, for this request's error answers too."""
    request.state.quota_headers = headers


def _format(request: Request) -> ErrorFormat | None:
    return getattr(request.state, "error_format", None)


def _quota(request: Request) -> Mapping[str, str]:
    return getattr(request.state, "quota_headers", None) or {}


async def _problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Problem)
    answer = _format(request)
    if answer is not None:
        return answer(exc.status, exc.detail, exc.headers)
    return problem_response(exc, _quota(request))


async def _refusal(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, QueueRefusal)
    return (_format(request) or queue_error)(exc.status, exc.message, exc.headers)


async def _rejected(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestRejected)
    answer = _format(request)
    if answer is not None:
        return answer(400, error_text(exc), {})
    return problem_response(as_problem(exc), _quota(request))


async def _http_exception(request: Request, exc: Exception) -> Response:
    """No such route (404) or method (405). An authenticated caller still gets its quota
    headers (not counted), as on every other authenticated answer."""
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 404:
        detail = f"no route {request.url.path}; check the URL and the API base"
    elif exc.status_code == 405:
        allowed = _allowed_methods(request)
        headers["Allow"] = ", ".join(allowed)
        detail = f"method {request.method} is not allowed on {request.url.path}; use " + (
            " or ".join(m for m in allowed if m != "HEAD")
        )
    else:
        detail = exc.detail or "request refused"
    emulator = request.app.state.emulator
    caller = find_caller(emulator.store, request.headers.get("authorization"))
    quota = emulator.limiter.peek(caller.account_id) if caller is not None else {}
    return problem_response(Problem(exc.status_code, detail, headers=headers), quota)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route accepts on this path (routes are split per method)."""
    methods: set[str] = set()
    for route in request.app.routes:
        if isinstance(route, Route) and route.methods:
            match, _ = route.matches({**request.scope, "method": "GET"})
            if match != Match.NONE:
                methods |= route.methods
    return sorted(methods)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.error("internal error on %s %s: %s", request.method, request.url.path, type(exc).__name__)
    problem = Problem(500, "the emulator failed to handle this request; see its log")
    return problem_response(problem, _quota(request))


EXCEPTION_HANDLERS = {
    Problem: _problem,
    RequestRejected: _rejected,
    QueueRefusal: _refusal,
    HTTPException: _http_exception,
    Exception: _internal_error,
}
"""The emulator app's ``exception_handlers``."""
