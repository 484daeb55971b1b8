"""WSGI apps for the load-balancing tests: ``app`` (with ``/ping``) and ``no_ping``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

StartResponse = Callable[..., Any]


def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """``GET /ping`` answers 200; anything else echoes the method, path and body."""
    if environ["PATH_INFO"] == "/ping":
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b'{"status": "healthy"}']
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length).decode()
    answer = {"method": environ["REQUEST_METHOD"], "path": environ["PATH_INFO"], "body": body}
    start_response("200 OK", [("Content-Type", "application/json"), ("X-Wsgi", "yes")])
    return [json.dumps(answer).encode()]


def no_ping(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """An app with no health route: every path answers 404."""
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"nothing here"]
