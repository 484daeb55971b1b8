"""Free loopback ports for the public side of a local-runtime pod's ports."""

from __future__ import annotations

import contextlib
import socket


def free_ports(host: str, count: int) -> list[int]:
    """``count`` distinct ports free on ``host`` right now (each bound once, then released).

    The ports are held together while they are chosen, so they differ; another program could
    take one before the pod binds it (the window is short: the pod binds them when it starts).
    """
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.bind((host, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()
