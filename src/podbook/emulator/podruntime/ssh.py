"""The SSH server of a local-runtime pod (asyncssh), in the pod's *direct* or *proxy* form.

``direct`` is the pod's own sshd behind its ``22/tcp`` mapping: full SSH. An interactive shell
(with a pty), exec, the SFTP subsystem (so modern ``scp`` and ``sftp`` work), legacy ``scp -O``,
and local port forwarding (``ssh -L``) to loopback destinations only. The user name is ``root``,
as on the service's pods (the processes still run as the emulator's user: the sandbox is not a
security boundary).

``proxy`` is the service's SSH proxy: the user name is the pod's opaque routing token
(``proxy_username``) and only an interactive shell with a terminal is given. Commands, SFTP/scp
and every kind of forwarding are refused with a one-line message naming the direct endpoint.

Both authenticate with public keys only, from ``authorized_keys`` (the account's registered
keys, i.e. the pod's ``PUBLIC_KEY``); passwords and keyboard-interactive are not offered.

Every process the server starts runs in its own session and process group, in
``sandbox.workdir`` with ``sandbox.env`` (``HOME`` = workdir) plus a marker variable
(``PODBOOK_SSH_SESSION``) that lets :meth:`PodSshServer.stop` find every descendant, even one
that left its group; ``stop()`` ends them all (SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import ipaddress
import logging
import os
import posixpath
import pty
import secrets
import shutil
import signal
import struct
import subprocess
import termios
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import asyncssh
import psutil
from asyncssh.forward import SSHForwarder

from podbook.emulator.podruntime.box import Box, BoxError
from podbook.emulator.podruntime.sandbox import Sandbox

__all__ = [
    "DIRECT_USERNAME",
    "MARKER_VAR",
    "PROXY_REFUSAL",
    "PodSshServer",
    "kill_orphans",
    "load_host_key",
]

log = logging.getLogger(__name__)

Mode = Literal["direct", "proxy"]

DIRECT_USERNAME = "root"
"""The user name the direct endpoint accepts (as the service's pods do)."""

MARKER_VAR = "PODBOOK_SSH_SESSION"
"""Environment variable set in every process the server starts (value: the server's token)."""

PROXY_REFUSAL = (
    "podbook: the SSH proxy gives an interactive shell only (no commands, scp, sftp or port "
    "forwarding); use the pod's direct SSH endpoint (ssh.direct) for those."
)
"""What the proxy answers to exec, subsystem (SFTP/scp) and forwarding requests."""

PROXY_NEEDS_TTY = (
    "podbook: the SSH proxy needs a terminal (ssh -t); for scripts use the pod's direct SSH "
    "endpoint (ssh.direct)."
)

KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL when the server stops."""

DRAIN_AFTER_EXIT = 0.5
"""Seconds a pty's remaining output is still read after its shell exited."""


def load_host_key(path: Path) -> asyncssh.SSHKey:
    """Read the ed25519 host key at ``path``, creating it (mode 0600) if missing.

    The key stays across restarts, so clients that remember it keep trusting the pod.
    """
    path = Path(path)
    if path.exists():
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        return asyncssh.read_private_key(str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    key = asyncssh.generate_private_key("ssh-ed25519")
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key.export_private_key())
    try:
        os.link(temp, path)  # the first writer wins; a concurrent start reads its key
    except FileExistsError:
        return asyncssh.read_private_key(str(path))
    finally:
        temp.unlink()
    return key


_LIVE_TOKENS: set[str] = set()
"""Markers of the servers running in this process (their processes are never orphans)."""


def kill_orphans(pod_ids: Iterable[str]) -> int:
    """SIGKILL what SSH sessions of these pods left when their emulator died (``kill -9``):
    every process of this user whose environment has :data:`MARKER_VAR` (of no server running
    in this process) and a ``RUNPOD_POD_ID`` among ``pod_ids``; returns how many.

    :meth:`PodSshServer.start` does it for its own pod, so a pod brought back after a
    ``kill -9`` of its emulator starts clean."""
    wanted = set(pod_ids)
    killed = 0
    for proc in psutil.process_iter(["pid", "environ"], ad_value=None):
        environ = proc.info["environ"] or {}
        marker = environ.get(MARKER_VAR)
        if proc.pid == os.getpid() or marker is None or marker in _LIVE_TOKENS:
            continue
        if environ.get("RUNPOD_POD_ID") in wanted:
            with contextlib.suppress(psutil.Error):
                proc.kill()
                killed += 1
    return killed


def _parse_keys(lines: list[str]) -> set[bytes]:
    """The public key blobs of OpenSSH ``authorized_keys`` entries (one entry may hold several
    lines); lines that are not keys are skipped (and counted in the log, never shown)."""
    blobs: set[bytes] = set()
    bad = 0
    for entry in lines:
        for line in entry.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                blobs.add(asyncssh.import_public_key(line).public_data)
            except (asyncssh.KeyImportError, ValueError):
                bad += 1
    if bad:
        log.warning("pod ssh: %d authorized_keys line(s) are not public keys and were skipped", bad)
    return blobs


def _is_loopback(host: str) -> bool:
    """True for ``localhost`` and any address in 127.0.0.0/8."""
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.version == 4 and address.is_loopback


def _set_winsize(fd: int, size: tuple[int, int, int, int]) -> None:
    """Set the window size of the pty ``fd`` from asyncssh's (width, height, pxw, pxh)."""
    width, height, pixwidth, pixheight = size
    if width and height:
        winsize = struct.pack("HHHH", height, width, pixwidth, pixheight)
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.TIOCSWINSZ, winsize)


def _signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to process group ``pgid``, ignoring a group that is gone (or unknown)."""
    if pgid <= 1:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


_GONE = (OSError, ConnectionError, asyncssh.Error)
"""What reading or writing a channel or pipe raises once the other side is gone."""


def _acquire_tty(name: str) -> Callable[[], None]:
    """A ``preexec_fn`` giving the child a new session whose controlling terminal is the pty
    ``name`` (opened by name: under uvloop the child's stdio is not in place yet)."""

    def preexec() -> None:  # pragma: no cover - runs in the child between fork and exec
        os.setsid()
        fd = os.open(name, os.O_RDWR)  # the first terminal a session leader opens is its own
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
        os.close(fd)

    return preexec


async def _wait_readable(fd: int) -> None:
    """Wait until ``fd`` can be read."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def _pump(fd: int, target: asyncssh.SSHWriter[bytes]) -> None:
    """Copy the non-blocking ``fd`` to the channel until EOF (or EIO: a pty hung up), with
    the channel's flow control."""
    with contextlib.suppress(*_GONE):
        while True:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                await _wait_readable(fd)
                continue
            except OSError:
                return
            if not data:
                return
            target.write(data)
            await target.drain()


async def _wait_child(child: subprocess.Popen[bytes]) -> int:
    """Wait for ``child`` without blocking the loop (a pidfd, else a thread)."""
    wait_async = getattr(child, "wait_async", None)
    if wait_async is not None:  # a process in the pod's box (box.BoxChild)
        return int(await wait_async())
    try:
        fd = os.pidfd_open(child.pid)
    except (AttributeError, OSError):
        return await asyncio.to_thread(child.wait)
    try:
        if child.poll() is None:
            await _wait_readable(fd)
    finally:
        os.close(fd)
    return child.wait()


async def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the non-blocking ``fd``."""
    while data:
        try:
            data = data[os.write(fd, data) :]
        except BlockingIOError:
            await asyncio.sleep(0.01)


class _PodSftpServer(asyncssh.SFTPServer):
    """SFTP (and legacy scp) in the pod's view of its files.

    ``/`` is the container disk (``sandbox.container``, else the sandbox root), each of ``sandbox.mounts`` appears at the path the pod sees (``/workspace``…),
    relative paths start in ``sandbox.workdir``. Real host paths inside the sandbox (what the
    shell's ``pwd`` shows) are accepted as they are.
    """

    def __init__(self, chan: asyncssh.SSHServerChannel, sandbox: Sandbox) -> None:
        root = os.path.realpath(sandbox.container or sandbox.root)
        super().__init__(chan, chroot=root)
        self._root = os.fsencode(root)
        mounts = [
            (os.fsencode(pod.rstrip("/")), os.fsencode(os.path.realpath(real)))
            for pod, real in sandbox.mounts.items()
            if pod.startswith("/") and pod.rstrip("/")
        ]
        self._mounts = sorted(mounts, key=lambda m: len(m[0]), reverse=True)
        self._by_real = sorted(mounts, key=lambda m: len(m[1]), reverse=True)
        workdir = os.fsencode(os.path.realpath(sandbox.workdir))
        tree = os.fsencode(os.path.realpath(sandbox.root))
        self._reals = [tree, self._root, workdir, *(real for _, real in mounts)]
        self._cwd = self._pod_path(workdir)

    @staticmethod
    def _under(path: bytes, base: bytes) -> bool:
        return path == base or path.startswith(base.rstrip(b"/") + b"/")

    def _pod_path(self, real: bytes) -> bytes:
        """The pod's path of the real path ``real`` (itself when outside the sandbox)."""
        for pod, base in self._by_real:
            if self._under(real, base):
                return pod + real[len(base) :]
        if real == self._root:
            return b"/"
        if self._under(real, self._root):
            return real[len(self._root) :]
        return real

    def map_path(self, path: bytes) -> bytes:
        """The real path of the path ``path`` that the client asked for."""
        if path.startswith(b"/"):
            normal = posixpath.normpath(path)
            if any(self._under(normal, base) for base in self._reals):
                return normal
        pod = posixpath.normpath(posixpath.join(self._cwd, path))
        if pod.startswith(b"//"):
            pod = b"/" + pod.lstrip(b"/")
        if not pod.startswith(b"/"):  # the workdir lies outside the sandbox tree
            return pod
        for prefix, base in self._mounts:
            if self._under(pod, prefix):
                return base + pod[len(prefix) :]
        return posixpath.join(self._root, pod.lstrip(b"/"))

    def reverse_map_path(self, path: bytes) -> bytes:
        """The pod's path of a real path, as reported to the client."""
        return self._pod_path(path)

    def exit(self) -> None:
        """End of the SFTP session: report exit status 0, as OpenSSH's sftp-server does (the
        OpenSSH ``scp`` counts a session without one as failed)."""
        if self.channel.get_subsystem() == "sftp":
            with contextlib.suppress(*_GONE):
                self.channel.exit(0)


class _Session(asyncssh.SSHServer):
    """One SSH connection: authentication and forwarding decisions."""

    def __init__(self, owner: PodSshServer) -> None:
        self._owner = owner
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        """Remember the connection so that ``stop()`` can close it."""
        self._conn = conn
        self._owner._connections.add(conn)
        self._owner.note_connections()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection."""
        if self._conn is not None:
            self._owner._connections.discard(self._conn)
            self._owner.note_connections()

    def begin_auth(self, username: str) -> bool:
        """Authentication is always required."""
        return True

    def password_auth_supported(self) -> bool:
        """Passwords are refused."""
        return False

    def kbdint_auth_supported(self) -> bool:
        """Keyboard-interactive is refused."""
        return False

    def public_key_auth_supported(self) -> bool:
        """Public keys are the only way in."""
        return True

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        """A registered key and the endpoint's user name (``root`` or the routing token)."""
        owner = self._owner
        return owner._accepts_user(username) and key.public_data in owner._keys

    def server_requested(self, listen_host: str, listen_port: int) -> bool:
        """Remote forwarding (``ssh -R``) is refused in both modes."""
        return False

    def connection_requested(
        self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
    ) -> object:
        """Local forwarding (``ssh -L``): direct mode, loopback destinations only."""
        if self._owner.mode == "proxy":
            raise asyncssh.ChannelOpenError(
                asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED, PROXY_REFUSAL
            )
        if not _is_loopback(dest_host):
            raise asyncssh.ChannelOpenError(
                asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED,
                "podbook: a local pod forwards only to loopback addresses (127.0.0.0/8)",
            )
        assert self._conn is not None
        target = "127.0.0.1" if dest_host.lower() == "localhost" else dest_host
        box = self._owner.sandbox.box
        if box is not None:  # the pod's loopback is the box's own
            return _forward_in_box(box, target, dest_port)
        return self._conn.forward_connection(target, dest_port)


async def _forward_in_box(box: Box, host: str, port: int) -> SSHForwarder:
    """``ssh -L`` to ``host:port`` as the pod reaches it (a connection the box opens)."""
    try:
        sock = await asyncio.to_thread(box.connect, host, port)
    except BoxError as exc:
        raise asyncssh.ChannelOpenError(asyncssh.OPEN_CONNECT_FAILED, str(exc)) from None
    _, peer = await asyncio.get_running_loop().create_connection(SSHForwarder, sock=sock)
    return SSHForwarder(peer)


class PodSshServer:
    """A pod's SSH server; create it with :meth:`start`, end it with :meth:`stop`."""

    def __init__(
        self,
        *,
        mode: Mode,
        sandbox: Sandbox,
        authorized_keys: list[str],
        proxy_username: str | None,
    ) -> None:
        if mode not in ("direct", "proxy"):
            raise ValueError(f"mode must be 'direct' or 'proxy', not {mode!r}")
        if mode == "proxy" and not proxy_username:
            raise ValueError("the proxy mode needs a proxy_username (the routing token)")
        self.mode: Mode = mode
        self.sandbox = sandbox
        self.proxy_username = proxy_username
        self.port = 0
        self._keys = _parse_keys(authorized_keys)
        self._token = secrets.token_hex(8)
        self.marker = (MARKER_VAR, self._token)
        """The environment entry every process of this server carries (name, value)."""
        self._server: asyncssh.SSHAcceptor | None = None
        self._connections: set[asyncssh.SSHServerConnection] = set()
        self._pgids: set[int] = set()
        self._children: list[subprocess.Popen[bytes]] = []
        self._stopped = False

    @classmethod
    async def start(
        cls,
        *,
        host: str,
        port: int,
        mode: Mode,
        authorized_keys: list[str],
        sandbox: Sandbox,
        host_key: Path,
        proxy_username: str | None = None,
    ) -> PodSshServer:
        """Listen on ``host``:``port`` (0 = a free port, see ``.port``) and serve the pod."""
        if not _is_loopback(host):
            raise ValueError(f"the pod SSH server binds loopback addresses only, not {host!r}")
        server = cls(
            mode=mode,
            sandbox=sandbox,
            authorized_keys=authorized_keys,
            proxy_username=proxy_username,
        )
        key = await asyncio.to_thread(load_host_key, Path(host_key))
        pod_id = sandbox.env.get("RUNPOD_POD_ID")
        if pod_id:
            killed = await asyncio.to_thread(kill_orphans, [pod_id])
            if killed:
                log.info("pod ssh: ended %d process(es) an earlier run's sessions left", killed)
        _LIVE_TOKENS.add(server._token)
        direct = mode == "direct"
        try:
            server._server = await asyncssh.create_server(
                lambda: _Session(server),
                host,
                port,
                server_host_keys=[key],
                process_factory=server._handle,
                sftp_factory=(lambda chan: _PodSftpServer(chan, sandbox)) if direct else None,
                allow_scp=direct,
                encoding=None,
                line_editor=False,
                agent_forwarding=False,
                x11_forwarding=False,
                allow_pty=True,
            )
        except BaseException:
            _LIVE_TOKENS.discard(server._token)
            raise
        sockets = server._server.sockets
        server.port = int(sockets[0].getsockname()[1]) if sockets else port
        log.info("pod ssh (%s) listening on %s:%d", mode, host, server.port)
        return server

    def note_connections(self) -> None:
        """With ``--sandbox bwrap``: write how many SSH connections are open to the pod's
        ``/run/podbook/ssh-<mode>`` (the pod guard counts them as activity: they end on the
        emulator, outside the pod's network)."""
        run = self.sandbox.run_dir
        if run is not None:
            with contextlib.suppress(OSError):
                (run / f"ssh-{self.mode}").write_text(f"{len(self._connections)}\n")

    def _accepts_user(self, username: str) -> bool:
        if self.mode == "proxy":
            expected = (self.proxy_username or "").encode()
            return secrets.compare_digest(username.encode(errors="replace"), expected)
        return username == DIRECT_USERNAME

    # processes -----------------------------------------------------------------------------

    def _environment(self, process: asyncssh.SSHServerProcess[bytes]) -> dict[str, str]:
        env = dict(self.sandbox.env)
        env.setdefault("PATH", os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"))
        for name, value in process.env.items():  # what sshd's usual AcceptEnv takes
            if name == "LANG" or name.startswith("LC_"):
                env[name] = value
        env.setdefault("HOME", str(self.sandbox.workdir))  # a box's env says /root
        env[MARKER_VAR] = self._token
        if process.term_type:
            env["TERM"] = process.term_type
        peer = process.get_extra_info("peername")
        local = process.get_extra_info("sockname")
        if peer and local:
            env["SSH_CONNECTION"] = f"{peer[0]} {peer[1]} {local[0]} {local[1]}"
            env["SSH_CLIENT"] = f"{peer[0]} {peer[1]} {local[1]}"
        return env

    @staticmethod
    def _shell() -> str:
        return shutil.which("bash") or "/bin/sh"

    async def _handle(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        """Serve one session channel: a shell or a command (SFTP/scp never get here)."""
        try:
            if self._stopped:
                process.exit(1)
                return
            if self.mode == "proxy":
                if process.command is not None or process.subsystem is not None:
                    return self._refuse(process, PROXY_REFUSAL)
                if not process.term_type:
                    return self._refuse(process, PROXY_NEEDS_TTY)
            elif process.subsystem is not None:
                return self._refuse(process, f"podbook: no subsystem {process.subsystem!r} here")
            if process.term_type:
                status = await self._run_pty(process)
            else:
                status = await self._run_pipes(process)
            if status is not None:
                process.exit(status)
        except BoxError as exc:  # the client hears why, as from sshd
            log.info("pod ssh session ended: %s", exc)
            with contextlib.suppress(Exception):
                process.stderr.write(f"podbook: {exc}\n".encode())
                process.exit(255)
        except Exception as exc:  # one session's failure never ends the connection or server
            log.info("pod ssh session ended: %s", type(exc).__name__)
            with contextlib.suppress(Exception):
                process.exit(255)

    @staticmethod
    def _refuse(process: asyncssh.SSHServerProcess[bytes], message: str) -> None:
        process.stderr.write(message.encode() + (b"\r\n" if process.term_type else b"\n"))
        process.exit(1)

    @staticmethod
    def _status(returncode: int) -> int:
        return returncode if returncode >= 0 else 128 - returncode

    async def _end_if_closed(
        self, process: asyncssh.SSHServerProcess[bytes], child: subprocess.Popen[bytes]
    ) -> bool:
        """Wait for the child or the channel; a channel closed first hangs the child's group up.

        Returns True when the child exited on its own."""
        waiter = asyncio.ensure_future(_wait_child(child))
        closed = asyncio.ensure_future(process.wait_closed())
        await asyncio.wait({waiter, closed}, return_when=asyncio.FIRST_COMPLETED)
        if waiter.done():
            closed.cancel()
            return True
        _signal_group(child.pid, signal.SIGHUP)
        _signal_group(child.pid, signal.SIGCONT)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), KILL_GRACE)
        except asyncio.TimeoutError:
            _signal_group(child.pid, signal.SIGKILL)
            await waiter
        return False

    async def _feed(
        self,
        process: asyncssh.SSHServerProcess[bytes],
        fd: int,
        pgid: int,
        on_eof: Callable[[], Awaitable[None]],
    ) -> None:
        """Client input → ``fd``; window changes, signals and breaks act on the child."""
        with contextlib.suppress(*_GONE):
            while True:
                try:
                    data = await process.stdin.read(65536)
                except asyncssh.TerminalSizeChanged as exc:
                    _set_winsize(fd, (exc.width, exc.height, exc.pixwidth, exc.pixheight))
                    continue
                except asyncssh.SignalReceived as exc:
                    self._forward_signal(pgid, exc.signal)
                    continue
                except asyncssh.BreakReceived:
                    if process.term_type:
                        await _write_all(fd, b"\x03")
                    continue
                if not data:
                    break
                await _write_all(fd, data)
            await on_eof()

    async def _spawn(
        self, process: asyncssh.SSHServerProcess[bytes], argv: list[str], **kwargs: Any
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` in the sandbox with ``subprocess`` (``close_fds``: no descriptor of
        the server leaks into the pod, whatever the event loop; uvloop's own subprocesses
        would pass some on)."""
        box = self.sandbox.box
        if box is not None:  # --sandbox bwrap: the session runs in the pod's box
            child: Any = await asyncio.to_thread(
                box.spawn,
                argv,
                env=self._environment(process),
                cwd=self.sandbox.cwd,
                stdin=kwargs["stdin"],
                stdout=kwargs["stdout"],
                stderr=kwargs["stderr"],
                tty=kwargs.get("preexec_fn") is not None,
            )
            self._pgids.add(child.pid)
            self._children = [c for c in self._children if c.poll() is None] + [child]
            return child
        kwargs["preexec_fn"] = self.sandbox.preexec_then(kwargs.get("preexec_fn"))
        child = subprocess.Popen(
            argv,
            cwd=self.sandbox.workdir,
            env=self._environment(process),
            close_fds=True,
            **kwargs,
        )
        self._pgids.add(child.pid)
        self._children = [c for c in self._children if c.poll() is None] + [child]
        return child

    async def _run_pipes(self, process: asyncssh.SSHServerProcess[bytes]) -> int | None:
        """``ssh host CMD`` (or a shell without a terminal): pipes for stdin/stdout/stderr."""
        argv = [self._shell()]
        if process.command is not None:
            argv += ["-c", process.command]
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            child = await self._spawn(
                process, argv, stdin=in_r, stdout=out_w, stderr=err_w, start_new_session=True
            )
        except BaseException:
            for fd in (in_w, out_r, err_r):
                os.close(fd)
            raise
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        for fd in (in_w, out_r, err_r):
            os.set_blocking(fd, False)
        closed_in = False

        async def close_stdin() -> None:
            nonlocal closed_in
            if not closed_in:
                closed_in = True
                os.close(in_w)

        tasks = [
            asyncio.ensure_future(self._feed(process, in_w, child.pid, close_stdin)),
            asyncio.ensure_future(_pump(out_r, process.stdout)),
            asyncio.ensure_future(_pump(err_r, process.stderr)),
        ]
        try:
            exited = await self._end_if_closed(process, child)
            if exited:
                await asyncio.gather(*tasks[1:], return_exceptions=True)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await close_stdin()
            os.close(out_r)
            os.close(err_r)
        return self._status(child.returncode or 0) if exited else None

    async def _run_pty(self, process: asyncssh.SSHServerProcess[bytes]) -> int | None:
        """A session with a terminal: the shell (or ``ssh -t host CMD``) on a real pty."""
        master, slave = pty.openpty()
        _set_winsize(master, process.term_size)
        argv = [self._shell()]
        argv += ["-c", process.command] if process.command is not None else ["-i"]
        try:
            child = await self._spawn(
                process,
                argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                preexec_fn=_acquire_tty(os.ttyname(slave)),
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(master, False)

        async def end_of_input() -> None:
            await _write_all(master, b"\x04")  # EOF from the client: ^D to the terminal

        feeder = asyncio.ensure_future(self._feed(process, master, child.pid, end_of_input))
        output = asyncio.ensure_future(_pump(master, process.stdout))
        try:
            exited = await self._end_if_closed(process, child)
            if exited:
                await asyncio.wait({output}, timeout=DRAIN_AFTER_EXIT)
        finally:
            for task in (feeder, output):
                task.cancel()
            await asyncio.gather(feeder, output, return_exceptions=True)
            os.close(master)  # hangs up what is left on the terminal
        return self._status(child.returncode or 0) if exited else None

    @staticmethod
    def _forward_signal(pgid: int, name: str) -> None:
        number = getattr(signal, f"SIG{name}", None)
        if isinstance(number, signal.Signals):
            _signal_group(pgid, number)

    # stop ----------------------------------------------------------------------------------

    def _survivors(self) -> list[psutil.Process]:
        """Every live process this server started: the ones with its marker, the rest of their
        process groups, and all their descendants."""
        marked: dict[int, psutil.Process] = {}
        by_group: dict[int, list[psutil.Process]] = {}
        me = os.getpid()
        for proc in psutil.process_iter(["pid", "environ", "status"], ad_value=None):
            info = proc.info
            if info["pid"] == me or info["status"] == psutil.STATUS_ZOMBIE:
                continue
            try:
                pgid = os.getpgid(info["pid"])
            except OSError:
                continue
            if pgid in self._pgids:
                by_group.setdefault(pgid, []).append(proc)
            if (info["environ"] or {}).get(MARKER_VAR) == self._token:
                marked[proc.pid] = proc
        found = dict(marked)
        for pgid in self._live_groups(list(marked.values())):
            for proc in by_group.get(pgid, []):
                found.setdefault(proc.pid, proc)
        for proc in list(found.values()):
            with contextlib.suppress(psutil.Error):
                for child in proc.children(recursive=True):
                    found.setdefault(child.pid, child)
        return list(found.values())

    def _live_groups(self, procs: list[psutil.Process]) -> set[int]:
        """The groups this server made that still hold one of ``procs`` (never a reused id)."""
        groups = set()
        for proc in procs:
            with contextlib.suppress(OSError):
                groups.add(os.getpgid(proc.pid))
        return groups & self._pgids

    def _kill_all(self) -> None:
        if not self._pgids:  # no session ever started a process
            return
        procs = self._survivors()
        if not procs:
            return
        for pgid in self._live_groups(procs):
            _signal_group(pgid, signal.SIGTERM)
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.terminate()
        _, alive = psutil.wait_procs(procs, timeout=KILL_GRACE)
        leftovers = {p.pid: p for p in alive}
        for proc in self._survivors():
            leftovers.setdefault(proc.pid, proc)
        for pgid in self._live_groups(list(leftovers.values())):
            _signal_group(pgid, signal.SIGKILL)
        for proc in leftovers.values():
            with contextlib.suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(list(leftovers.values()), timeout=KILL_GRACE)

    def pids(self) -> list[int]:
        """The session processes this server started that still run."""
        return [child.pid for child in self._children if child.poll() is None]

    async def stop(self) -> None:
        """Stop listening, close every session and end every process the server started."""
        self._stopped = True
        if self._server is not None:
            self._server.close()
        for conn in list(self._connections):
            conn.close()
        await asyncio.to_thread(self._kill_all)
        if self._server is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), KILL_GRACE)
        for conn in list(self._connections):
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(conn.wait_closed(), KILL_GRACE)
        _LIVE_TOKENS.discard(self._token)
        log.info("pod ssh (%s) on port %d stopped", self.mode, self.port)
