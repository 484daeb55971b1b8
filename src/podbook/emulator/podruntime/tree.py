"""A local-runtime pod's files and environment, built into a :class:`Sandbox`.

Layout under the emulator's home (``HOME/podruntime``)::

    pods/<pod id>/container/      container disk: wiped each time the container starts
    pods/<pod id>/persistent/     the persistent mount: kept across stop/start, gone at terminate
    volumes/<volume id>/          a network volume: kept as long as the volume exists
    pods/<pod id>.owner           whose tree it is: the identity of the database holding the
    volumes/<volume id>.owner     record (``Store.identity``)

An emulator removes a tree only when the marker says it is its own and the record is gone from
its database: another database's trees in the same home are never touched (see
:func:`remove_gone_trees`).

There is no chroot. ``mounts`` maps the pod's paths (``/workspace`` …) to these directories
and the environment says so: ``RUNPOD_WORKSPACE`` is the real directory behind the pod's mount
path (the container disk when it has no mount), ``RUNPOD_MOUNT_<PATH>`` one per mount
(``/workspace`` → ``RUNPOD_MOUNT_WORKSPACE``). The working directory and ``HOME`` of the
pod's processes is ``RUNPOD_WORKSPACE``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podbook.emulator.podruntime.sandbox import Sandbox

Record = dict[str, Any]

# the host's variables a pod's processes keep (nothing secret of the emulator's)
_HOST_VARS = ("PATH", "LANG", "LC_ALL", "TZ", "TERM", "TMPDIR", "VIRTUAL_ENV")


def runtime_root(home: Path) -> Path:
    """``HOME/podruntime``: every local-runtime tree lives below it."""
    return home / "podruntime"


def pod_dir(home: Path, pod_id: str) -> Path:
    """The directory of one pod's tree."""
    return runtime_root(home) / "pods" / pod_id


def volume_dir(home: Path, volume_id: str) -> Path:
    """The directory of one network volume."""
    return runtime_root(home) / "volumes" / volume_id


def mount_env_name(path: str) -> str:
    """``/workspace`` → ``RUNPOD_MOUNT_WORKSPACE``, ``/mnt/data`` → ``RUNPOD_MOUNT_MNT_DATA``."""
    return "RUNPOD_MOUNT_" + (re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_").upper() or "ROOT")


def claim(folder: Path, owner: str) -> None:
    """Mark ``folder`` (a pod's tree or a volume) as belonging to the database ``owner``."""
    marker = folder.with_name(folder.name + ".owner")
    if not marker.exists():
        marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        marker.write_text(owner, encoding="utf-8")


def _owner_of(marker: Path) -> str | None:
    try:
        return marker.read_text(encoding="utf-8").strip()
    except OSError:
        return None


def remove_gone_trees(
    home: Path, owner: str, pod_exists: Callable[[str], bool], volume_exists: Callable[[str], bool]
) -> list[str]:
    """Delete the trees of ``owner``'s pods and volumes whose records are gone; their ids.

    Runs off the event loop (a tree can be large)."""
    removed = []
    root = runtime_root(home)
    for folder, exists in ((root / "pods", pod_exists), (root / "volumes", volume_exists)):
        if not folder.is_dir():
            continue
        for marker in folder.glob("*.owner"):
            name = marker.name[: -len(".owner")]
            if _owner_of(marker) != owner or exists(name):
                continue
            shutil.rmtree(folder / name, ignore_errors=True)
            marker.unlink(missing_ok=True)
            removed.append(name)
    return removed


def build_sandbox(
    home: Path,
    record: Record,
    *,
    wipe_container: bool,
    owner: str,
    service: dict[str, str] | None = None,
) -> Sandbox:
    """Create (or reuse) the pod's directories, marked as ``owner``'s, and return its sandbox.

    ``wipe_container`` empties the container disk first (a fresh container start).
    ``service`` adds variables the emulator sets (the pod-scoped key, its own URL) before the
    pod's own ``env``. Blocking: call it off the event loop.
    """
    root = pod_dir(home, record["id"])
    claim(root, owner)
    container = root / "container"
    if wipe_container and container.exists():
        shutil.rmtree(container, ignore_errors=True)
    container.mkdir(parents=True, exist_ok=True)
    mounts: dict[str, Path] = {}
    spec = record.get("mounts") or {}
    persistent = spec.get("persistent")
    if persistent:
        target = root / "persistent"
        target.mkdir(parents=True, exist_ok=True)
        mounts[persistent["path"]] = target
    for network in spec.get("network") or []:
        target = volume_dir(home, network["volumeId"])
        claim(target, owner)
        target.mkdir(parents=True, exist_ok=True)
        mounts[network["path"]] = target
    workdir = next(iter(mounts.values()), container)
    env = {name: os.environ[name] for name in _HOST_VARS if name in os.environ}
    env["PATH"] = pod_path(env.get("PATH"))
    env.update(service_env(record))
    env.update(service or {})
    env.update({str(k): str(v) for k, v in (record.get("env") or {}).items()})
    env["HOME"] = str(workdir)
    env["RUNPOD_WORKSPACE"] = str(workdir)
    env["RUNPOD_CONTAINER_DISK"] = str(container)
    # a container's /tmp is on its container disk: temporary files start empty at each start
    # (and stay inside what the pod may reach, see landlock.py)
    (container / "tmp").mkdir(exist_ok=True)
    env["TMPDIR"] = str(container / "tmp")
    for path, target in mounts.items():
        env[mount_env_name(path)] = str(target)
    return Sandbox(root=root, workdir=workdir, env=env, mounts=mounts, container=container)


def pod_path(host_path: str | None) -> str:
    """A pod's ``PATH``: the folder of the emulator's interpreter first (its virtualenv's
    ``bin``, whether or not the emulator was started from an activated one), so ``python``,
    ``pip`` and the tools installed there are the user's; then the host's ``PATH``."""
    first = str(Path(sys.executable).parent)
    rest = [p for p in (host_path or "/usr/local/bin:/usr/bin:/bin").split(os.pathsep) if p]
    return os.pathsep.join([first, *(p for p in rest if p != first)])


def service_env(record: Record) -> dict[str, str]:
    """The variables the service sets in a pod (see docs/local-runtime.md)."""
    gpu = record.get("gpu")
    env = {
        "RUNPOD_POD_ID": record["id"],
        "RUNPOD_POD_HOSTNAME": record["id"],
        "RUNPOD_PUBLIC_IP": record["publicIp"],
        "RUNPOD_DC_ID": str(record.get("dataCenterId") or ""),
        "RUNPOD_GPU_COUNT": str(gpu["count"] if gpu else 0),
        "RUNPOD_CPU_COUNT": str(record.get("cpu", {}).get("vcpuCount", os.cpu_count() or 1)),
    }
    port_map = record.get("portMap") or {}
    for spec in record.get("ports") or []:
        number, _, kind = spec.partition("/")
        public = port_map.get(spec)
        if public is not None:
            env[f"RUNPOD_{kind.upper()}_PORT_{number}"] = str(public)
    if "ssh-proxy" in port_map:  # emulator-specific: where its SSH proxy serves this pod
        env["PODBOOK_SSH_PROXY_PORT"] = str(port_map["ssh-proxy"])
    cluster = record.get("cluster")
    if cluster is not None and cluster.get("ip"):
        env["RUNPOD_CLUSTER_ID"] = cluster["id"]
        env["RUNPOD_CLUSTER_IP"] = cluster["ip"]
        env["RUNPOD_CLUSTER_RANK"] = str(cluster.get("rank"))
    return env
