"""``%endpoint serve APP --lb --name ID``: a notebook's ASGI/WSGI app as a load-balancing
worker.

APP names an app object in the user's namespace (``app = FastAPI()``); it is served by
uvicorn from a background thread on a free loopback port and registered with the local
emulator (:func:`podbook.worker._lb.serve_app`), the endpoint created as ``LOAD_BALANCER``
when missing. Returns the handle (``.stop()``, ``.lb_url``); unloading the extension stops it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from IPython.core.error import UsageError

from podbook.notebook.endpoints.book import JobBook
from podbook.notebook.endpoints.commands import ServeCommand

__all__ = ["endpoint_serve_app"]


def endpoint_serve_app(book: JobBook, command: ServeCommand, namespace: Mapping[str, Any]) -> Any:
    """Serve the app named by ``command.function``; print where requests go."""
    from podbook.errors import ConfigError
    from podbook.worker._lb import serve_app
    from podbook.worker._lb.apps import app_interface

    name = command.function
    if name not in namespace:
        raise UsageError(
            f"%endpoint serve: no variable named {name!r}; define the app in a cell first "
            "(e.g. app = FastAPI())."
        )
    app = namespace[name]
    try:
        app_interface(app, name)
    except ConfigError as err:
        raise UsageError(f"%endpoint serve --lb: {err}.") from None
    try:
        handle = serve_app(app, command.endpoint_id, client=book.session.client, name=name)
    except ValueError as err:
        raise UsageError(f"%endpoint serve: {err}.") from None
    book.keep_served(handle)
    print(
        f"Serving {name} on load-balancing endpoint {handle.endpoint_id} ({handle.address}); "
        f"requests go to {handle.lb_url}/... with your API key; stop it with .stop() on the "
        "returned handle."
    )
    return handle
