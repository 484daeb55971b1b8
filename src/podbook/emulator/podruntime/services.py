"""The services a pod's image starts: the SSH server (``ssh.py``) and Jupyter (``jupyter.py``).

As the usual images do, they follow the pod's environment: ``PUBLIC_KEY`` (set by
``startSsh``) starts SSH — direct on the public port of ``22/tcp`` when the pod exposes it,
proxy on the pod's ``ssh-proxy`` port with the pod's opaque proxy username — and
``JUPYTER_PASSWORD`` (set by ``startJupyter``) starts Jupyter on the public port of
``8888/http``. A service that cannot start leaves a one-line reason in the pod's log; the
pod runs on without it.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Callable
from typing import Any

from podbook.emulator.podruntime.sandbox import Sandbox

log = logging.getLogger("podbook.emulator.podruntime")

Record = dict[str, Any]
Say = Callable[[list[str]], None]


def _from_module(module: str, name: str) -> Any:
    """``name`` from the podruntime module ``module`` (ssh, jupyter) if it is there, else None."""
    try:
        return getattr(importlib.import_module(f"podbook.emulator.podruntime.{module}"), name)
    except (ImportError, AttributeError):
        return None


def kill_service_orphans(pod_ids: list[str]) -> int:
    """Kill what SSH sessions of these pods left when an earlier emulator was killed with
    ``kill -9`` (``ssh.kill_orphans``); how many. Jupyter's server dies with the emulator.
    With no pod there is nothing to look for (nor the SSH server's imports to pay for)."""
    if not pod_ids:
        return 0
    module = _from_module("ssh", "kill_orphans")
    return int(module(pod_ids)) if module is not None else 0


async def start_services(
    record: Record, sandbox: Sandbox, started: list[Any], say: Say, output: Say
) -> None:
    """Start the pod's SSH and Jupyter servers, adding each to ``started`` once it runs (so a
    cancelled start leaves nothing unknown behind). ``say`` gets the runtime's notes (system
    log), ``output`` what the servers print (container log)."""
    env = sandbox.env
    port_map = record.get("portMap") or {}
    # a pod created under --runtime none keeps its invented address: serve it on loopback
    host = record["publicIp"] if str(record["publicIp"]).startswith("127.") else "127.0.0.1"
    if env.get("PUBLIC_KEY"):
        keys = [line for line in env["PUBLIC_KEY"].splitlines() if line.strip()]
        server = _from_module("ssh", "PodSshServer")
        endpoints = []
        if "22/tcp" in port_map and "22/tcp" in (record.get("ports") or []):
            endpoints.append(("direct", port_map["22/tcp"], None))
        if "ssh-proxy" in port_map:
            endpoints.append(("proxy", port_map["ssh-proxy"], record["sshUser"]))
        if server is None and endpoints:
            say(["SSH is not available in this emulator build (no podruntime.ssh)"])
        for mode, port, username in endpoints if server is not None else []:
            try:
                started.append(
                    await server.start(
                        host=host,
                        port=port,
                        mode=mode,
                        authorized_keys=keys,
                        sandbox=sandbox,
                        host_key=sandbox.root / "ssh_host_key",
                        proxy_username=username,
                    )
                )
                say([f"sshd ({mode}) listening on {host}:{port}"])
            except Exception as exc:  # one line, no secrets
                say([f"SSH ({mode}) failed to start: {type(exc).__name__}: {exc}"])
    password = env.get("JUPYTER_PASSWORD")
    if password and "8888/http" in port_map:
        server = _from_module("jupyter", "PodJupyterServer")
        if server is None:
            say(["Jupyter is not available in this emulator build (no podruntime.jupyter)"])
        else:
            try:
                jupyter = await server.start(
                    host=host,
                    port=port_map["8888/http"],
                    sandbox=sandbox,
                    password=password,
                    log=lambda line: output([line]),
                )
                started.append(jupyter)
                say([f"Jupyter listening on {host}:{port_map['8888/http']}"])
            except Exception as exc:  # RuntimeError when jupyter_server is missing, among others
                say([f"Jupyter failed to start: {type(exc).__name__}: {exc}"])


async def stop_services(services: list[Any]) -> None:
    """Stop every started server (each kills what it started)."""
    for service in services:
        try:
            await service.stop()
        except Exception as exc:
            with contextlib.suppress(Exception):
                log.warning("a pod service failed to stop: %s", type(exc).__name__)
