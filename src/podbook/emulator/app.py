"""The emulator's ASGI application.

One port serves every base: REST v2 under explicit prefixes (``/v2/pods``, ``/v2/clusters``,
``/v2/catalog``, ``/v2/account``, ``/v2/registries``, ``/v2/templates``), REST v1
(``/v1/containerregistryauth/{id}``), ``/v2/serverless`` (queue endpoints), then the queue
under ``/v2/{endpoint_id}/...`` (client and worker routes over :mod:`podbook.emulator.broker`),
which therefore must be mounted after the explicit prefixes, and ``/lb/{endpoint_id}/...``
(load-balancing endpoints, passed through to the user's own workers). ``GET /healthz`` needs
no key.
Request bodies over their route's limit are refused (413) by
:class:`~podbook.emulator.bodylimit.BodyLimit` before any handler reads them. Errors become
answers in one place, the app's exception handlers (:mod:`podbook.emulator.routes.errors`):
every REST error is problem+json, unknown routes (404, 405) and internal errors (500, without
a traceback) included; queue errors are ``{"error": ...}`` as the service answers them.
The routes themselves are :mod:`podbook.emulator.routes`.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from podbook.emulator.billing.ledger import install as install_billing
from podbook.emulator.bodylimit import BodyLimit
from podbook.emulator.broker import install as install_broker
from podbook.emulator.context import Emulator
from podbook.emulator.pods import PodViews
from podbook.emulator.ratelimit import RateLimiter
from podbook.emulator.routes.errors import EXCEPTION_HANDLERS
from podbook.emulator.settings import DEFAULT_ACCOUNT_ID, EmulatorSettings
from podbook.emulator.store import Store
from podbook.emulator.templates import normalize_template


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


def build_routes() -> list[BaseRoute]:
    """Every route, in matching order (see :func:`podbook.emulator.routes.build_routes`)."""
    from podbook.emulator.routes import build_routes as every_route

    return every_route()


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
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    app.state.emulator = emulator
    return app
