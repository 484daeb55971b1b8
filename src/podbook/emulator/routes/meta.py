"""The emulator's own routes, no key needed: ``GET /healthz`` and ``GET /openapi/queue.json``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

import podbook
from podbook.emulator.queue_openapi import QUEUE_OPENAPI_PATH, queue_openapi
from podbook.emulator.routes.jsonresp import json_response


async def healthz(request: Request) -> Response:
    """Liveness probe: no key needed. ``pods`` says how pods run (``runtime``: ``local`` or
    ``none``; ``sandbox``: ``bwrap`` or ``none``, with ``sandboxNote`` when ``auto`` fell
    back), so a notebook can say so."""
    settings = request.app.state.emulator.settings
    pods = {"runtime": settings.runtime, "sandbox": settings.sandbox}
    if settings.sandbox_note:
        pods["sandboxNote"] = settings.sandbox_note
    return json_response({"ok": True, "version": podbook.__version__, "pods": pods})


async def serve_queue_openapi(request: Request) -> Response:
    """``GET /openapi/queue.json``: the queue's OpenAPI document."""
    return json_response(queue_openapi())


def routes() -> list[BaseRoute]:
    """``/healthz`` and the queue's OpenAPI document."""
    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route(QUEUE_OPENAPI_PATH, serve_queue_openapi, methods=["GET"]),
    ]
