"""Files both ways over a pod's SFTP (direct SSH endpoint): :func:`push` and :func:`pull`.

Paths, like ``cp``: the destination names the file or folder to write, unless it ends with
``/`` or is an existing folder, where the source goes inside it under its own name. Without a
destination, a push lands in the pod's working directory (the SFTP session's starting
directory) and a pull in this process's current directory. Relative (and ``~/``) remote paths
start in the pod's working directory. Folders the destination needs are created.

Never half-written: each file is written to ``NAME.podbook-part`` beside its destination and
renamed over ``NAME`` only once complete (``posix-rename``, atomic on the receiving side).
Its modification time is set from the source, and its permission bits too (a push sets them;
a pull creates the file with them, less the umask, as ``scp`` does).

Resumable: a file of :data:`RESUME_MIN` bytes or more first gets a sidecar
``NAME.podbook-part.json`` with the source's size and modification time. A later transfer of
the same file that finds both the part and a sidecar naming the same size and time continues
where the part ends, after checking that the last :data:`VERIFY_BYTES` before that point are
the same on both sides (SHA-256); anything else starts the file again. Writes are issued in
order with at most :data:`WINDOW` requests of :data:`BLOCK` bytes in flight, so when a run
dies without warning (``kill -9``, a lost connection) everything up to the part's size less
one window is known to be written, and that is where the next run starts; an interrupted run
(Ctrl-C, an error) records in the sidecar exactly how far it got.

Fast: blocks of up to 256 KiB, :data:`WINDOW` requests in flight per file and
:data:`PARALLEL_FILES` files at a time, over a connection that prefers AES-GCM with a 16 MiB
channel window (:mod:`podbook.remote.ssh`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import posixpath
import stat
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import asyncssh

from podbook.remote import loop
from podbook.remote.progress import Direction, Meter, ProgressCallback, TransferSummary
from podbook.remote.ssh import PodConnection, RemoteError, Target, using

if TYPE_CHECKING:
    from podbook.client import Client
    from podbook.remote.keys import SshKeyPair

__all__ = [
    "BLOCK",
    "META_SUFFIX",
    "PARALLEL_FILES",
    "PART_SUFFIX",
    "RESUME_MIN",
    "VERIFY_BYTES",
    "WINDOW",
    "pull",
    "push",
]

PART_SUFFIX = ".podbook-part"
"""What a file is called on the receiving side until it is complete."""

META_SUFFIX = ".podbook-part.json"
"""The sidecar naming the source a part file belongs to (size, modification time, progress)."""

BLOCK = 256 * 1024
"""Bytes per read or write request (less when the server announces a lower limit)."""

WINDOW = 32
"""Requests in flight per file."""

PARALLEL_FILES = 8
"""Files moved at the same time in a folder transfer."""

RESUME_MIN = 1024 * 1024
"""Files this large or larger can resume; smaller ones are simply sent again."""

VERIFY_BYTES = 64 * 1024
"""Bytes before the resume point compared (SHA-256) on both sides before resuming."""

_SMALL_LIMIT = 32 * 1024
"""The block size used with a server that announces no limits (every server takes it)."""


@dataclass
class _Item:
    """One file to move: its source and destination, size, time and mode."""

    source: str
    dest: str
    size: int
    mtime: float
    mode: int = 0o644
    name: str = ""


@dataclass
class _Tally:
    """What a transfer did (the mutable half of :class:`TransferSummary`)."""

    files: int = 0
    moved: int = 0
    resumed: int = 0
    folders: int = 0
    skipped: int = 0
    deleted: int = 0
    paths: list[str] = field(default_factory=list)

    def summary(self, direction: Direction, seconds: float) -> TransferSummary:
        return TransferSummary(
            direction=direction,
            files=self.files,
            bytes=self.moved,
            seconds=seconds,
            skipped=self.skipped,
            resumed_bytes=self.resumed,
            deleted=self.deleted,
            folders=self.folders,
            paths=tuple(self.paths),
        )


# ---------------------------------------------------------------- public functions


def push(
    target: Target,
    local: str | os.PathLike[str],
    remote: str | None = None,
    *,
    client: Client | None = None,
    key: SshKeyPair | str | Path | None = None,
    progress: ProgressCallback | None = None,
) -> TransferSummary:
    """Copy the local file or folder ``local`` to the pod (see the module for the rules).

    ``target`` is a :class:`~podbook.remote.ssh.PodConnection` (kept open), a pod record or a
    pod id (connected for this call with ``client`` and ``key``). ``progress`` receives
    :class:`~podbook.remote.progress.Progress` snapshots on this thread.
    """
    with using(target, client=client, key=key) as conn:
        return run_transfer(
            conn, "push", progress, lambda meter: _push(conn, Path(local), remote, meter)
        )


def pull(
    target: Target,
    remote: str,
    local: str | os.PathLike[str] | None = None,
    *,
    client: Client | None = None,
    key: SshKeyPair | str | Path | None = None,
    progress: ProgressCallback | None = None,
) -> TransferSummary:
    """Copy the pod's file or folder ``remote`` here (see the module for the rules)."""
    with using(target, client=client, key=key) as conn:
        where = None if local is None else Path(local)
        return run_transfer(conn, "pull", progress, lambda meter: _pull(conn, remote, where, meter))


def run_transfer(
    conn: PodConnection,
    direction: Direction,
    progress: ProgressCallback | None,
    work: Callable[[Meter], Awaitable[_Tally]],
) -> TransferSummary:
    r"""Run ``work(meter)`` on the loop (a push, pull or sync) with a meter whose snapshots
    reach ``progress`` on this thread; its summary. Failures become one-line
    :class:`~podbook.remote.ssh.RemoteError`\ s."""

    async def run(emit: loop.Emit) -> TransferSummary:
        publish = None
        if progress is not None:
            callback = progress

            def publish(snapshot: Any) -> None:
                emit(lambda: callback(snapshot))

        meter = Meter(direction, publish)
        try:
            tally = await work(meter)
        except (asyncssh.SFTPError, asyncssh.Error, OSError) as exc:
            raise _error(conn, exc) from None
        meter.finish()
        return tally.summary(direction, meter.elapsed())

    return loop.call(run)


# ---------------------------------------------------------------- paths


def remote_path(home: str, path: str | None) -> str:
    """``path`` on the pod as an absolute path (relative and ``~/`` ones start in ``home``)."""
    if not path or path in ("~", "~/"):
        return home
    if path.startswith("~/"):
        path = path[2:]
    trailing = path.endswith("/")
    joined = posixpath.normpath(posixpath.join(home, path))
    return joined + "/" if trailing and joined != "/" else joined


async def _remote_kind(sftp: asyncssh.SFTPClient, path: str) -> str | None:
    """``"dir"``, ``"file"`` (anything else that is not a folder) or ``None`` (missing)."""
    try:
        attrs = await sftp.stat(path)
    except asyncssh.SFTPNoSuchFile:
        return None
    return "dir" if _is_dir(attrs) else "file"


def _is_dir(attrs: asyncssh.SFTPAttrs) -> bool:
    if attrs.permissions is not None:
        return stat.S_ISDIR(attrs.permissions)
    return attrs.type == asyncssh.FILEXFER_TYPE_DIRECTORY


def _is_link(attrs: asyncssh.SFTPAttrs) -> bool:
    if attrs.permissions is not None:
        return stat.S_ISLNK(attrs.permissions)
    return attrs.type == asyncssh.FILEXFER_TYPE_SYMLINK


def block_sizes(sftp: asyncssh.SFTPClient) -> tuple[int, int]:
    """Read and write request sizes for this server: up to :data:`BLOCK`, within its limits."""
    limits = sftp.limits
    read = limits.max_read_len if limits.max_read_len > 16 * 1024 else _SMALL_LIMIT
    write = limits.max_write_len if limits.max_write_len > 16 * 1024 else _SMALL_LIMIT
    return min(BLOCK, read), min(BLOCK, write)


# ---------------------------------------------------------------- local trees


@dataclass
class LocalTree:
    """A local folder's files (relative POSIX path → stat) and folders (relative paths)."""

    files: dict[str, os.stat_result] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)


def scan_local(
    root: Path,
    *,
    skip_dir: Callable[[str, str], bool] | None = None,
    skip_file: Callable[[str], bool] | None = None,
) -> LocalTree:
    """Every file under ``root`` (links to files followed; links to folders not entered).

    ``skip_dir(rel, path)`` / ``skip_file(rel)`` leave out what they return True for."""
    tree = LocalTree()
    stack = [("", str(root))]
    while stack:
        rel_dir, path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError as exc:
            raise RemoteError(
                f"cannot read the folder {path}: {exc.strerror}", reason="local"
            ) from None
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if skip_dir is not None and skip_dir(rel, entry.path):
                        continue
                    tree.dirs.append(rel)
                    stack.append((rel, entry.path))
                    continue
                if entry.is_symlink() and entry.is_dir():
                    continue
                info = entry.stat()
            except OSError:
                continue  # vanished, or a dangling link
            if not stat.S_ISREG(info.st_mode):
                continue
            if skip_file is not None and skip_file(rel):
                continue
            tree.files[rel] = info
    return tree


# ---------------------------------------------------------------- remote trees


@dataclass
class RemoteTree:
    """A remote folder's files (relative path → (size, mtime seconds, permission bits)) and
    folders."""

    files: dict[str, tuple[int, float, int]] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)


async def scan_remote(
    sftp: asyncssh.SFTPClient,
    root: str,
    *,
    skip: Callable[[str, bool], bool] | None = None,
    parallel: int = 16,
) -> RemoteTree:
    """Every file under the remote folder ``root``, read with parallel ``readdir`` requests
    (one folder each, :data:`parallel` at a time; a request returns many names with their
    attributes, so there is no round trip per file). ``skip(rel, is_dir)`` leaves out what it
    returns True for (a skipped folder is not entered). Links: to files are listed with the
    target's size and time; to folders are not entered."""
    tree = RemoteTree()
    gate = asyncio.Semaphore(parallel)

    async def visit(rel_dir: str) -> None:
        path = f"{root.rstrip('/')}/{rel_dir}" if rel_dir else root
        links: list[tuple[str, str]] = []
        subdirs: list[str] = []
        async with gate:
            async for entry in sftp.scandir(path):
                name = entry.filename
                assert isinstance(name, str)
                if name in (".", ".."):
                    continue
                rel = f"{rel_dir}/{name}" if rel_dir else name
                attrs = entry.attrs
                if _is_link(attrs):
                    links.append((rel, f"{path.rstrip('/')}/{name}"))
                elif _is_dir(attrs):
                    if skip is None or not skip(rel, True):
                        subdirs.append(rel)
                elif skip is None or not skip(rel, False):
                    tree.files[rel] = _entry(attrs)
            for rel, full in links:
                with contextlib.suppress(asyncssh.SFTPError):
                    attrs = await sftp.stat(full)
                    if not _is_dir(attrs) and (skip is None or not skip(rel, False)):
                        tree.files[rel] = _entry(attrs)
        tree.dirs.extend(subdirs)
        await asyncio.gather(*(visit(sub) for sub in subdirs))

    await visit("")
    return tree


def _entry(attrs: asyncssh.SFTPAttrs) -> tuple[int, float, int]:
    """Size, modification time and permission bits of a remote file (0o644 when unknown)."""
    mode = stat.S_IMODE(attrs.permissions) if attrs.permissions is not None else 0o644
    return attrs.size or 0, float(attrs.mtime or 0), mode


async def make_remote_dirs(sftp: asyncssh.SFTPClient, paths: Iterable[str]) -> int:
    """Create the remote folders ``paths`` (absolute; parents listed before children, as a
    walk lists them), a level at a time in parallel; the number created."""
    by_depth: dict[int, list[str]] = {}
    for path in paths:
        by_depth.setdefault(path.rstrip("/").count("/"), []).append(path)
    made = 0

    async def mkdir(path: str) -> int:
        try:
            await sftp.mkdir(path)
        except asyncssh.SFTPError:
            if await _remote_kind(sftp, path) == "dir":
                return 0
            raise
        return 1

    for depth in sorted(by_depth):
        made += sum(await asyncio.gather(*(mkdir(p) for p in by_depth[depth])))
    return made


# ---------------------------------------------------------------- push


async def _push(conn: PodConnection, local: Path, remote: str | None, meter: Meter) -> _Tally:
    sftp = await conn.sftp()
    home = await conn.home()
    try:
        info = local.stat()
    except OSError as exc:
        raise RemoteError(
            f"no local file or folder {str(local)!r} ({exc.strerror})", reason="local"
        ) from None
    name = local.resolve().name
    dest = remote_path(home, remote) if remote else remote_path(home, name)
    if remote and (remote.endswith("/") or await _remote_kind(sftp, dest.rstrip("/")) == "dir"):
        dest = posixpath.join(dest.rstrip("/") or "/", name)
    dest = dest.rstrip("/") or "/"
    tally = _Tally()
    if stat.S_ISDIR(info.st_mode):
        tree = scan_local(local)
        items = [
            _local_item(local / rel, f"{dest}/{rel}", st, rel) for rel, st in tree.files.items()
        ]
        kind = await _remote_kind(sftp, dest)
        if kind == "file":
            raise RemoteError(f"pod {conn.pod_id}: {dest} is a file, not a folder", reason="remote")
        if kind is None:
            tally.folders += await _make_parents(sftp, dest, home)
        tally.folders += await make_remote_dirs(sftp, [f"{dest}/{d}" for d in tree.dirs])
    else:
        tally.folders += await _make_parents(sftp, posixpath.dirname(dest), home)
        items = [_local_item(local, dest, info, name)]
    await move_items(sftp, "push", items, meter, tally, conn.pod_id)
    return tally


async def _make_parents(sftp: asyncssh.SFTPClient, folder: str, home: str) -> int:
    """Create the remote ``folder`` and its missing parents; the number created."""
    missing: list[str] = []
    path = folder
    while path and path != "/" and await _remote_kind(sftp, path) is None:
        missing.append(path)
        path = posixpath.dirname(path)
    for path in reversed(missing):
        with contextlib.suppress(asyncssh.SFTPFailure):
            await sftp.mkdir(path)
    return len(missing)


def _local_item(path: Path, dest: str, info: os.stat_result, name: str) -> _Item:
    return _Item(
        source=str(path),
        dest=dest,
        size=info.st_size,
        mtime=info.st_mtime,
        mode=stat.S_IMODE(info.st_mode),
        name=name,
    )


async def move_items(
    sftp: asyncssh.SFTPClient,
    direction: Literal["push", "pull"],
    items: list[_Item],
    meter: Meter,
    tally: _Tally,
    pod_id: str,
) -> None:
    """Upload (``push``) or download (``pull``) ``items``, :data:`PARALLEL_FILES` at a time,
    counting into ``meter`` and ``tally``; an SFTP error names the remote path."""
    read_block, write_block = block_sizes(sftp)
    meter.files_total += len(items)
    meter.bytes_total += sum(item.size for item in items)
    meter.tick()
    gate = asyncio.Semaphore(PARALLEL_FILES)

    async def one(item: _Item) -> None:
        async with gate:
            meter.file_started(item.name)
            try:
                if direction == "push":
                    await _push_file(sftp, item, write_block, meter, tally)
                else:
                    await _pull_file(sftp, item, read_block, meter, tally)
            except asyncssh.SFTPError as exc:
                remote = item.dest if direction == "push" else item.source
                raise _sftp_error(pod_id, remote, exc) from None
            tally.files += 1
            tally.paths.append(item.name)
            meter.file_done()

    await _gather(one(item) for item in items)


async def _gather(coros: Iterable[Awaitable[None]]) -> None:
    """Run ``coros`` together; the first failure cancels the rest and is raised."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _identity(size: int, mtime: float) -> dict[str, Any]:
    return {"v": 1, "size": size, "mtime": int(mtime)}


def resume_point(part_size: int, size: int, block: int, meta: dict[str, Any]) -> int:
    """Where a part file can be continued from: the sidecar's recorded progress when it has
    one (an interrupted run wrote it), else the part's size less one window of requests (all
    that a run killed without warning may have left unwritten), in whole blocks."""
    done = meta.get("done")
    if isinstance(done, int) and 0 <= done <= min(part_size, size):
        return done
    safe = part_size - WINDOW * int(meta.get("block") or block)
    return max(0, min(safe, size) // block * block)


@dataclass
class _Part:
    """The receiving side's names of a file in transit, and its resume bookkeeping."""

    item: _Item
    block: int
    done: int = field(default=0, init=False)
    """Where the contiguous part moved so far ends (what an interruption records)."""

    @property
    def part(self) -> str:
        return self.item.dest + PART_SUFFIX

    @property
    def meta(self) -> str:
        return self.item.dest + META_SUFFIX

    @property
    def resumable(self) -> bool:
        return self.item.size >= RESUME_MIN

    @property
    def identity(self) -> dict[str, Any]:
        return {**_identity(self.item.size, self.item.mtime), "block": self.block}

    @property
    def interrupted(self) -> dict[str, Any]:
        """The resume record of an interrupted transfer: its identity and how far it got."""
        return {**self.identity, "done": self.done}


async def _push_file(
    sftp: asyncssh.SFTPClient, item: _Item, block: int, meter: Meter, tally: _Tally
) -> None:
    t = _Part(item, block)
    offset = 0
    if t.resumable:
        offset = await _remote_resume_point(sftp, t)
        if offset == 0:
            await _write_remote_json(sftp, t.meta, t.identity)
    fd = os.open(item.source, os.O_RDONLY)

    def read(position: int, count: int) -> bytes:
        data = os.pread(fd, count, position)
        if len(data) != count:
            raise RemoteError("a local file got shorter while it was being sent", reason="local")
        return data

    try:
        async with await sftp.open(t.part, "r+b" if offset else "wb", block_size=0) as handle:
            try:
                await _pipeline(
                    t,
                    offset,
                    lambda position, count: handle.write(read(position, count), position),
                    lambda position, result: None,
                    meter,
                    tally,
                )
            except BaseException:
                if t.resumable:
                    await _record_progress(_write_remote_json(sftp, t.meta, t.interrupted))
                raise
    finally:
        os.close(fd)
    attrs = asyncssh.SFTPAttrs(permissions=item.mode, atime=int(item.mtime), mtime=int(item.mtime))
    await sftp.setstat(t.part, attrs)
    await _rename(sftp, t.part, item.dest)
    if t.resumable:
        with contextlib.suppress(asyncssh.SFTPError):
            await sftp.remove(t.meta)


async def _record_progress(write: Awaitable[None]) -> None:
    """Best effort, briefly: note how far an interrupted file got (a dead link just skips it)."""
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.shield(write), 3.0)


T = TypeVar("T")


async def _pipeline(
    t: _Part,
    offset: int,
    start: Callable[[int, int], Awaitable[T]],
    finish: Callable[[int, T], None],
    meter: Meter,
    tally: _Tally,
) -> None:
    """Move the bytes of ``t`` from ``offset`` on (counted as resumed) a block at a time:
    ``start(position, count)`` for each block, in order, at most :data:`WINDOW` in flight; as
    the oldest completes, ``finish(position, result)`` runs and ``t.done`` becomes the end of
    the contiguous part done."""
    if offset:
        tally.resumed += offset
        meter.add_resumed(offset)
    t.done = offset
    size, block = t.item.size, t.block
    pending: deque[tuple[int, int, asyncio.Future[T]]] = deque()
    position = offset
    try:
        while position < size or pending:
            while position < size and len(pending) < WINDOW:
                count = min(block, size - position)
                pending.append((position, count, asyncio.ensure_future(start(position, count))))
                position += count
            first, count, request = pending[0]
            result = await request
            pending.popleft()
            finish(first, result)
            t.done = first + count
            tally.moved += count
            meter.add_bytes(count)
    finally:
        for *_, request in pending:
            request.cancel()
        if pending:
            await asyncio.gather(*(r for *_, r in pending), return_exceptions=True)


async def _remote_resume_point(sftp: asyncssh.SFTPClient, t: _Part) -> int:
    """Where the remote part of a pushed file can be continued from (0: start again)."""
    try:
        part_size = (await sftp.stat(t.part)).size or 0
        async with await sftp.open(t.meta, "rb") as handle:
            meta = json.loads(await handle.read(65536))
    except (asyncssh.SFTPError, ValueError):
        return 0

    async def read_part(start: int, count: int) -> bytes:
        async with await sftp.open(t.part, "rb") as handle:
            return await handle.read(count, start)

    return await _verified(part_size, meta, t, t.item.source, read_part)


async def _verified(
    part_size: int,
    meta: Any,
    t: _Part,
    local: str,
    read_remote: Callable[[int, int], Awaitable[bytes]],
) -> int:
    """The resume point of a part whose sidecar says ``meta`` (0 unless it names the same
    source and the :data:`VERIFY_BYTES` before that point match on both sides: the local file
    ``local``, and the remote one through ``read_remote(start, count)``)."""
    if not isinstance(meta, dict) or any(
        meta.get(k) != v for k, v in t.identity.items() if k != "block"
    ):
        return 0
    offset = resume_point(part_size, t.item.size, t.block, meta)
    if offset <= 0:
        return 0
    start = max(0, offset - VERIFY_BYTES)
    with open(local, "rb") as file:
        file.seek(start)
        mine = hashlib.sha256(file.read(offset - start)).digest()
    theirs = hashlib.sha256(await read_remote(start, offset - start)).digest()
    return offset if mine == theirs else 0


async def _write_remote_json(sftp: asyncssh.SFTPClient, path: str, data: dict[str, Any]) -> None:
    async with await sftp.open(path, "wb") as handle:
        await handle.write(json.dumps(data).encode())


async def _rename(sftp: asyncssh.SFTPClient, source: str, dest: str) -> None:
    """Rename over ``dest`` (atomically with ``posix-rename``; else remove, then rename)."""
    try:
        await sftp.posix_rename(source, dest)
    except asyncssh.SFTPOpUnsupported:
        with contextlib.suppress(asyncssh.SFTPNoSuchFile):
            await sftp.remove(dest)
        await sftp.rename(source, dest)


# ---------------------------------------------------------------- pull


async def _pull(conn: PodConnection, remote: str, local: Path | None, meter: Meter) -> _Tally:
    sftp = await conn.sftp()
    home = await conn.home()
    source = remote_path(home, remote).rstrip("/") or "/"
    try:
        attrs = await sftp.stat(source)
    except asyncssh.SFTPNoSuchFile:
        raise RemoteError(
            f"pod {conn.pod_id} has no file or folder {source} (relative paths start in {home})",
            reason="remote",
            pod_id=conn.pod_id,
        ) from None
    name = posixpath.basename(source) or "root"
    if local is None:
        dest = Path.cwd() / name
    elif str(local).endswith(os.sep) or local.is_dir():
        dest = local / name
    else:
        dest = local
    tally = _Tally()
    if _is_dir(attrs):
        if dest.exists() and not dest.is_dir():
            raise RemoteError(f"{dest} is a file, not a folder", reason="local")
        tree = await scan_remote(sftp, source, skip=_skip_partials)
        tally.folders += _make_local_dirs([dest, *(dest / d for d in tree.dirs)])
        items = [
            _Item(f"{source}/{rel}", str(dest / rel), size, mtime, mode, rel)
            for rel, (size, mtime, mode) in tree.files.items()
        ]
    else:
        tally.folders += _make_local_dirs([dest.parent])
        items = [_Item(source, str(dest), *_entry(attrs), name=name)]
    await move_items(sftp, "pull", items, meter, tally, conn.pod_id)
    return tally


def _skip_partials(rel: str, is_dir: bool) -> bool:
    return not is_dir and (rel.endswith(PART_SUFFIX) or rel.endswith(META_SUFFIX))


def _make_local_dirs(paths: Iterable[Path]) -> int:
    made = 0
    for path in paths:
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            made += 1
    return made


async def _pull_file(
    sftp: asyncssh.SFTPClient, item: _Item, block: int, meter: Meter, tally: _Tally
) -> None:
    t = _Part(item, block)
    async with await sftp.open(item.source, "rb", block_size=0) as handle:
        offset = 0
        if t.resumable:
            offset = await _local_resume_point(handle, t)
            if offset == 0:
                _write_local_json(t.meta, t.identity)

        async def read(position: int, count: int) -> bytes:
            data = await handle.read(count, position)
            while len(data) < count:  # a server may answer a read with fewer bytes
                more = await handle.read(count - len(data), position + len(data))
                if not more:
                    raise RemoteError("a remote file got shorter while it was being read")
                data += more
            return data

        flags = os.O_WRONLY | os.O_CREAT | (0 if offset else os.O_TRUNC)
        fd = os.open(t.part, flags, item.mode | 0o200)  # the source's bits, less the umask
        try:
            try:
                await _pipeline(
                    t,
                    offset,
                    read,
                    lambda position, data: os.pwrite(fd, data, position),
                    meter,
                    tally,
                )
            except BaseException:
                if t.resumable:
                    with contextlib.suppress(OSError):
                        _write_local_json(t.meta, t.interrupted)
                raise
        finally:
            os.close(fd)
    os.utime(t.part, (item.mtime, item.mtime))
    os.replace(t.part, item.dest)
    if t.resumable:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(t.meta)


async def _local_resume_point(handle: asyncssh.SFTPClientFile, t: _Part) -> int:
    """Where the local part of a pulled file can be continued from (0: start again)."""
    try:
        part_size = os.stat(t.part).st_size
        with open(t.meta, "rb") as file:
            meta = json.loads(file.read(65536))
    except (OSError, ValueError):
        return 0

    async def read_source(start: int, count: int) -> bytes:
        return await handle.read(count, start)

    return await _verified(part_size, meta, t, t.part, read_source)


def _write_local_json(path: str, data: dict[str, Any]) -> None:
    temp = path + ".tmp"
    with open(temp, "w", encoding="utf-8") as file:
        json.dump(data, file)
    os.replace(temp, path)


# ---------------------------------------------------------------- errors


def _sftp_error(pod_id: str, path: str, exc: asyncssh.SFTPError) -> RemoteError:
    """One line for an SFTP failure on ``path``."""
    reason = str(exc.reason or type(exc).__name__).rstrip(".")
    return RemoteError(f"pod {pod_id}: {path}: {reason}", reason="remote", pod_id=pod_id)


def _error(conn: PodConnection, exc: BaseException) -> RemoteError:
    """One line for an SFTP or connection failure during a transfer."""
    if isinstance(exc, RemoteError):
        return exc
    if isinstance(exc, asyncssh.SFTPError):
        return RemoteError(
            f"pod {conn.pod_id}: {exc.reason or type(exc).__name__}",
            reason="remote",
            pod_id=conn.pod_id,
        )
    if isinstance(exc, OSError) and not isinstance(exc, ConnectionError):
        where = f" {exc.filename}" if exc.filename else ""
        return RemoteError(f"local file{where}: {exc.strerror or exc}", reason="local")
    return conn._lost(exc)
