"""Free loopback ports for the public side of a local-runtime pod's ports.

A pod's public ports are chosen when it is created and bound when its processes start, a
moment (or, on a loaded machine, seconds) later. They are taken outside the kernel's
ephemeral range (``/proc/sys/net/ipv4/ip_local_port_range``, where ``bind(port 0)`` and every
outgoing connection draw their local port): a busy machine's own connections would otherwise
take a chosen port before the pod binds it ("port already in use"). Only another program
binding that very number explicitly can still take it.
"""

from __future__ import annotations

import contextlib
import random
import socket
from pathlib import Path

PUBLIC_RANGE = (20000, 32767)
"""Where public ports are taken when the ephemeral range is Linux's default (32768-60999)."""


def _public_range() -> tuple[int, int]:
    """The widest stretch of 1024..65535 outside the ephemeral range (``PUBLIC_RANGE`` where
    the range cannot be read)."""
    try:
        low, high = (
            int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        )
    except (OSError, ValueError):
        return PUBLIC_RANGE
    below, above = (10000, low - 1), (high + 1, 65535)
    best = max((below, above), key=lambda span: span[1] - span[0])
    return best if best[1] - best[0] >= 1000 else (1024, 65535)


def free_ports(host: str, count: int) -> list[int]:
    """``count`` distinct ports free on ``host`` right now (each bound once, then released),
    outside the ephemeral range.

    The ports are held together while they are chosen, so they differ.
    """
    first, last = _public_range()
    sockets: list[socket.socket] = []
    chosen: list[int] = []
    try:
        for port in random.sample(range(first, last + 1), min(last - first + 1, 4 * count + 64)):
            if len(chosen) == count:
                break
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.bind((host, port))
            except OSError:
                sock.close()
                continue
            sockets.append(sock)
            chosen.append(port)
        while len(chosen) < count:  # a crowded range: let the kernel pick the rest
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.bind((host, 0))
            chosen.append(sock.getsockname()[1])
        return chosen
    finally:
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()
