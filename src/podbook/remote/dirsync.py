"""One-way sync of a local folder to a pod: :func:`sync`, and :func:`watch` to keep it synced.

What moves: a local file moves when the remote folder has no file at its path, or one whose
size or modification time (whole seconds) differs. After each upload the remote file's
modification time is set to the local one, so a second sync with nothing changed moves
nothing. (A change that keeps the size and happens within the same second as the last sync's
copy is not seen; touch the file, or push it.) Empty local folders are created too.

With ``delete``, remote files and folders the local folder does not have are removed, except
ignored ones: what the rules below skip is neither sent nor deleted.

Skipped (gitignore syntax, through ``pathspec``): :data:`DEFAULT_IGNORES` (``.git``,
``__pycache__``, ``.ipynb_checkpoints``, ``.venv``/``venv``, podbook's own part files), every
folder holding a ``pyvenv.cfg`` (a virtualenv by any name), then the lines of a
``.podbookignore`` file at the top of the local folder, which may add patterns or take a
default back with ``!`` (``!.git/``).

Speed: the remote tree is read with parallel SFTP ``readdir`` requests (each returns up to a
hundred names with their sizes and times; no request per file) and the local one with
``os.scandir``, so a sync that finds nothing to do costs a few dozen round trips whatever the
number of files.
"""

from __future__ import annotations

import os
import posixpath
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncssh
import pathspec

from podbook.remote.files import (
    META_SUFFIX,
    PART_SUFFIX,
    LocalTree,
    _gather,
    _local_item,
    _make_parents,
    _remote_kind,
    _Tally,
    make_remote_dirs,
    move_items,
    remote_path,
    run_transfer,
    scan_local,
    scan_remote,
)
from podbook.remote.progress import Meter, ProgressCallback, TransferSummary
from podbook.remote.ssh import PodConnection, RemoteError, Target, using

if TYPE_CHECKING:
    from podbook.client import Client
    from podbook.remote.keys import SshKeyPair

__all__ = [
    "DEFAULT_IGNORES",
    "IGNORE_FILE",
    "IgnoreRules",
    "SyncPlan",
    "sync",
    "watch",
]

IGNORE_FILE = ".podbookignore"
"""The file of extra ignore rules at the top of the local folder (gitignore syntax)."""

DEFAULT_IGNORES = (
    ".git/",
    ".hg/",
    ".svn/",
    "__pycache__/",
    ".ipynb_checkpoints/",
    ".venv/",
    "venv/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".DS_Store",
    f"*{PART_SUFFIX}",
    f"*{META_SUFFIX}",
)
"""Always skipped, unless ``.podbookignore`` takes one back with ``!``."""


class IgnoreRules:
    """The rules a sync skips paths by: :data:`DEFAULT_IGNORES`, virtualenv folders (those
    with a ``pyvenv.cfg``) and the local folder's ``.podbookignore``."""

    def __init__(self, lines: Iterable[str] = ()) -> None:
        self.lines = [*DEFAULT_IGNORES, *lines]
        self._spec = pathspec.GitIgnoreSpec.from_lines(self.lines)
        self.virtualenvs: set[str] = set()
        """Local folders skipped as virtualenvs (their remote namesakes are left alone too)."""

    @classmethod
    def for_folder(cls, folder: Path, extra: Iterable[str] = ()) -> IgnoreRules:
        """The rules of ``folder``: defaults, its ``.podbookignore`` (if any), then ``extra``."""
        try:
            text = (folder / IGNORE_FILE).read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        except (OSError, UnicodeDecodeError) as exc:
            raise RemoteError(
                f"cannot read {folder / IGNORE_FILE}: {exc}", reason="local"
            ) from None
        return cls([*text.splitlines(), *extra])

    def skips(self, rel: str, is_dir: bool = False) -> bool:
        """True when the relative POSIX path ``rel`` is ignored."""
        return self._spec.match_file(rel + "/" if is_dir else rel)

    def skips_local_dir(self, rel: str, path: str) -> bool:
        """True for an ignored local folder, or a virtualenv (it holds ``pyvenv.cfg``)."""
        if self.skips(rel, True):
            return True
        if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
            self.virtualenvs.add(rel)
            return True
        return False

    def skips_remote(self, rel: str, is_dir: bool) -> bool:
        """True for an ignored remote path (the rules, and the local virtualenvs' names)."""
        return self.skips(rel, is_dir) or (is_dir and rel in self.virtualenvs)


@dataclass(frozen=True)
class SyncPlan:
    """What a sync will do (relative paths): send, create, delete, and leave alone."""

    send: tuple[str, ...]
    """Local files to upload (missing there, or another size or time)."""
    mkdirs: tuple[str, ...]
    """Local folders the remote side lacks."""
    replace: tuple[str, ...]
    """Remote files where the local side has a folder (removed first)."""
    conflicts: tuple[str, ...]
    """Remote folders where the local side has a file (removed only with ``delete``)."""
    delete_files: tuple[str, ...]
    """Remote files the local side lacks (``delete``), outside :attr:`delete_dirs`."""
    delete_dirs: tuple[str, ...]
    """Remote folders the local side lacks (``delete``), the topmost of each subtree."""
    unchanged: int

    @property
    def empty(self) -> bool:
        """True when there is nothing to do."""
        return not (
            self.send or self.mkdirs or self.replace or self.delete_files or self.delete_dirs
        )


def plan(
    local: LocalTree,
    remote_files: dict[str, tuple[int, float, int]],
    remote_dirs: Iterable[str],
    *,
    delete: bool,
) -> SyncPlan:
    """Compare the trees (see the module for the rules)."""
    there_dirs = set(remote_dirs)
    here_dirs = set(local.dirs)
    send = []
    unchanged = 0
    for rel, info in local.files.items():
        there = remote_files.get(rel)
        if there is not None and there[0] == info.st_size and int(there[1]) == int(info.st_mtime):
            unchanged += 1
        else:
            send.append(rel)
    gone_dirs = there_dirs - here_dirs
    delete_files: list[str] = []
    delete_dirs: list[str] = []
    if delete:
        delete_files = sorted(
            rel
            for rel in remote_files
            if rel not in local.files
            and rel not in here_dirs
            and posixpath.dirname(rel) not in gone_dirs
        )
        delete_dirs = _topmost(gone_dirs)
    return SyncPlan(
        send=tuple(sorted(send)),
        mkdirs=tuple(sorted(here_dirs - there_dirs)),
        replace=tuple(sorted(rel for rel in here_dirs if rel in remote_files)),
        conflicts=tuple(sorted(rel for rel in local.files if rel in there_dirs)),
        delete_files=tuple(delete_files),
        delete_dirs=tuple(delete_dirs),
        unchanged=unchanged,
    )


def _topmost(dirs: Iterable[str]) -> list[str]:
    """``dirs`` without those inside another of them."""
    chosen: list[str] = []
    for d in sorted(dirs):
        if not any(d.startswith(c + "/") for c in chosen):
            chosen.append(d)
    return chosen


# ---------------------------------------------------------------- sync


def sync(
    target: Target,
    local_dir: str | os.PathLike[str],
    remote_dir: str | None = None,
    *,
    delete: bool = False,
    client: Client | None = None,
    key: SshKeyPair | str | Path | None = None,
    progress: ProgressCallback | None = None,
    ignore: Iterable[str] = (),
) -> TransferSummary:
    """Make the pod's ``remote_dir`` hold what the local folder ``local_dir`` holds.

    ``remote_dir`` names the remote folder itself (created when missing); default: the local
    folder's name in the pod's working directory. ``ignore`` adds patterns after the
    ``.podbookignore`` ones. Returns a summary whose ``skipped`` counts unchanged files and
    ``deleted`` what ``delete`` removed (see the module for the rules).
    """
    folder = Path(local_dir)
    if not folder.is_dir():
        raise RemoteError(f"{str(folder)!r} is not a local folder", reason="local")
    rules = IgnoreRules.for_folder(folder, ignore)
    with using(target, client=client, key=key) as conn:
        return _sync_call(conn, folder, remote_dir, rules, delete, progress)


def _sync_call(
    conn: PodConnection,
    folder: Path,
    remote_dir: str | None,
    rules: IgnoreRules,
    delete: bool,
    progress: ProgressCallback | None,
) -> TransferSummary:
    return run_transfer(
        conn,
        "sync",
        progress,
        lambda meter: _sync(conn, folder, remote_dir, rules, delete, meter),
    )


async def _sync(
    conn: PodConnection,
    folder: Path,
    remote_dir: str | None,
    rules: IgnoreRules,
    delete: bool,
    meter: Meter,
) -> _Tally:
    sftp = await conn.sftp()
    home = await conn.home()
    dest = remote_path(home, remote_dir or folder.resolve().name).rstrip("/") or "/"
    local = scan_local(folder, skip_dir=rules.skips_local_dir, skip_file=rules.skips)
    tally = _Tally()
    kind = await _remote_kind(sftp, dest)
    if kind == "file":
        raise RemoteError(
            f"pod {conn.pod_id}: {dest} is a file, not a folder",
            reason="remote",
            pod_id=conn.pod_id,
        )
    if kind is None:
        tally.folders += await _make_parents(sftp, dest, home)
        remote_files: dict[str, tuple[int, float, int]] = {}
        remote_dirs: list[str] = []
    else:
        tree = await scan_remote(sftp, dest, skip=rules.skips_remote)
        remote_files, remote_dirs = tree.files, tree.dirs
    todo = plan(local, remote_files, remote_dirs, delete=delete)
    tally.skipped = todo.unchanged
    if todo.conflicts and not delete:
        raise RemoteError(
            f"pod {conn.pod_id}: {dest}/{todo.conflicts[0]} is a folder there and a file here; "
            "sync with delete to replace it",
            reason="remote",
            pod_id=conn.pod_id,
        )
    for rel in todo.replace:  # a remote file where a local folder goes
        await sftp.remove(f"{dest}/{rel}")
    if delete:
        tally.deleted += await _delete(sftp, dest, todo)
    tally.folders += await make_remote_dirs(sftp, [f"{dest}/{d}" for d in todo.mkdirs])
    items = [_local_item(folder / rel, f"{dest}/{rel}", local.files[rel], rel) for rel in todo.send]
    await move_items(sftp, "push", items, meter, tally, conn.pod_id)
    return tally


async def _delete(sftp: asyncssh.SFTPClient, dest: str, todo: SyncPlan) -> int:
    async def remove_file(rel: str) -> None:
        await sftp.remove(f"{dest}/{rel}")

    async def remove_dir(rel: str) -> None:
        await sftp.rmtree(f"{dest}/{rel}")

    await _gather(remove_file(rel) for rel in todo.delete_files)
    await _gather(remove_dir(rel) for rel in todo.delete_dirs)
    return len(todo.delete_files) + len(todo.delete_dirs)


# ---------------------------------------------------------------- watch


def snapshot(folder: Path, rules: IgnoreRules) -> dict[str, tuple[int, int]]:
    """The local folder's files (relative path → size, mtime in ns), as sync sees them."""
    tree = scan_local(folder, skip_dir=rules.skips_local_dir, skip_file=rules.skips)
    state = {rel: (info.st_size, info.st_mtime_ns) for rel, info in tree.files.items()}
    state.update({rel + "/": (0, 0) for rel in tree.dirs})
    return state


def watch(
    target: Target,
    local_dir: str | os.PathLike[str],
    remote_dir: str | None = None,
    *,
    delete: bool = False,
    interval: float = 1.0,
    stop: threading.Event | None = None,
    on_sync: Callable[[TransferSummary], Any] | None = None,
    client: Client | None = None,
    key: SshKeyPair | str | Path | None = None,
    progress: ProgressCallback | None = None,
    ignore: Iterable[str] = (),
) -> TransferSummary:
    """Sync now, then again whenever the local folder changes, until ``stop`` is set or the
    caller is interrupted (``KeyboardInterrupt`` ends the watch; it is not raised).

    The folder is polled every ``interval`` seconds (a scan of names, sizes and times; no
    remote request while nothing changes). ``on_sync`` gets the summary of every sync after
    the first that moved or deleted something. Returns the totals. One connection serves the
    whole watch (a :class:`~podbook.remote.ssh.PodConnection` given as ``target`` is left
    open).
    """
    folder = Path(local_dir)
    if not folder.is_dir():
        raise RemoteError(f"{str(folder)!r} is not a local folder", reason="local")
    stop = stop if stop is not None else threading.Event()
    totals: list[TransferSummary] = []
    started = time.monotonic()
    try:
        with using(target, client=client, key=key) as conn:
            rules = IgnoreRules.for_folder(folder, ignore)
            seen = snapshot(folder, rules)
            totals.append(_sync_call(conn, folder, remote_dir, rules, delete, progress))
            while not stop.wait(interval):
                rules = IgnoreRules.for_folder(folder, ignore)
                now = snapshot(folder, rules)
                if now == seen:
                    continue
                seen = now
                summary = _sync_call(conn, folder, remote_dir, rules, delete, progress)
                totals.append(summary)
                if on_sync is not None and (summary.files or summary.deleted):
                    on_sync(summary)
    except KeyboardInterrupt:
        pass
    return _add(totals, time.monotonic() - started)


def _add(summaries: list[TransferSummary], seconds: float) -> TransferSummary:
    return TransferSummary(
        direction="sync",
        files=sum(s.files for s in summaries),
        bytes=sum(s.bytes for s in summaries),
        seconds=seconds,
        skipped=summaries[-1].skipped if summaries else 0,
        resumed_bytes=sum(s.resumed_bytes for s in summaries),
        deleted=sum(s.deleted for s in summaries),
        folders=sum(s.folders for s in summaries),
        paths=tuple(p for s in summaries for p in s.paths),
    )
