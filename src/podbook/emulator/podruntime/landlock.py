"""Keep a pod's processes out of the emulator's home with Landlock (Linux 5.13 and later).

The local runtime's pods run as the emulator's user, so without more they could read what
that user can: the emulator's key files, its database (every pod's environment) and other pods'
trees. Where the kernel has Landlock, every process a pod starts restricts itself, between
fork and exec, to a ruleset built once per boot by :func:`ruleset_hiding`: the whole file system
but the emulator's home and database (wherever ``--db`` puts it), plus the pod's own tree and
its network volumes inside the home. A Landlock domain also refuses to attach to (``ptrace``)
or read the memory of processes outside it.

What it cannot do (see docs/local-runtime.md): an entry created in one of the home's parent
folders after the pod started is out of the pod's reach until its next start (the rules are
made from what those folders hold when the pod starts); everything else the user can read stays
readable, and so do other processes' ``/proc/PID/environ`` (Landlock restricts only attaching).
Without Landlock (older kernels, other systems) nothing is restricted; the emulator says so
once in its log.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_FILE_RIGHTS_BY_ABI = {1: 0b111, 3: 1 << 14, 5: 1 << 15}  # execute/write/read, truncate, ioctl
"""Rights that apply to a file (a rule on a file may grant only these), by the ABI that added
them."""
_DIR_RIGHTS_BY_ABI = {1: 0b1_1111_1111_1000, 2: 1 << 13}  # read_dir … make_sym, refer

_libc: ctypes.CDLL | None = None
if sys.platform == "linux":
    with contextlib.suppress(OSError):
        _libc = ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 where there is none."""
    if _libc is None:
        return 0
    version = _libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    return max(0, int(version))


def _rights(abi: int, table: dict[int, int]) -> int:
    return sum(bits for since, bits in table.items() if abi >= since)


def _openings(hidden: Iterable[Path], allowed: Iterable[Path]) -> Iterable[tuple[str, bool]]:
    """``(path, is_dir)`` of every place the pod may reach: each entry of the folders on the
    way to a ``hidden`` place but the ones leading to it, and the ``allowed`` folders inside a
    hidden one. Symbolic links get no rule: what they point at is governed by its own place."""
    targets = {path.resolve() for path in hidden}
    on_way = {parent for target in targets for parent in target.parents}
    for folder in sorted(on_way):
        if any(folder == t or t in folder.parents for t in targets):
            continue  # inside a hidden place: only the allowed folders below
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                path = folder / entry.name
                if path in targets or path in on_way or entry.is_symlink():
                    continue
                yield entry.path, entry.is_dir(follow_symlinks=False)
    for place in allowed:
        yield str(place.resolve()), True


_READ_DIR = 1 << 3


def ruleset_hiding(hidden: Iterable[Path], allowed: Iterable[Path]) -> int | None:
    """A Landlock ruleset (its descriptor) that grants everything but the ``hidden`` places
    (folders or files), and inside them only the ``allowed`` folders; None where the kernel
    has no Landlock. Blocking."""
    abi = abi_version()
    if abi < 1 or _libc is None:
        return None
    file_rights = _rights(abi, _FILE_RIGHTS_BY_ABI)
    handled = file_rights | _rights(abi, _DIR_RIGHTS_BY_ABI)
    attr = struct.pack("=Q", handled)
    fd = _libc.syscall(_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if fd < 0:
        return None
    # every folder may be listed (``ls /`` works; the home's names are no secret), and each
    # place the pod may reach gets every right
    places = [
        ("/", _READ_DIR),
        *((p, handled if d else file_rights) for p, d in _openings(hidden, allowed)),
    ]
    for path, rights in places:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            rule = struct.pack("=Qi", rights, target)
            _libc.syscall(_ADD_RULE, ctypes.c_int(fd), _RULE_PATH_BENEATH, rule, ctypes.c_uint32(0))
        finally:
            os.close(target)
    return int(fd)


def restrictor(ruleset: int) -> Callable[[], None]:
    """The step, run in a pod's child between fork and exec, that enters ``ruleset``."""
    libc = _libc

    def restrict() -> None:  # pragma: no cover - runs in the child between fork and exec
        if libc is None:
            return
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            # without CAP_SYS_ADMIN, Landlock needs no_new_privs (no setuid gain in the pod)
            libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))

    return restrict
