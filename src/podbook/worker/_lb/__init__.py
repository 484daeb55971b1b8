"""Load-balancing workers: the user's own ASGI or WSGI app, served by uvicorn on loopback and
registered with the local emulator's load balancer.

``apps`` (loading the app, ASGI or WSGI), ``listen`` (the ``PORT`` / ``PORT_HEALTH`` /
``HEALTH_CHECK_PATH`` variables and the sockets), ``registration`` (joining and leaving the
endpoint's pool), ``server`` (uvicorn plus registration), ``background`` (``serve_app`` from a
notebook), ``command`` (``podbook worker --lb``). See ``docs/load-balancing.md``.
"""

from __future__ import annotations

from podbook.worker._lb.background import ServedApp, serve_app

__all__ = ["ServedApp", "serve_app"]
