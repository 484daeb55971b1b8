"""Where a load-balancing worker listens: the service's ``PORT``, ``PORT_HEALTH`` and
``HEALTH_CHECK_PATH`` variables, on loopback.

On the service ``PORT`` defaults to 80; locally an unset ``PORT`` means a free port chosen by
the system. ``PORT_HEALTH`` defaults to ``PORT``; when it differs, the same app is served on
both ports (its health route answers on either). ``HEALTH_CHECK_PATH`` defaults to ``/ping``.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass

from podbook.api.endpoints import LB_HEALTH_PATH
from podbook.errors import ConfigError

__all__ = ["LOOPBACK", "ListenPlan", "bind_loopback"]

LOOPBACK = "127.0.0.1"


def _port(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise ConfigError(f"{name}={raw!r} is not a TCP port (1-65535); unset it for a free port")
    return int(raw)


@dataclass(frozen=True)
class ListenPlan:
    """The ports to listen on (0: any free port) and the health route."""

    port: int = 0
    health_port: int | None = None
    """None: the health route is served on ``port``."""
    health_path: str = LB_HEALTH_PATH

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ListenPlan:
        """The plan the environment variables describe."""
        port = _port(env, "PORT") or 0
        health_port = _port(env, "PORT_HEALTH")
        path = env.get("HEALTH_CHECK_PATH", "").strip() or LB_HEALTH_PATH
        if not path.startswith("/"):
            raise ConfigError(f"HEALTH_CHECK_PATH={path!r} must start with '/' (e.g. /ping)")
        return cls(port, None if health_port == port else health_port, path)

    def bind(self) -> list[socket.socket]:
        """The listening sockets: the app's port first, then the health port if separate."""
        sockets = [bind_loopback(self.port, "PORT")]
        if self.health_port is not None:
            try:
                sockets.append(bind_loopback(self.health_port, "PORT_HEALTH"))
            except ConfigError:
                sockets[0].close()
                raise
        return sockets


def bind_loopback(port: int, name: str) -> socket.socket:
    """A listening socket on loopback ``port`` (0: a free one); ``ConfigError`` when taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {LOOPBACK}:{port} ({name}): {exc.strerror}; choose another "
            f"{name} or unset it"
        ) from None
    sock.listen(2048)
    return sock
