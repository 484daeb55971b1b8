"""The local emulator of the cloud's interface: a Starlette app served by uvicorn.

``podbook emulator`` (see :mod:`podbook.cli`) runs it; :func:`create_app` builds the ASGI app
from :class:`EmulatorSettings` for embedding or tests. Layout: ``app`` (routes and error
handling), ``context`` (auth, rate limit, problem+json around every handler), ``store``
(SQLite with an in-memory write-through cache), ``lifecycle`` (statuses from timestamps, the
action table), ``pods``/``clusters``/``templates``/``placement`` (domain rules), ``routes/*``
(HTTP handlers), ``server`` (uvicorn, announcement files), ``catalog_data`` (built-in catalog).
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "EmulatorSettings"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from podbook.emulator.app import create_app

        return create_app
    if name == "EmulatorSettings":
        from podbook.emulator.settings import EmulatorSettings

        return EmulatorSettings
    raise AttributeError(f"module 'podbook.emulator' has no attribute {name!r}")
