"""The local runtime's sandbox mode (``--sandbox bwrap``): a pod's processes in its own box.

:func:`open_box` makes the box of one pod boot (``box.py``): the pod's mounts at their own
paths, its ``n/http`` and ``n/tcp`` ports (but ``22/tcp``, served by the emulator's SSH server)
relayed from their public port to the private one, and the emulator's API reachable from the
pod at the very address it has on the host (``PODBOOK_API_URL``), through a Unix socket the
emulator serves in the pod's ``/run/podbook``. A cluster member's box shares the host's
network instead (its cluster address is a loopback address there, and so are the API and the
other members); its servers listen on their private ports at its cluster address.
:func:`boxed_env` rewrites the environment for the paths the pod now really has.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from podbook.emulator.podruntime.box import Box
from podbook.emulator.podruntime.boxplan import BoxPlan
from podbook.emulator.podruntime.sandbox import Sandbox

log = logging.getLogger("podbook.emulator.podruntime")

RUN_DIR = "/run/podbook"
"""Where the pod sees the emulator's sockets and notes for it."""

_PIPE = 1 << 16


@dataclass
class OpenBox:
    """A pod boot's box and what the emulator serves it."""

    box: Box
    run: Path
    bridge: asyncio.AbstractServer | None

    async def close(self) -> None:
        """End the box (its processes), the API bridge and the run folder."""
        await asyncio.to_thread(self.box.stop)
        if self.bridge is not None:
            self.bridge.close()
            with contextlib.suppress(Exception):
                await self.bridge.wait_closed()
        shutil.rmtree(self.run, ignore_errors=True)


def boxed_env(sandbox: Sandbox) -> dict[str, str]:
    """The pod's environment with the paths it has in its box (``HOME=/root``, ``/tmp`` its
    own). The process runtime's mapped names are not set: the mounts are at their own paths
    (``${RUNPOD_MOUNT_DATA:-/data}`` is ``/data``, as on the service) and HTTP servers listen
    on their private port (no ``RUNPOD_HTTP_PORT_<n>``; ``RUNPOD_TCP_PORT_<n>`` stays the
    public port, as on the service)."""
    env = dict(sandbox.env)
    env.pop("TMPDIR", None)
    env["HOME"] = "/root"
    env["RUNPOD_WORKSPACE"] = sandbox.mount_workdir()
    env["RUNPOD_CONTAINER_DISK"] = "/"
    for name in [n for n in env if n.startswith(("RUNPOD_MOUNT_", "RUNPOD_HTTP_PORT_"))]:
        del env[name]
    return env


async def _carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while chunk := await reader.read(_PIPE):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()


async def _bridge_to(host: str, port: int, reader: Any, writer: Any) -> None:
    try:
        up_r, up_w = await asyncio.open_connection(host, port)
    except OSError:
        writer.close()
        return
    try:
        await asyncio.gather(_carry(reader, up_w), _carry(up_r, writer))
    finally:
        up_w.close()
        writer.close()


async def open_box(
    record: dict[str, Any],
    sandbox: Sandbox,
    *,
    api_url: str,
    hidden: list[Path],
    hidden_files: list[Path],
    shared: tuple[Path, ...] = (),
    preexec: Any,
) -> OpenBox:
    """Make the box of this boot of ``record`` (see the module docstring); ``shared``: host
    folders shown read-only at their own paths (``--share-ro``)."""
    run = Path(tempfile.mkdtemp(prefix="pb-"))  # short: a Unix socket path has 108 bytes
    bridges: dict[int, str] = {}
    bridge = None
    cluster_ip = (record.get("cluster") or {}).get("ip")  # members share the host's network
    target = urlsplit(api_url) if api_url and not cluster_ip else None
    if target is not None and target.hostname and target.port:
        host, port = target.hostname, target.port

        async def serve(reader: Any, writer: Any) -> None:
            await _bridge_to(host, port, reader, writer)

        bridge = await asyncio.start_unix_server(serve, path=str(run / "api.sock"))
        bridges[port] = f"{RUN_DIR}/api.sock"
    relays = {}
    for spec, public in (record.get("portMap") or {}).items():
        number, _, kind = str(spec).partition("/")
        if kind in ("http", "tcp") and spec != "22/tcp" and number.isdigit():
            relays[int(public)] = int(number)
    plan = BoxPlan(
        pod_id=record["id"],
        container=sandbox.root / "container",
        mounts=dict(sandbox.mounts),
        hidden=tuple(hidden),
        hidden_files=tuple(hidden_files),
        extra_ro=tuple(shared),
        workdir=sandbox.mount_workdir(),
        run=run,
        own_network=not cluster_ip,
    )
    try:
        box = await asyncio.to_thread(
            Box.start,
            plan,
            relays=relays,
            bridges=bridges,
            preexec=preexec,
            private_host=cluster_ip or "127.0.0.1",
        )
    except BaseException:
        if bridge is not None:
            bridge.close()
        shutil.rmtree(run, ignore_errors=True)
        raise
    log.info("box of %s: bwrap pid %d, run folder %s", record["id"], box.pid, run)
    return OpenBox(box=box, run=run, bridge=bridge)
