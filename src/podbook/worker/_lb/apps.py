"""The user's HTTP app: loaded from ``app.py[:name]`` or ``package.module:name``, and told
ASGI from WSGI.

An ASGI 3 app is an ``async`` callable ``(scope, receive, send)`` (FastAPI, Starlette, any
ASGI middleware); a WSGI app a plain callable ``(environ, start_response)`` (Flask, Django's
WSGI handler), served through uvicorn's WSGI interface.
"""

from __future__ import annotations

import inspect
from typing import Any

from podbook.errors import ConfigError
from podbook.worker._handlers import HandlerSpec, import_target

__all__ = ["ASGI", "DEFAULT_APP_NAME", "WSGI", "app_interface", "load_app"]

DEFAULT_APP_NAME = "app"
ASGI = "asgi3"
WSGI = "wsgi"


def app_interface(app: Any, name: str) -> str:
    """``"asgi3"`` or ``"wsgi"`` for ``app``; ``ConfigError`` naming ``name`` otherwise."""
    if inspect.isclass(app):
        raise ConfigError(f"{name} is a class, not an app; pass an instance (e.g. {name}())")
    if not callable(app):
        raise ConfigError(
            f"{name} is of type {type(app).__name__}, not an ASGI or WSGI app; pass an app "
            "such as FastAPI() or Flask(__name__)"
        )
    call = app if inspect.isfunction(app) or inspect.ismethod(app) else type(app).__call__
    if inspect.iscoroutinefunction(call):
        return ASGI
    try:
        parameters = list(inspect.signature(app).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) == 2:
        return WSGI
    raise ConfigError(
        f"{name} is of type {type(app).__name__}, not an ASGI or WSGI app: an ASGI app is an "
        "async callable (scope, receive, send), a WSGI app a callable (environ, start_response)"
    )


def load_app(spec_text: str) -> tuple[Any, str]:
    """The app ``spec_text`` names and its interface (``ConfigError`` says what is wrong)."""
    spec = HandlerSpec.parse(spec_text, default=DEFAULT_APP_NAME)
    module = import_target(spec, "app")
    try:
        app = getattr(module, spec.function)
    except AttributeError:
        raise ConfigError(
            f"{spec.target} has no {spec.function!r}; name the app with {spec.target}:NAME"
        ) from None
    return app, app_interface(app, str(spec))
