"""Worker keys and endpoints, through the user's client (local emulator only).

A worker never holds the user's API key: the user's client asks the emulator for a worker
key scoped to one endpoint (``POST /v2/serverless/{ep}/worker-keys``), and only that key
reaches the worker. The real cloud has no such route: its workers get their key from the
platform, so these helpers refuse it with one clear line.
"""

from __future__ import annotations

from typing import Any

from podbook.errors import ConfigError, NotFound

__all__ = [
    "endpoint_exists",
    "ensure_endpoint",
    "fetch_worker_key",
    "local_endpoint",
    "require_local",
]


def require_local(client: Any, what: str) -> None:
    """``ConfigError`` when ``client`` points at the real cloud."""
    if client.settings.is_cloud:
        raise ConfigError(
            f"{what} runs handlers against the local emulator only (the cloud runs workers "
            "from a container image); set PODBOOK_LOCAL=1 or PODBOOK_URL to an emulator"
        )


def fetch_worker_key(client: Any, endpoint_id: str) -> str:
    """A fresh worker key for ``endpoint_id`` (``NotFound`` when there is no such endpoint).
    The emulator's own route: the typed client has no method for it, so it is a plain call."""
    from podbook.client import Call
    from podbook.client.resources.endpoints import ENDPOINTS

    def parse(body: Any) -> str:
        key = body.get("workerKey") if isinstance(body, dict) else None
        if not isinstance(key, str) or not key:
            raise KeyError("workerKey")
        return key

    path = ENDPOINTS.item_path(endpoint_id) + "/worker-keys"
    return client.request(Call("POST", path, parse=parse))


def _endpoint_type(client: Any, endpoint_id: str) -> str | None:
    """The type of endpoint ``endpoint_id`` (``QUEUE`` when unsaid), None when it does not
    exist."""
    try:
        endpoint = client.endpoints.get(endpoint_id)
    except NotFound:
        return None
    return endpoint.type or "QUEUE"


def endpoint_exists(client: Any, endpoint_id: str) -> bool:
    """Whether the account has an endpoint ``endpoint_id``."""
    return _endpoint_type(client, endpoint_id) is not None


def ensure_endpoint(client: Any, endpoint_id: str, *, endpoint_type: str = "QUEUE") -> str:
    """The id of endpoint ``endpoint_id``, created (named so, of ``endpoint_type``) when it
    does not exist yet; ``ConfigError`` when it exists with the other type."""
    found = _endpoint_type(client, endpoint_id)
    if found is None:
        return client.endpoints.create(name=endpoint_id, type=endpoint_type).id
    if found != endpoint_type:
        serves = "an HTTP app" if found == "LOAD_BALANCER" else "handler functions"
        wanted = "an app" if endpoint_type == "LOAD_BALANCER" else "a handler"
        raise ConfigError(
            f"endpoint {endpoint_id!r} is a {found} endpoint (it serves {serves}); "
            f"choose another name for {wanted}"
        )
    return endpoint_id


def local_endpoint(
    client: Any, endpoint: str, what: str, *, endpoint_type: str = "QUEUE", example: str = "demo"
) -> tuple[Any, bool, str]:
    """``(client, owns_client, endpoint_id)`` for serving ``endpoint`` of the local emulator
    (``what`` serves it): ``client``, or a new ``Client()`` that the caller owns (and closes),
    and the endpoint, created when missing (:func:`ensure_endpoint`). ``ValueError`` for an
    empty ``endpoint`` (``example`` names one); an owned client is closed when this fails."""
    if not isinstance(endpoint, str) or not endpoint.strip():
        raise ValueError(f"endpoint must be a non-empty endpoint id, e.g. endpoint={example!r}")
    owns_client = client is None
    if client is None:
        from podbook.client import Client

        client = Client()
    try:
        require_local(client, what)
        endpoint_id = ensure_endpoint(client, endpoint.strip(), endpoint_type=endpoint_type)
    except BaseException:
        if owns_client:
            client.close()
        raise
    return client, owns_client, endpoint_id
