"""Serve the emulator with uvicorn and announce where it listens.

Once the socket listens, the server writes ``emulator.json`` (``url``, ``pid``, ``db``) and
``emulator.key`` (mode 0600) into the home directory, so that a client can find and use it,
and then prints ``podbook emulator listening on http://HOST:PORT`` as its first stdout line
(with the key line after it in the same write). uvicorn's access log is off: no request line, and never an ``Authorization``
value, reaches the log.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import uvicorn

from podbook.emulator.app import create_app
from podbook.emulator.broker import service_of as queue_service_of
from podbook.emulator.settings import EmulatorSettings

log = logging.getLogger("podbook.emulator")


def write_private(path: Path, text: str) -> None:
    """Atomically write ``text`` to ``path`` with mode 0600."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) only reaches this machine."""
    name = host.strip().strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    return bool(infos) and all(
        ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos
    )


def remote_bind_refusal(host: str, *, allow_remote: bool, key_chosen: bool) -> str | None:
    """Why the emulator may not listen on ``host``, or None when it may.

    A loopback address is always fine. Any other address serves other machines, which needs
    both ``--allow-remote`` and a key the operator chose (``--api-key`` or account keys in
    ``--config``) rather than one generated and printed on this console.
    """
    if is_loopback(host):
        return None
    if not allow_remote:
        return (
            f"--host {host} is not a loopback address and would serve other machines; "
            "pass --allow-remote (with --api-key KEY or account keys in --config) to allow it, "
            "or bind 127.0.0.1"
        )
    if not key_chosen:
        return (
            f"--host {host} with --allow-remote needs a key you chose: pass --api-key KEY "
            "(or account keys in --config)"
        )
    return None


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_for(host: str, port: int) -> str:
    """The base URL of a server on ``host:port``."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _AnnouncingServer(uvicorn.Server):
    """A uvicorn server that announces itself once it is listening."""

    def __init__(
        self, config: uvicorn.Config, announce: Callable[[], None], retire: Callable[[], None]
    ) -> None:
        super().__init__(config)
        self._announce = announce
        self._retire = retire

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._announce()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._retire()
        await queue_service_of(self.config.app).closing()
        await super().shutdown(sockets=sockets)


def serve(
    settings: EmulatorSettings,
    *,
    host: str,
    port: int,
    home: Path,
    print_key: bool,
) -> int:
    """Run the emulator until SIGINT/SIGTERM; returns the process exit code."""
    sock = bind_socket(host, port)
    real_port = sock.getsockname()[1]
    url = url_for(host, real_port)
    settings.url = url
    app = create_app(settings)
    info_path = home / "emulator.json"

    def announce() -> None:
        # Files first, then both stdout lines in one write: whoever sees the listening line
        # finds the key file, emulator.json and the key line already there.
        write_private(home / "emulator.key", settings.api_key + "\n")
        write_private(
            info_path,
            json.dumps({"url": url, "pid": os.getpid(), "db": str(settings.db_path)}) + "\n",
        )
        if print_key:
            key_line = (
                f"default account API key (printed once; kept in {home / 'emulator.key'}): "
                f"{settings.api_key}"
            )
        else:
            key_line = f"default account API key: see {home / 'emulator.key'}"
        sys.stdout.write(f"podbook emulator listening on {url}\n{key_line}\n")
        sys.stdout.flush()
        log.info("serving %s with state in %s", url, settings.db_path)

    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        server_header=False,
        date_header=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
        proxy_headers=False,  # nothing sits in front of it: one ASGI layer less per request
    )
    server = _AnnouncingServer(config, announce, lambda: _remove_if_ours(info_path))
    server.run(sockets=[sock])
    return 0 if server.started else 1


def _remove_if_ours(info_path: Path) -> None:
    try:
        data = json.loads(info_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if data.get("pid") == os.getpid():
        info_path.unlink(missing_ok=True)


def configure_logging() -> None:
    """Plain log lines on stderr; uvicorn's own loggers only for warnings."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("podbook", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(logging.INFO if name == "podbook" else logging.WARNING)
    logging.getLogger("uvicorn.access").disabled = True
