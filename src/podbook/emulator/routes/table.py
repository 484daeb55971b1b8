"""A module's REST routes, declared at their handlers: :class:`RouteTable`.

In the spirit of FastAPI's ``APIRouter``: ``table = RouteTable()`` at the top of a route
module, ``@table.get("/v2/pods")`` above each handler, and the app mounts ``table.routes()``
(:func:`podbook.emulator.routes.build_routes`). Routes match in the order they were
declared, so a literal path (``/v2/registries/delegations``) is declared before the
``{id}`` pattern that would also match it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.routing import BaseRoute

from podbook.emulator.routes.rest import Handler, api_route

Declare = Callable[[Handler], Handler]


@dataclass
class RouteTable:
    """Authenticated REST routes (:func:`~podbook.emulator.routes.rest.api_route`), in order."""

    entries: list[tuple[str, Handler, tuple[str, ...]]] = field(default_factory=list)

    def add(self, path: str, handler: Handler, *methods: str) -> None:
        """Declare ``handler`` for ``methods`` on ``path``, after every route declared so far."""
        self.entries.append((path, handler, methods))

    def route(self, path: str, *methods: str) -> Declare:
        """A decorator that declares its handler (returned unchanged) for ``methods``."""

        def declare(handler: Handler) -> Handler:
            self.add(path, handler, *methods)
            return handler

        return declare

    def get(self, path: str) -> Declare:
        """Declare a ``GET`` handler."""
        return self.route(path, "GET")

    def post(self, path: str) -> Declare:
        """Declare a ``POST`` handler."""
        return self.route(path, "POST")

    def put(self, path: str) -> Declare:
        """Declare a ``PUT`` handler."""
        return self.route(path, "PUT")

    def patch(self, path: str) -> Declare:
        """Declare a ``PATCH`` handler."""
        return self.route(path, "PATCH")

    def delete(self, path: str) -> Declare:
        """Declare a ``DELETE`` handler."""
        return self.route(path, "DELETE")

    def routes(self) -> list[BaseRoute]:
        """Fresh Starlette routes for every declaration, in declaration order."""
        return [api_route(path, handler, methods) for path, handler, methods in self.entries]
