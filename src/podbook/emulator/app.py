"""The emulator's ASGI application.

One port serves every base: REST v2 under explicit prefixes (``/v2/pods``, ``/v2/clusters``,
``/v2/catalog``, ``/v2/account``, ``/v2/registries``, ``/v2/templates``), REST v1
(``/v1/containerregistryauth/{id}``), ``/v2/serverless`` (queue endpoints), then the queue
under ``/v2/{endpoint_id}/...`` (client and worker routes of :mod:`podbook.emulator.broker`),
which therefore must be mounted after the explicit prefixes, and ``/lb/{endpoint_id}/...``
(load-balancing endpoints, passed through to the user's own workers). ``GET /healthz`` needs
no key.
Request bodies over their route's limit are refused (413) by
:class:`~podbook.emulator.bodylimit.BodyLimit` before any handler reads them. Every REST error
is problem+json, unknown routes (404, 405) and internal errors (500, without a traceback)
included; queue errors are ``{"error": ...}`` as the service answers them.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route

import podbook
from podbook.emulator.auth import authenticate
from podbook.emulator.billing.ledger import install as install_billing
from podbook.emulator.bodylimit import BodyLimit
from podbook.emulator.broker import install as install_broker
from podbook.emulator.context import Emulator
from podbook.emulator.jsonresp import json_response
from podbook.emulator.pods import PodViews
from podbook.emulator.problems import Problem, problem_response
from podbook.emulator.ratelimit import RateLimiter
from podbook.emulator.settings import DEFAULT_ACCOUNT_ID, EmulatorSettings
from podbook.emulator.store import Store
from podbook.emulator.templates import normalize_template

log = logging.getLogger("podbook.emulator")


def generate_api_key() -> str:
    """A fresh API key for the default account."""
    return "pbk_" + secrets.token_urlsafe(32)


def seed_accounts(store: Store, settings: EmulatorSettings) -> None:
    """Register the default account's key and every configured account, key and template.

    Templates declared in the config file are (re)written on every start: the file is their
    source of truth, and pods created from an earlier version keep their own copy.
    """
    store.ensure_account(DEFAULT_ACCOUNT_ID)
    store.add_key(settings.api_key, DEFAULT_ACCOUNT_ID, "full")
    for spec in settings.accounts:
        account = store.ensure_account(spec.id)
        for key in spec.keys:
            store.add_key(key, spec.id, "full")
        for key in spec.readonly_keys:
            store.add_key(key, spec.id, "readonly")
        if spec.ssh_keys is not None and account.get("sshKeys") != spec.ssh_keys:
            store.save_account({**account, "sshKeys": list(spec.ssh_keys)})
        for template in spec.templates:
            record = normalize_template(template)
            if store.templates.get(spec.id, record["id"]) != record:
                store.templates.put(spec.id, record)


async def healthz(request: Request) -> Response:
    """Liveness probe: no key needed. ``pods`` says how pods run (``runtime``: ``local`` or
    ``none``; ``sandbox``: ``bwrap`` or ``none``, with ``sandboxNote`` when ``auto`` fell
    back), so a notebook can say so."""
    settings = request.app.state.emulator.settings
    pods = {"runtime": settings.runtime, "sandbox": settings.sandbox}
    if settings.sandbox_note:
        pods["sandboxNote"] = settings.sandbox_note
    return json_response({"ok": True, "version": podbook.__version__, "pods": pods})


def _quota_headers(request: Request) -> dict[str, str]:
    """The ``RateLimit`` headers of an authenticated caller (not counted), else nothing.

    Unknown routes and methods are answered before any handler runs; an authenticated
    caller still gets its quota headers, as on every other authenticated response.
    """
    emulator: Emulator = request.app.state.emulator
    try:
        caller = authenticate(emulator.store, request.headers.get("authorization"))
    except Problem:
        return {}
    return emulator.limiter.peek(caller.account_id)


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    response = _route_problem(request, exc)
    response.headers.update(_quota_headers(request))
    return response


def _route_problem(request: Request, exc: HTTPException) -> Response:
    status = exc.status_code
    if status == 404:
        detail = f"no route {request.url.path}; check the URL and the API base"
    elif status == 405:
        allowed = _allowed_methods(request)
        headers = {**dict(exc.headers or {}), "Allow": ", ".join(allowed)}
        detail = f"method {request.method} is not allowed on {request.url.path}; use " + (
            " or ".join(m for m in allowed if m != "HEAD")
        )
        return problem_response(Problem(405, detail, headers=headers))
    else:
        detail = exc.detail or "request refused"
    return problem_response(Problem(status, detail, headers=dict(exc.headers or {})))


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
    return problem_response(Problem(500, "the emulator failed to handle this request; see its log"))


def build_routes() -> list[BaseRoute]:
    """Every route, explicit REST prefixes first."""
    from podbook.emulator import broker
    from podbook.emulator.loadbalancer import routes as loadbalancer
    from podbook.emulator.queue_openapi import QUEUE_OPENAPI_PATH, serve_queue_openapi
    from podbook.emulator.routes import billing, rest_routes

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route(QUEUE_OPENAPI_PATH, serve_queue_openapi, methods=["GET"]),
        *broker.routes(),
        *loadbalancer.routes(),
        *rest_routes(),
        *billing.routes(),
    ]


def create_app(settings: EmulatorSettings, store: Store | None = None) -> Starlette:
    """Build the emulator application over ``settings`` (opens the SQLite file)."""
    store = store or Store(settings.db_path)
    seed_accounts(store, settings)
    emulator = Emulator(
        settings=settings,
        store=store,
        limiter=RateLimiter(settings.quotas),
        views=PodViews(settings),
    )
    queue = install_broker(emulator, store, settings.broker)
    install_billing(store, emulator.clock, queue)

    runtime = None
    if settings.runtime == "local":
        from podbook.emulator.podruntime.reconciler import LocalRuntime

        runtime = emulator.extras["runtime"] = LocalRuntime(emulator)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        queue.start(settings.url)
        if runtime is not None:
            runtime.start()
        try:
            yield
        finally:
            if runtime is not None:
                await runtime.stop()
            await queue.stop()
            store.close()

    app = Starlette(
        routes=build_routes(),
        middleware=[Middleware(BodyLimit)],
        exception_handlers={HTTPException: _http_exception, Exception: _internal_error},
        lifespan=lifespan,
    )
    app.state.emulator = emulator
    return app
