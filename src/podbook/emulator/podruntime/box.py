"""A pod's bubblewrap box, from the host: start it (:meth:`Box.start`), start processes in it
(:meth:`Box.spawn`), reach its private ports (:meth:`Box.connect`) and end it (:meth:`Box.stop`).

The box's first process is :mod:`.boxinit`; the emulator talks to it over a listening Unix
socket in the *abstract* namespace, which is scoped to a network namespace: the host reaches it,
the pod (in a network namespace of its own) cannot. Processes started in the box are children
of ``boxinit``; :class:`BoxChild` gives the emulator what it uses of a ``Popen``: the process's
pid *on the host* (for its process group, measuring and the ledger), ``poll``, ``wait`` and
``returncode``. The box ends its processes when it ends (its PID namespace), whatever they did.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import psutil

from podbook.emulator.podruntime import boxinit
from podbook.emulator.podruntime.boxplan import BoxPlan, bwrap_args, top_level

START_TIMEOUT = 10.0
STOP_GRACE = 3.0


class BoxError(RuntimeError):
    """The box could not be started or asked; one line."""


def bwrap_path() -> str | None:
    """The ``bwrap`` program, if installed."""
    return shutil.which("bwrap")


def usable(timeout: float = 10.0) -> str | None:
    """None when a bwrap box can be made here; else why not, in one line."""
    program = bwrap_path()
    if program is None:
        return "bwrap is not installed (Debian: apt-get install bubblewrap)"
    try:
        probe = subprocess.run(
            [program, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--", "true"],
            capture_output=True,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not run: {exc}"
    if probe.returncode != 0:
        reason = probe.stderr.decode(errors="replace").strip().splitlines()
        return f"bwrap cannot make a sandbox here: {reason[-1] if reason else probe.returncode}"
    return None


class BoxChild:
    """A process started in a box (see the module docstring)."""

    def __init__(
        self, conn: socket.socket, lines: BinaryIO, inner_pid: int, host_pid: int | None
    ) -> None:
        self.inner_pid = inner_pid
        self.pid = host_pid if host_pid is not None else -1
        self.returncode: int | None = None
        self._conn = conn
        self._lines = lines
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[int]]] = []
        threading.Thread(target=self._await_exit, daemon=True).start()

    def _await_exit(self) -> None:
        code = -int(signal.SIGKILL)
        with contextlib.suppress(OSError, ValueError), self._conn, self._lines:
            message = _read_message(self._lines)
            code = int(message.get("exit", code))
        with self._lock:
            self.returncode = code
            self._done.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # a loop that is closed by now
                loop.call_soon_threadsafe(_settle, future, code)

    async def wait_async(self) -> int:
        """Wait for the end without holding a thread (the exit is read by the child's own)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._done.is_set():
                assert self.returncode is not None
                return self.returncode
            future: asyncio.Future[int] = loop.create_future()
            self._waiters.append((loop, future))
        return await future

    def poll(self) -> int | None:
        """The exit code once the process has ended (a signal: its negative number)."""
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the end (blocking); the exit code, or None after ``timeout``."""
        self._done.wait(timeout)
        return self.returncode


def _settle(future: asyncio.Future[int], code: int) -> None:
    if not future.done():
        future.set_result(code)


def _read_message(lines: BinaryIO) -> dict:
    """The next JSON line of a box's answer (a quick process's start and end can arrive in
    one read: the buffered reader keeps the second line for the next call)."""
    line = lines.readline()
    if not line:
        raise ValueError("no answer")
    return json.loads(line)


class Box:
    """One pod's running box."""

    def __init__(self, process: subprocess.Popen[bytes], address: str, private_host: str) -> None:
        self.process = process
        self.address = address
        self.private_host = private_host
        """Where the pod's servers listen on their private ports (``127.0.0.1`` in the box's
        own network; a cluster member's cluster address)."""

    @property
    def pid(self) -> int:
        """The host pid of ``bwrap`` (every process of the box descends from it)."""
        return self.process.pid

    @classmethod
    def start(
        cls,
        plan: BoxPlan,
        *,
        relays: dict[int, int],
        bridges: dict[int, str] | None = None,
        preexec: Callable[[], None] | None = None,
        python: str | None = None,
        private_host: str = "127.0.0.1",
    ) -> Box:
        """Make the box and wait until its init answers (blocking). ``relays``: public port on
        the host's 127.0.0.1 → private port in the pod (at ``private_host``); ``bridges``: port
        of the pod's loopback → path (in the box) of a host Unix socket."""
        program = bwrap_path()
        if program is None:
            raise BoxError("bwrap is not installed")
        for folder in ("root", "tmp", "var/tmp"):
            (plan.container / folder).mkdir(parents=True, exist_ok=True)
        address = f"\0podbook-box-{plan.pod_id}-{secrets.token_hex(8)}"
        control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listeners: list[socket.socket] = [control]
        try:
            control.bind(address)
            control.listen(64)
            spec: dict = {"control": control.fileno(), "relays": []}
            spec["bridges"] = sorted((bridges or {}).items())
            for public, private in sorted(relays.items()):
                listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind(("127.0.0.1", public))
                listener.listen(128)
                listeners.append(listener)
                spec["relays"].append([listener.fileno(), private_host, private])
            keep = [sock.fileno() for sock in listeners]

            def setup() -> None:  # pragma: no cover - runs in the child between fork and exec
                if preexec is not None:
                    preexec()  # may mark every descriptor not inheritable: the box's are kept
                for fd in keep:
                    os.set_inheritable(fd, True)

            argv = [program, *bwrap_args(plan, top_level())]
            argv += ["--", python or _python(), "-S", boxinit.__file__]
            env = {"PODBOOK_BOX": json.dumps(spec), "PATH": os.environ.get("PATH", "")}
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                pass_fds=keep,
                start_new_session=True,
                preexec_fn=setup,
            )
        finally:
            for sock in listeners:
                sock.close()
        box = cls(process, address, private_host)
        box._wait_ready()
        return box

    def _wait_ready(self) -> None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT
        result: list[bytes] = []
        thread = threading.Thread(
            target=lambda: result.append(self.process.stdout.readline()),  # type: ignore[union-attr]
            daemon=True,
        )
        thread.start()
        thread.join(max(0.0, deadline - time.monotonic()))
        if result and result[0].strip() == b"ready":
            return
        self.kill()
        errors = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
        last = [ln for ln in errors.splitlines() if ln.strip()]
        raise BoxError(f"the pod's sandbox did not start: {last[-1] if last else 'no answer'}")

    def _ask(self, request: dict, fds: tuple[int, ...] = ()) -> socket.socket:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(self.address)
            payload = (json.dumps(request) + "\n").encode()
            if fds:
                socket.send_fds(conn, [payload], list(fds))
            else:
                conn.sendall(payload)
        except OSError as exc:
            conn.close()
            raise BoxError(f"the pod's sandbox does not answer: {exc.strerror or exc}") from None
        return conn

    def spawn(
        self,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: str,
        stdin: int,
        stdout: int,
        stderr: int,
        session: bool = True,
        tty: bool = False,
    ) -> BoxChild:
        """Start ``argv`` in the box with these descriptors (blocking)."""
        request = {"op": "spawn", "argv": argv, "env": env, "cwd": cwd}
        request |= {"session": session, "tty": tty}
        conn = self._ask(request, (stdin, stdout, stderr))
        lines = conn.makefile("rb")
        try:
            message = _read_message(lines)
        except (OSError, ValueError):
            message = {"error": "the pod's sandbox ended"}
        if "error" in message:
            lines.close()
            conn.close()
            raise BoxError(message["error"])
        inner = int(message["pid"])
        return BoxChild(conn, lines, inner, self.host_pid(inner))

    def connect(self, host: str, port: int) -> socket.socket:
        """A connection to ``host:port`` as the pod reaches it (a loopback address: the box's
        own); :class:`BoxError` when nothing listens there."""
        with self._ask({"op": "connect", "host": host, "port": port}) as conn:
            data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 1)
        message = json.loads(data or b"{}")
        if "error" in message or not fds:
            for fd in fds:
                os.close(fd)
            raise BoxError(message.get("error", "no connection"))
        sock = socket.socket(fileno=fds[0])
        sock.setblocking(True)
        return sock

    def host_pid(self, inner: int) -> int | None:
        """The host pid of the box's process ``inner`` (None once it is gone)."""
        with contextlib.suppress(psutil.Error):
            for proc in psutil.Process(self.pid).children(recursive=True):
                with contextlib.suppress(OSError):
                    status = Path(f"/proc/{proc.pid}/status").read_text()
                    for line in status.splitlines():
                        if line.startswith("NSpid:") and int(line.split()[-1]) == inner:
                            return proc.pid
        return None

    def kill(self) -> None:
        """End the box now: its init and, with its PID namespace, every process in it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(STOP_GRACE)

    def stop(self, grace: float = STOP_GRACE) -> None:
        """SIGTERM to the box's processes, SIGKILL after ``grace`` (blocking)."""
        with contextlib.suppress(psutil.Error):
            for proc in psutil.Process(self.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(grace)
        self.kill()


def _python() -> str:
    return sys.executable


class AsyncBoxProcess:
    """A process started in a box with its stdout and stderr on one pipe, as the emulator's
    asyncio code uses an ``asyncio.subprocess.Process``: ``pid`` (on the host), ``stdout``
    (a ``StreamReader``), ``returncode`` and ``await wait()``."""

    def __init__(self, child: BoxChild, stdout: asyncio.StreamReader) -> None:
        self.child = child
        self.pid = child.pid
        self.stdout = stdout

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has ended."""
        return self.child.returncode

    async def wait(self) -> int:
        """Wait for the end (a process the box lost reads as killed)."""
        return await self.child.wait_async()

    @classmethod
    async def start(
        cls, box: Box, argv: list[str], *, env: dict[str, str], cwd: str, limit: int = 1 << 16
    ) -> AsyncBoxProcess:
        """Start ``argv`` in ``box``, stdin from ``/dev/null``, its output on ``stdout``."""
        read_end, write_end = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            child = await asyncio.to_thread(
                box.spawn, argv, env=env, cwd=cwd, stdin=null, stdout=write_end, stderr=write_end
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
            os.close(null)
        stream = asyncio.StreamReader(limit=limit)
        await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(read_end, "rb", buffering=0)
        )
        return cls(child, stream)
