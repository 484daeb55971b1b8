"""What a pod sees in its bubblewrap box: the ``bwrap`` arguments of a pod (pure, no I/O but
reading the host's top-level folders).

- The host's system, read-only, as the image stand-in: every top-level entry of ``/`` (links
  kept as links) but ``/proc``, ``/dev``, ``/tmp``, ``/root``, ``/run`` and the parents of
  the pod's mount paths.
- The container disk as the root's writable parts: the box's ``/`` is the container disk
  (wiped at every container start, as before), so ``/root``, ``/tmp``, ``/var/tmp`` and any
  new top-level file or folder are the pod's own, as in a container's writable layer; the
  host's folders cover it read-only where they stand.
- The persistent mount and each network volume at their own paths (``/workspace``,
  ``/data``...), read-write, exactly as the pod record says.
- Out of view: the user's home (``HOME`` of the emulator) and the emulator's home, each
  replaced by an empty folder (a database inside one shows no placeholder there), and a
  database elsewhere, shown as an empty file; the Python the emulator runs in (its
  virtualenv and base installation) and podbook itself are shown again, read-only, at their
  own paths, so ``python`` in a pod has the user's packages; ``extra_ro`` adds more.
- Namespaces of its own: PID (the pod's processes only; the box's init reaps), network (a
  loopback private to the pod; a cluster member shares the host's, where the members' cluster
  addresses are), IPC and UTS (the hostname is the pod id).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import podbook

REPLACED = frozenset({"proc", "dev", "tmp", "root", "run", "sys"})
"""Top-level entries of ``/`` the box does not take from the host as they are."""


@dataclass(frozen=True)
class BoxPlan:
    """A pod's box: its writable folders and what is hidden."""

    pod_id: str
    container: Path
    """The container disk on the host (``root/``, ``tmp/``, ``var/tmp/`` are made in it: the
    container disk is the pod's ``/`` as SFTP shows it)."""
    mounts: dict[str, Path] = field(default_factory=dict)
    """Mount path in the pod → host folder (persistent mount, network volumes)."""
    hidden: tuple[Path, ...] = ()
    """Host folders no pod may see (the user's home, the emulator's home)."""
    hidden_files: tuple[Path, ...] = ()
    """Host files no pod may see (a database outside the emulator's home)."""
    extra_ro: tuple[Path, ...] = ()
    """More host folders shown read-only (``--share-ro``)."""
    workdir: str = "/"
    run: Path | None = None
    """A host folder shown at ``/run/podbook`` (the emulator's sockets and notes for the pod)."""
    own_network: bool = True
    """False for a cluster member: it shares the host's network, where every member's cluster
    address (``127.0.0.2``...) is, so members reach each other on any port."""


def python_paths() -> list[Path]:
    """The folders the emulator's Python needs: its prefixes and podbook's package root."""
    package_root = Path(podbook.__file__).resolve().parent.parent
    found = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    found.add(package_root)
    return sorted(found)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def top_level(host_root: Path = Path("/")) -> list[tuple[str, Path | None]]:
    """The host's top-level entries: ``(name, link target or None)``."""
    entries = []
    for entry in sorted(host_root.iterdir()):
        target = Path(os.readlink(entry)) if entry.is_symlink() else None
        entries.append((entry.name, target))
    return entries


def bwrap_args(plan: BoxPlan, entries: Iterable[tuple[str, Path | None]]) -> list[str]:
    """The ``bwrap`` options of ``plan`` (without the command)."""
    args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    args += ["--unshare-net"] if plan.own_network else []
    args += ["--unshare-uts", "--hostname", plan.pod_id[:63]]
    args += ["--bind", str(plan.container), "/"]  # what the host's system leaves: writable
    mount_tops = {Path(path).parts[1] for path in plan.mounts if len(Path(path).parts) > 1}
    for name, link in entries:
        if name in REPLACED or name in mount_tops:
            continue
        if link is not None:
            args += ["--symlink", str(link), f"/{name}"]
        else:
            args += ["--ro-bind", f"/{name}", f"/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--ro-bind", "/sys", "/sys", "--tmpfs", "/run"]
    args += ["--bind", str(plan.container / "var" / "tmp"), "/var/tmp"]  # /var is the host's
    for top in sorted(mount_tops):
        args += ["--dir", f"/{top}"]
    for path, folder in sorted(plan.mounts.items()):
        args += ["--bind", str(folder), path]
    shown = python_paths() + list(plan.extra_ro)
    covered = [Path("/tmp"), Path("/root"), Path("/var/tmp")]  # the container disk's own
    for folder in plan.hidden:
        if any(_inside(folder, Path(p)) for p in plan.mounts) or not folder.is_dir():
            continue
        if any(_inside(folder, top) for top in covered):
            continue  # already the pod's own (container disk)
        covered.append(folder)
        args += ["--tmpfs", str(folder)]
        for path in shown:
            if _inside(path, folder) and path != folder:
                args += ["--ro-bind", str(path), str(path)]
    for path in shown:  # under /root or /tmp, which the container disk replaced
        if str(path).startswith(("/root/", "/tmp/")):
            args += ["--ro-bind", str(path), str(path)]
    for file in plan.hidden_files:  # a placeholder only where the file would show: none in
        if file.exists() and not any(_inside(file, top) for top in covered):  # an empty folder
            args += ["--ro-bind", "/dev/null", str(file)]
    if plan.run is not None:
        args += ["--bind", str(plan.run), "/run/podbook"]
    args += ["--chdir", plan.workdir]
    return args
