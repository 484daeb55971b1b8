"""REST routes of the emulator, grouped by resource."""

from __future__ import annotations

from starlette.routing import BaseRoute


def rest_routes() -> list[BaseRoute]:
    """Every REST v2 and v1 route, with explicit prefixes (the queue comes after them)."""
    from podbook.emulator.routes import (
        account,
        catalog,
        clusters,
        podlogs,
        pods,
        templates,
        volumes,
    )

    return [
        *pods.routes(),
        *podlogs.routes(),
        *clusters.routes(),
        *catalog.routes(),
        *account.routes(),
        *templates.routes(),
        *volumes.routes(),
    ]
