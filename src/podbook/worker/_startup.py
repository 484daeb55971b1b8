"""What both worker commands (``podbook worker`` for a handler and ``--lb`` for an app) do as
they start: find the endpoint's worker key, hide the user's key from the worker's code, set
up the log lines, and say a failure in one line."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

logger = logging.getLogger("podbook.worker")

USER_KEY_VARIABLES = ("RUNPOD_API_KEY", "PODBOOK_API_KEY")
"""Removed from the worker's environment once its worker key is known."""


def _client(url: str | None) -> Any:
    from podbook.client import Client

    return Client(url=url) if url else Client()


def fail(command: str, message: object, code: int = 2) -> int:
    """Print ``podbook COMMAND: message`` on stderr; return ``code``."""
    print(f"podbook {command}: {message}", file=sys.stderr)
    return code


def key_for(endpoint: str, url: str | None) -> tuple[str, str]:
    """``(queue_url, worker key)`` fetched with the user's client."""
    from podbook.worker._keys import fetch_worker_key, require_local

    with _client(url) as client:
        require_local(client, "podbook worker")
        return client.settings.queue_url, fetch_worker_key(client, endpoint)


def explain_not_found(endpoint: str, *, lb: bool = False) -> str:
    """How to create ``endpoint`` (a queue endpoint, or a load-balancing one with ``lb``)."""
    if lb:
        how = f'POST /v2/serverless with {{"name": "{endpoint}", "type": "LOAD_BALANCER"}}'
    else:
        how = f"POST /v2/serverless, `podbook emulator --endpoint {endpoint}`"
    return f"endpoint {endpoint!r} does not exist; create it ({how}) or check the id"


def endpoint_credentials(endpoint: str, url: str | None, *, lb: bool = False) -> tuple[str, str]:
    """``(queue_url, worker key)`` for ``--endpoint``: ``RUNPOD_AI_API_KEY`` and ``--url``
    when both are given, else what the user's client fetches from the local emulator."""
    from podbook.errors import ConfigError, NotFound

    key = os.environ.get("RUNPOD_AI_API_KEY", "").strip()
    if not key or not url:
        try:
            url_found, fetched = key_for(endpoint, url)
        except NotFound:
            raise ConfigError(explain_not_found(endpoint, lb=lb)) from None
        url = url or url_found
        key = key or fetched
    return url, key


def hide_user_key(worker_key: str) -> None:
    """The worker's code sees the worker key (as a runpod worker does), never the user's."""
    os.environ["RUNPOD_AI_API_KEY"] = worker_key
    for name in USER_KEY_VARIABLES:
        os.environ.pop(name, None)


def configure_logging(verbose: bool) -> None:
    """Worker log lines on stderr (``-v``: every job, or every request of an app)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s podbook worker: %(message)s", "%H:%M:%S"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
