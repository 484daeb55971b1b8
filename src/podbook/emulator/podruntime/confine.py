"""Every process a pod starts ends with the pod, whatever it does to its session or environment.

A pod's processes (its main process, its SSH sessions, its Jupyter server and kernels) are
tracked by something they cannot change:

- **cgroup** (where the emulator may create cgroup v2 groups: root on most Linux machines, or a
  delegated tree): each pod gets ``<cgroup2 mount>/podbook-<home digest>/<pod id>``, its
  processes enter it before they run the pod's code, and every descendant stays in it whatever
  it does (``setsid``, a double fork, a changed ``RUNPOD_POD_ID``). Stopping the pod kills the
  whole group (``cgroup.kill``). The groups outlive a ``kill -9`` of the emulator, so the next
  emulator on the home kills what is left in them before it starts anything.
- **the process tree recorded as it forms** (elsewhere): every :data:`RECORD_SECONDS` the runtime
  records each pod's processes (its roots and all their descendants, by pid and start time), and
  a recorded process is killed with the pod even after it left its parent, session and group.
  What remains possible there: a process that detaches (double fork, ``setsid``) *and* whose
  parent exits within one recording interval is not seen; it survives the pod. The pod
  sandbox (``bwrap``, a PID namespace) closes that.

Every child also gets ``PR_SET_PDEATHSIG`` (SIGTERM when the emulator dies), no inherited
descriptor of the emulator, and the usual umask 022 back (the emulator itself runs with 077).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path

import psutil

from podbook.emulator.podruntime.children import detach_child
from podbook.emulator.podruntime.landlock import restrictor, ruleset_hiding

log = logging.getLogger("podbook.emulator.podruntime")

TRACKING_VAR = "PODBOOK_POD_TRACKING"
"""``tree`` makes the emulator track pod processes by their recorded tree even where it could
use a cgroup (to see the fallback at work); anything else: a cgroup where one can be made."""

RECORD_SECONDS = 0.1
"""How often the fallback records each pod's process tree (one reconcile tick)."""


def cgroup2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted, if it is (``/sys/fs/cgroup`` or the hybrid
    ``/sys/fs/cgroup/unified``)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                return Path(fields[1])
    return None


class PodGroup:
    """The processes of one pod's boot: a cgroup, or the recorded tree."""

    def __init__(self, pod_id: str, cgroup: Path | None) -> None:
        self.pod_id = pod_id
        self.cgroup = cgroup
        self.recorded: dict[int, float] = {}  # pid → create time (the fallback)
        self.roots: Callable[[], list[int]] = list
        self.ruleset: int | None = None  # Landlock: the home out of reach (landlock.py)

    def hide(self, hidden: list[Path], allowed: list[Path]) -> bool:
        """Keep the pod's processes out of the ``hidden`` places (the emulator's home and
        database) but for ``allowed`` (blocking); False where the kernel cannot."""
        self.ruleset = ruleset_hiding(hidden, allowed)
        return self.ruleset is not None

    def preexec(self, then: Callable[[], None] | None = None) -> Callable[[], None]:
        """The ``preexec_fn`` of every process the pod starts (``then`` runs last)."""
        procs = str(self.cgroup / "cgroup.procs") if self.cgroup is not None else None
        restrict = restrictor(self.ruleset) if self.ruleset is not None else None

        def setup() -> None:  # pragma: no cover - runs in the child between fork and exec
            detach_child()
            if procs is not None:
                fd = os.open(procs, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            if restrict is not None:
                restrict()
            if then is not None:
                then()

        return setup

    def members(self) -> list[psutil.Process]:
        """The pod's live processes now."""
        if self.cgroup is not None:
            return _cgroup_members(self.cgroup)
        found = []
        for pid, started in list(self.recorded.items()):
            try:
                proc = psutil.Process(pid)
                if abs(proc.create_time() - started) < 0.01 and proc.status() != "zombie":
                    found.append(proc)
                    continue
            except psutil.Error:
                pass
            self.recorded.pop(pid, None)
        return found

    def record(self, children: dict[int, list[int]]) -> None:
        """Fallback: add the descendants of the roots and of every recorded process
        (``children``: the machine's ppid → pids map of this moment)."""
        if self.cgroup is not None:
            return
        todo = [*self.roots(), *self.recorded]
        while todo:
            pid = todo.pop()
            for child in children.get(pid, ()):
                if child not in self.recorded:
                    with contextlib.suppress(psutil.Error):
                        self.recorded[child] = psutil.Process(child).create_time()
                        todo.append(child)
        for pid in self.roots():
            if pid not in self.recorded:
                with contextlib.suppress(psutil.Error):
                    self.recorded[pid] = psutil.Process(pid).create_time()

    def signal_all(self, sig: int) -> int:
        """Send ``sig`` to every process of the pod; how many got it."""
        sent = 0
        for proc in self.members():
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)
                sent += 1
        return sent

    def kill_all(self) -> int:
        """SIGKILL every process of the pod (blocking: call it off the event loop); how many."""
        if self.cgroup is not None:
            return _kill_cgroup(self.cgroup)
        killed = 0
        for _ in range(3):  # a process forked while we kill is caught on the next round
            round_killed = self.signal_all(signal.SIGKILL)
            killed += round_killed
            if not round_killed:
                break
            for proc in self.members():
                with contextlib.suppress(psutil.Error):
                    proc.wait(0.2)
        self.recorded.clear()
        return killed


class Confinement:
    """The pod groups of one emulator home; see the module docstring."""

    def __init__(self, home: Path) -> None:
        digest = hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:16]
        self.parent: Path | None = None
        use_cgroup = os.environ.get(TRACKING_VAR, "auto") != "tree"
        mount = cgroup2_mount() if use_cgroup else None
        if mount is not None:
            parent = mount / f"podbook-{digest}"
            try:
                parent.mkdir(exist_ok=True)
                probe = parent / ".probe"
                probe.mkdir(exist_ok=True)
                probe.rmdir()
                self.parent = parent
            except OSError:
                self.parent = None

    @property
    def mode(self) -> str:
        """``cgroup`` or ``process tree`` (the fallback), for the logs and docs."""
        return "cgroup" if self.parent is not None else "process tree"

    def group(self, pod_id: str) -> PodGroup:
        """A fresh group for one boot of ``pod_id`` (a group left by an earlier boot is killed
        first)."""
        cgroup = None
        if self.parent is not None:
            cgroup = self.parent / pod_id
            if cgroup.exists():
                _kill_cgroup(cgroup)
            try:
                cgroup.mkdir(exist_ok=True)
            except OSError as exc:
                log.warning("no cgroup for pod %s (%s): tracking its process tree", pod_id, exc)
                cgroup = None
        return PodGroup(pod_id, cgroup)

    def release(self, group: PodGroup) -> None:
        """Remove an emptied pod cgroup (blocking) and drop the pod's ruleset."""
        if group.ruleset is not None:
            with contextlib.suppress(OSError):
                os.close(group.ruleset)
            group.ruleset = None
        if group.cgroup is not None:
            with contextlib.suppress(OSError):
                group.cgroup.rmdir()

    def close(self) -> None:
        """Remove this home's emptied cgroup folder (the emulator stops)."""
        if self.parent is not None:
            with contextlib.suppress(OSError):
                self.parent.rmdir()

    def kill_leftovers(self) -> int:
        """Kill what pods of an emulator that is gone left in their cgroups; how many."""
        if self.parent is None:
            return 0
        killed = 0
        for cgroup in self.parent.iterdir():
            if cgroup.is_dir():
                killed += _kill_cgroup(cgroup)
                with contextlib.suppress(OSError):
                    cgroup.rmdir()
        return killed


def process_children() -> dict[int, list[int]]:
    """The machine's ppid → pids map now (one pass over every process)."""
    children: dict[int, list[int]] = {}
    for proc in psutil.process_iter(["ppid"]):
        ppid = proc.info["ppid"]
        if ppid is not None:
            children.setdefault(ppid, []).append(proc.pid)
    return children


def _cgroup_members(cgroup: Path) -> list[psutil.Process]:
    try:
        text = (cgroup / "cgroup.procs").read_text(encoding="utf-8")
    except OSError:
        return []
    members = []
    for line in text.split():
        with contextlib.suppress(psutil.Error, ValueError):
            members.append(psutil.Process(int(line)))
    return members


def _kill_cgroup(cgroup: Path) -> int:
    """SIGKILL everything in ``cgroup`` and wait until it is empty (at most ~2 s)."""
    members = _cgroup_members(cgroup)
    if not members:
        return 0
    kill_file = cgroup / "cgroup.kill"
    try:
        kill_file.write_text("1", encoding="utf-8")
    except OSError:
        for proc in members:
            with contextlib.suppress(psutil.Error):
                proc.kill()
    for _ in range(200):
        remaining = _cgroup_members(cgroup)
        if not remaining:
            break
        for proc in remaining:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(remaining, timeout=0.01)
    return len(members)
