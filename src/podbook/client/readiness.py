"""Is a RUNNING pod's service ready? Probes of what its record says: the SSH endpoint answers
with its banner, the pod's Jupyter serves its login page, a port takes a connection and
keeps it (a relay that closes it at once has nothing listening behind it).

A pod reads RUNNING once its main process starts, as on the service; its SSH server and
Jupyter come up seconds later. :func:`not_ready` tells what of ``ready`` is not there yet (one
reason each); ``client.pods.wait_for(pod, "RUNNING", ready=("ssh", "jupyter"))`` waits for
all of it. The probes use the addresses in the record, so they work the same against the
service (its proxy, its public IPs) and the emulator (loopback).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import Any

import httpx

from podbook.errors import InvalidRequest
from podbook.remote.podurl import pod_http_url

__all__ = ["READY_NAMES", "not_ready", "parse_ready"]

READY_NAMES = ("ssh", "jupyter")
"""Services ``ready`` may name, besides a port such as ``8000/http`` or ``5432/tcp``."""

PROBE_TIMEOUT = 2.0

TCP_SETTLE = 1.0
"""How long a TCP probe holds its connection open: a connection closed or reset within it
(nothing sent) reads as nothing listening. A relay in front of the pod (the emulator's
sandbox carries each public port to the pod's private one) accepts every connection and
closes it at once when nothing listens behind it; a listening server keeps it open (or
greets). A silent server that listens costs the probe this long."""


def parse_ready(ready: str | Iterable[str] | None) -> tuple[str, ...]:
    """The services of ``ready`` (``"ssh,jupyter"`` or a list), checked: ``ssh``, ``jupyter``,
    ``PORT/http``, ``PORT/tcp``; :class:`InvalidRequest` names a bad one."""
    if ready is None:
        return ()
    items = ready.split(",") if isinstance(ready, str) else list(ready)
    names = []
    for item in (str(i).strip().lower() for i in items):
        if not item:
            continue
        number, sep, kind = item.partition("/")
        if item in READY_NAMES or (sep and number.isdigit() and kind in ("http", "tcp")):
            names.append(item)
            continue
        raise InvalidRequest(
            f"ready: {item!r} is not a service; use ssh, jupyter or a port like 8000/http",
            status=400,
        )
    return tuple(dict.fromkeys(names))


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _ssh(pod: Any) -> str | None:
    ssh = _field(pod, "ssh")
    endpoint = (_field(ssh, "direct") or _field(ssh, "proxy")) if ssh is not None else None
    if endpoint is None:
        return "SSH: the pod has no SSH endpoint (expose 22/tcp and create it with startSsh)"
    host, port = _field(endpoint, "host"), _field(endpoint, "port")
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT) as sock:
            sock.settimeout(PROBE_TIMEOUT)
            if sock.recv(8).startswith(b"SSH-"):
                return None
    except OSError:
        pass
    return f"SSH: nothing answers on {host}:{port} yet"


def _http(pod: Any, port: int, path: str, what: str) -> str | None:
    url = pod_http_url(pod, port)
    if url is None:
        return f"{what}: the pod does not expose {port}/http"
    try:
        answer = httpx.get(url.rstrip("/") + path, timeout=PROBE_TIMEOUT, trust_env=False)
    except httpx.HTTPError:
        return f"{what}: nothing answers at {url} yet"
    if answer.status_code in (502, 503, 504):  # the service's proxy before the pod answers
        return f"{what}: {url} answers {answer.status_code} (starting)"
    return None


def _tcp(pod: Any, port: int) -> str | None:
    runtime = _field(pod, "runtime")
    for mapping in _field(runtime, "ports") or [] if runtime is not None else []:
        if _field(mapping, "private") == port and _field(mapping, "public"):
            host, public = _field(mapping, "ip"), _field(mapping, "public")
            if _holds(host, int(public)):
                return None
            return f"{port}/tcp: nothing listening on {host}:{public} yet"
    return f"{port}/tcp: no public mapping for it yet"


def _holds(host: str, port: int) -> bool:
    """Whether a connection to ``host:port`` is taken and kept (see :data:`TCP_SETTLE`): refused,
    or ended (EOF, reset) before :data:`TCP_SETTLE` without a byte, reads False."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT) as sock:
            sock.settimeout(TCP_SETTLE)
            try:
                return bool(sock.recv(1))  # a greeting: a server; b"": closed behind a relay
            except TimeoutError:
                return True  # held open and silent: a server waiting for its client
    except OSError:  # refused, reset
        return False


def not_ready(pod: Any, ready: Iterable[str]) -> list[str]:
    """What of ``ready`` (parsed names) is not ready on ``pod``: one line each."""
    reasons = []
    for name in ready:
        if name == "ssh":
            reason = _ssh(pod)
        elif name == "jupyter":
            reason = _http(pod, 8888, "/login", "Jupyter")
        else:
            number, _, kind = name.partition("/")
            reason = (
                _http(pod, int(number), "/", name) if kind == "http" else _tcp(pod, int(number))
            )
        if reason is not None:
            reasons.append(reason)
    return reasons
