"""SSH to a pod's direct endpoint: connect, check the host key, run a shell script.

:func:`connect` opens an asyncssh connection to ``pod.ssh.direct`` (the public port of the
pod's ``22/tcp``: full SSH with SFTP; the proxy endpoint gives a shell only) on the one
background loop of :mod:`podbook.remote.loop`, and returns a :class:`PodConnection` with a
blocking API. Anything wrong before or while connecting is a :class:`RemoteError` whose
``str()`` is one line naming the fix: the pod is not RUNNING, has no ``22/tcp``, has no SSH
server (``ssh.unavailable``), refused the key, or cannot be reached.

Host keys: a pod on a loopback address (the local emulator's, whose host keys and ports change
with every pod) is accepted without being recorded; any other host is checked with
*accept-new* semantics against podbook's own ``<podbook home>/ssh/known_hosts`` (a host seen for
the first time is recorded; a changed key is refused). ``~/.ssh/known_hosts`` and
``~/.ssh/config`` are not read, and no SSH agent is used: the key is the one
:func:`podbook.remote.keys.find_key` picks, or the one given.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ipaddress
import re
import shlex
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import asyncssh

from podbook.client.config import default_home
from podbook.errors import PodbookError
from podbook.remote import loop
from podbook.remote.keys import SshKeyPair, find_key, is_registered, load_key

if TYPE_CHECKING:
    from podbook.api.pods import Pod
    from podbook.client import Client

__all__ = [
    "MAX_SCRIPT_BYTES",
    "OutputCallback",
    "PodConnection",
    "RemoteError",
    "Target",
    "connect",
    "known_hosts_path",
    "run",
    "using",
]

MAX_SCRIPT_BYTES = 120_000
"""Largest script :meth:`PodConnection.run` sends (it travels in the SSH command line, which
Linux caps at 128 KiB per argument)."""

ENCRYPTION_ALGS = [
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes192-ctr",
    "aes256-ctr",
]
"""Ciphers offered, fastest first: AES-GCM runs on the CPU's AES instructions; asyncssh's
ChaCha20 (OpenSSH's first choice) moves about half as many bytes per second."""

CHANNEL_WINDOW = 16 * 1024 * 1024
"""The receive window of each channel (asyncssh's 2 MiB caps a pull at a few dozen MB/s)."""

MAX_PACKET = 256 * 1024
"""Largest SSH packet the pod may send us (fewer, larger packets: less per-packet work)."""

KEEPALIVE_SECONDS = 30.0

OutputCallback = Callable[[str], Any]
"""Receives a chunk of a remote command's output (decoded UTF-8, as it arrives)."""


class RemoteError(PodbookError):
    """Something between podbook and a pod's SSH went wrong; ``str()`` is one line with the
    fix. ``reason`` is a short tag for code: ``not-running``, ``no-direct-ssh``,
    ``unavailable``, ``key-refused``, ``unreachable``, ``host-key``, ``script-too-long``,
    ``closed``, ``remote`` (an error the pod's SFTP server answered), ``local``."""

    def __init__(self, message: str, *, reason: str = "remote", pod_id: str | None = None):
        super().__init__(message)
        self.reason = reason
        self.pod_id = pod_id

    def _render_traceback_(self) -> list[str]:
        """IPython shows the one line instead of a traceback."""
        return [f"{type(self).__name__}: {self}"]


Target = Union["PodConnection", "Pod", str]
"""What the module-level functions take: an open connection, a pod record, or a pod id."""


def known_hosts_path(home: Path | None = None) -> Path:
    """podbook's known_hosts file: ``<podbook home>/ssh/known_hosts``."""
    return (home if home is not None else default_home()) / "ssh" / "known_hosts"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (the local emulator's pods)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Endpoint:
    """Where a pod's direct SSH listens."""

    host: str
    port: int
    username: str


def direct_endpoint(pod: Pod) -> Endpoint:
    """The pod's direct SSH endpoint, or a :class:`RemoteError` saying why there is none."""
    pid = pod.id
    if pod.status != "RUNNING":
        raise RemoteError(
            f"pod {pid} is {pod.status}, not RUNNING: start it (%pod start {pid}) or wait "
            "until it runs, then try again",
            reason="not-running",
            pod_id=pid,
        )
    if pod.ssh.unavailable:
        raise RemoteError(
            f"pod {pid}: {pod.ssh.unavailable.rstrip('.')}",
            reason="unavailable",
            pod_id=pid,
        )
    if "22/tcp" not in pod.ports:
        raise RemoteError(
            f"pod {pid} exposes no 22/tcp, so it has no direct SSH (the SSH proxy gives a "
            "shell only: no SFTP, scp or commands); create the pod with --ports ...,22/tcp --ssh",
            reason="no-direct-ssh",
            pod_id=pid,
        )
    direct = pod.ssh.direct
    if direct is None:
        raise RemoteError(
            f"pod {pid} shows no direct SSH endpoint (ssh.direct) yet; wait a few seconds, "
            "or create the pod with --ports ...,22/tcp --ssh",
            reason="no-direct-ssh",
            pod_id=pid,
        )
    return Endpoint(direct.host, direct.port, direct.username)


# ---------------------------------------------------------------- host keys


class _HostKeys:
    """Accept-new host key checking against one known_hosts file (OpenSSH's line format)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.mismatch = False

    @staticmethod
    def pattern(host: str, port: int) -> str:
        return host if port == 22 else f"[{host}]:{port}"

    def _recorded(self, pattern: str) -> list[str]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        found = []
        for line in lines:
            parts = line.split()
            if len(parts) >= 3 and pattern in parts[0].split(","):
                found.append(" ".join(parts[1:3]))
        return found

    def check(self, host: str, port: int, key: asyncssh.SSHKey) -> bool:
        pattern = self.pattern(host, port)
        line = key.export_public_key("openssh").decode().split()
        mine = " ".join(line[:2])
        recorded = self._recorded(pattern)
        if mine in recorded:
            return True
        if recorded and any(r.split()[0] == line[0] for r in recorded):
            self.mismatch = True
            return False
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(f"{pattern} {mine}\n")
        return True


class _Client(asyncssh.SSHClient):
    def __init__(self, host_keys: _HostKeys | None, host: str, port: int) -> None:
        self._host_keys = host_keys
        self._target = (host, port)

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        if self._host_keys is None:
            return True
        return self._host_keys.check(self._target[0], self._target[1], key)


def _no_known_keys(
    host: str, addr: str, port: int | None
) -> tuple[list[Any], list[Any], list[Any]]:
    """No key is trusted up front, so every host key goes through ``_Client``'s check."""
    return [], [], []


# ---------------------------------------------------------------- the connection


class PodConnection:
    """An open SSH connection to one pod's direct endpoint (use it as a context manager).

    Blocking methods run on :mod:`podbook.remote.loop`'s thread; their callbacks run on the
    calling thread. :mod:`podbook.remote.files` and :mod:`podbook.remote.dirsync` take one to
    move files over its SFTP session (opened once, on first use).
    """

    def __init__(
        self,
        conn: asyncssh.SSHClientConnection,
        *,
        pod_id: str,
        endpoint: Endpoint,
        key: SshKeyPair,
    ) -> None:
        self._conn = conn
        self.pod_id = pod_id
        self.endpoint = endpoint
        self.key = key
        self._sftp: asyncssh.SFTPClient | None = None
        self._sftp_lock = asyncio.Lock()
        self._closed = False
        self._home: str | None = None

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        e = self.endpoint
        return f"<PodConnection {self.pod_id} {e.username}@{e.host}:{e.port} {state}>"

    def __enter__(self) -> PodConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> asyncssh.SSHClientConnection:
        """The asyncssh connection (lives on :func:`podbook.remote.loop.get_loop`)."""
        return self._conn

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran or the pod closed the connection."""
        return self._closed or self._conn.is_closed()

    def close(self) -> None:
        """Close the connection (and its SFTP session)."""
        if self._closed:
            return
        self._closed = True

        async def shut() -> None:
            if self._sftp is not None:
                self._sftp.exit()
            self._conn.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._conn.wait_closed(), 5)

        with contextlib.suppress(Exception):
            loop.submit(shut()).result(10)

    async def sftp(self) -> asyncssh.SFTPClient:
        """The connection's SFTP session (opened on first use; call on the loop)."""
        async with self._sftp_lock:
            if self._sftp is None:
                try:
                    self._sftp = await self._conn.start_sftp_client()
                except (asyncssh.Error, OSError) as exc:
                    raise RemoteError(
                        f"pod {self.pod_id} refused SFTP ({_reason(exc)}); use the pod's direct "
                        "SSH endpoint (ssh.direct, port of 22/tcp)",
                        reason="no-direct-ssh",
                        pod_id=self.pod_id,
                    ) from None
            return self._sftp

    async def home(self) -> str:
        """The pod's working directory as SFTP names it (where relative paths start)."""
        if self._home is None:
            sftp = await self.sftp()
            self._home = await sftp.realpath(".")
        return self._home

    def run(
        self,
        script: str,
        *,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        shell: str = "bash",
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> int:
        """Run ``script`` in the pod and return its exit status.

        The script runs as ``SHELL -c SCRIPT`` (``bash`` falls back to ``sh`` where the pod
        has no bash), in ``cwd`` (default: the SSH session's directory, the pod's working
        directory) with ``env`` added, stdin empty. Its stdout and stderr go to
        ``on_stdout``/``on_stderr`` as they arrive, decoded as UTF-8 (default: this
        process's ``sys.stdout``/``sys.stderr``); each stream keeps its order. A process
        killed by a signal gives 128 + its number, as a shell reports it.

        Interrupting the caller (``KeyboardInterrupt``, or an exception from a callback)
        ends the remote script: it gets SIGINT, SIGTERM a second later, SIGKILL two seconds
        after that (its whole process group where the pod has bash), then the exception is
        raised here.
        """
        command = remote_command(script, shell=shell, cwd=cwd, env=env)
        out = on_stdout if on_stdout is not None else _writer(sys.stdout)
        err = on_stderr if on_stderr is not None else _writer(sys.stderr)
        return loop.call(lambda emit: self._run(command, out, err, emit))

    async def _run(
        self, command: str, out: OutputCallback, err: OutputCallback, emit: loop.Emit
    ) -> int:
        try:
            process = await self._conn.create_process(command, encoding=None)
        except (asyncssh.Error, OSError) as exc:
            raise self._lost(exc) from None

        async def pump(reader: asyncssh.SSHReader[bytes], callback: OutputCallback) -> None:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            while True:
                data = await reader.read(65536)
                text = decoder.decode(data, final=not data)
                if text:
                    emit(lambda text=text: callback(text))
                if not data:
                    return

        try:
            await asyncio.gather(pump(process.stdout, out), pump(process.stderr, err))
            await process.wait_closed()
        except asyncio.CancelledError:
            await _hang_up(process)
            raise
        except (asyncssh.Error, OSError) as exc:
            process.close()
            raise self._lost(exc) from None
        return exit_status(process.exit_status, process.exit_signal)

    def _lost(self, exc: BaseException) -> RemoteError:
        return RemoteError(
            f"lost the SSH connection to pod {self.pod_id} ({_reason(exc)}); is it still RUNNING?",
            reason="closed",
            pod_id=self.pod_id,
        )


async def _hang_up(process: asyncssh.SSHClientProcess[bytes]) -> None:
    """End an interrupted remote script: EOF on its stdin tells the wrapper to stop it."""
    with contextlib.suppress(Exception):
        process.stdin.write_eof()
        await asyncio.wait_for(asyncio.shield(process.wait_closed()), 6.0)
    process.close()


def exit_status(status: int | None, sig: tuple[str, bool, str, str] | None) -> int:
    """An SSH exit status, or 128 + the signal's number for a process a signal ended."""
    if status is not None and status >= 0:
        return status
    if sig:
        number = getattr(signal, f"SIG{sig[0]}", None)
        return 128 + int(number) if number is not None else 255
    return 255


def _writer(stream: Any) -> OutputCallback:
    def write(text: str) -> None:
        stream.write(text)
        stream.flush()

    return write


_WRAPPER = r"""{monitor}exec 3<&0 4>&2 2>/dev/null
hup=0
trap 'hup=1' USR1 HUP
"$1" -c "$2" </dev/null 3<&- 2>&4 4>&- &
job=$!
{{ cat <&3 >/dev/null; kill -USR1 $$; }} </dev/null >/dev/null 2>&1 4>&- &
watch=$!
while :; do
  wait "$job"
  status=$?
  [ "$hup" = 1 ] && break
  kill -0 "$job" || break
done
kill {group}"$watch"
if [ "$hup" = 1 ]; then
  for sig in INT TERM KILL; do
    kill -"$sig" {group}"$job" || break
    for _ in 1 2 3 4 5; do kill -0 {group}"$job" || break; sleep 0.1; done
  done
  exit 130
fi
exit "$status"
"""
"""Runs the script ``$2`` with ``$1`` as a background job and a watcher that reads our
stdin: when it closes (the client was interrupted, or hung up), the watcher signals the
wrapper (USR1; a hang-up HUP does the same), which ends the job: SIGINT, then SIGTERM, then
SIGKILL, half a second apart while it lives. A job that ends on its own leaves what it
started in the background alone, as ``ssh`` does. The wrapper's own stderr (job notices)
goes to /dev/null; the script's goes out."""

_BASH_WRAPPER = _WRAPPER.format(monitor="set -m\n", group="-- -")
"""With bash: job control (``set -m``) puts the job in a process group of its own, and the
signals go to that whole group (what the script started too)."""

_SH_WRAPPER = _WRAPPER.format(monitor="", group="")
"""Without bash: plain ``sh`` has no job control, so the signals reach the script's own
process only."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def remote_command(
    script: str,
    *,
    shell: str = "bash",
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The SSH command line that runs ``script`` as :meth:`PodConnection.run` describes."""
    prelude = []
    for name, value in (env or {}).items():
        if not _NAME.match(name):
            raise RemoteError(f"env: {name!r} is not a variable name", reason="local")
        prelude.append(f"export {name}={shlex.quote(value)}")
    if cwd is not None:
        prelude.append(f"cd -- {shlex.quote(cwd)} || exit 1")
    body = "\n".join([*prelude, script]) if prelude else script
    q = shlex.quote
    fallback = "sh" if shell == "bash" else shell
    command = (
        f"if command -v bash >/dev/null 2>&1; then exec bash -c {q(_BASH_WRAPPER)} podbook "
        f"{q(shell)} {q(body)}; else exec sh -c {q(_SH_WRAPPER)} podbook {q(fallback)} "
        f"{q(body)}; fi"
    )
    if len(command.encode("utf-8", "surrogateescape")) > MAX_SCRIPT_BYTES:
        raise RemoteError(
            f"the script is {len(body.encode('utf-8', 'surrogateescape')):,} bytes; a script "
            f"sent over SSH holds at most about {MAX_SCRIPT_BYTES // 1000} kB: push it as a "
            "file and run that file",
            reason="script-too-long",
        )
    return command


# ---------------------------------------------------------------- connecting


def connect(
    pod: Pod | str,
    *,
    client: Client | None = None,
    key: SshKeyPair | str | Path | None = None,
    timeout: float = 20.0,
    known_hosts: Path | None = None,
) -> PodConnection:
    """Open an SSH connection to ``pod``'s direct endpoint (a pod record or a pod id).

    With a ``client`` the pod's record is read afresh (its ports change when it restarts);
    a pod id without one uses ``podbook.Client()``. ``key`` is the private key (default
    :func:`~podbook.remote.keys.find_key`); ``timeout`` bounds connecting and logging in;
    ``known_hosts`` replaces podbook's own file (for hosts that are not loopback).
    """
    record, own_client = _resolve(pod, client)
    try:
        endpoint = direct_endpoint(record)
        pair = _key_pair(key)
        conn = _login(record.id, endpoint, pair, timeout, known_hosts, client or own_client)
    finally:
        if own_client is not None:
            own_client.close()
    return PodConnection(conn, pod_id=record.id, endpoint=endpoint, key=pair)


@contextmanager
def using(
    target: Target,
    *,
    client: Client | None = None,
    key: SshKeyPair | str | Path | None = None,
    timeout: float = 20.0,
) -> Iterator[PodConnection]:
    """A connection for one operation: ``target`` itself when it is a :class:`PodConnection`
    (left open), else a new one to the pod (closed at the end)."""
    if isinstance(target, PodConnection):
        if target.closed:
            raise RemoteError(
                f"the connection to pod {target.pod_id} is closed; connect again",
                reason="closed",
                pod_id=target.pod_id,
            )
        yield target
        return
    with connect(target, client=client, key=key, timeout=timeout) as conn:
        yield conn


def run(
    pod: Target,
    script: str,
    *,
    client: Client | None = None,
    key: SshKeyPair | str | Path | None = None,
    on_stdout: OutputCallback | None = None,
    on_stderr: OutputCallback | None = None,
    shell: str = "bash",
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run ``script`` in ``pod`` and return its exit status (see :meth:`PodConnection.run`)."""
    with using(pod, client=client, key=key) as conn:
        return conn.run(
            script, on_stdout=on_stdout, on_stderr=on_stderr, shell=shell, cwd=cwd, env=env
        )


def _resolve(pod: Pod | str, client: Client | None) -> tuple[Pod, Client | None]:
    """The pod's record (fresh when there is a client) and a client this call made, if any."""
    if isinstance(pod, str):
        own = None
        if client is None:
            from podbook.client import Client

            client = own = Client()
        try:
            return client.pods.get(pod), own
        except BaseException:
            if own is not None:
                own.close()
            raise
    if client is not None:
        return client.pods.get(pod.id), None
    return pod, None


def _key_pair(key: SshKeyPair | str | Path | None) -> SshKeyPair:
    if isinstance(key, SshKeyPair):
        return key
    try:
        return find_key() if key is None else load_key(key)
    except (FileNotFoundError, OSError) as exc:
        raise RemoteError(str(exc), reason="local") from None


def _login(
    pod_id: str,
    endpoint: Endpoint,
    key: SshKeyPair,
    timeout: float,
    known_hosts: Path | None,
    client: Client | None,
) -> asyncssh.SSHClientConnection:
    host_keys = None if is_loopback(endpoint.host) else _HostKeys(known_hosts or known_hosts_path())
    where = f"{endpoint.username}@{endpoint.host}:{endpoint.port}"

    async def open_connection(emit: loop.Emit) -> asyncssh.SSHClientConnection:
        return await asyncio.wait_for(
            asyncssh.connect(
                endpoint.host,
                endpoint.port,
                username=endpoint.username,
                client_factory=lambda: _Client(host_keys, endpoint.host, endpoint.port),
                known_hosts=None if host_keys is None else _no_known_keys,
                client_keys=[str(key.private)],
                agent_path=None,
                config=[],
                password=None,
                kbdint_auth=False,
                gss_auth=False,
                host_based_auth=False,
                preferred_auth="publickey",
                encryption_algs=ENCRYPTION_ALGS,
                compression_algs=None,
                window=CHANNEL_WINDOW,
                max_pktsize=MAX_PACKET,
                keepalive_interval=KEEPALIVE_SECONDS,
                connect_timeout=timeout,
                login_timeout=timeout,
            ),
            timeout + 5,
        )

    try:
        return loop.call(open_connection)
    except asyncssh.PermissionDenied:
        raise _refused(pod_id, key, client) from None
    except asyncssh.HostKeyNotVerifiable:
        if host_keys is not None and host_keys.mismatch:
            raise RemoteError(
                f"the host key of {endpoint.host}:{endpoint.port} (pod {pod_id}) differs from the "
                f"one recorded in {host_keys.path}; if the pod was recreated, remove the line "
                f"{_HostKeys.pattern(endpoint.host, endpoint.port)} from that file",
                reason="host-key",
                pod_id=pod_id,
            ) from None
        raise
    except ConnectionRefusedError:
        raise RemoteError(
            f"pod {pod_id}'s SSH at {where} refused the connection: its SSH server is not up "
            "(just started? wait a few seconds) or the pod stopped",
            reason="unreachable",
            pod_id=pod_id,
        ) from None
    except (asyncio.TimeoutError, TimeoutError):
        raise RemoteError(
            f"pod {pod_id}'s SSH at {where} did not answer within {timeout:g} s; check that the "
            "pod is RUNNING and the address is reachable from here",
            reason="unreachable",
            pod_id=pod_id,
        ) from None
    except (asyncssh.Error, OSError) as exc:
        raise RemoteError(
            f"cannot reach pod {pod_id}'s SSH at {where}: {_reason(exc)}",
            reason="unreachable",
            pod_id=pod_id,
        ) from None


def _refused(pod_id: str, key: SshKeyPair, client: Client | None) -> RemoteError:
    """The one line for a key the pod refused, naming the fix."""
    registered: bool | None = None
    if client is not None:
        with contextlib.suppress(Exception):
            registered = is_registered(client, key)
    if registered:
        advice = (
            "it is registered on the account, but the pod was created before it was (a pod "
            "takes the account's keys when it is created): create the pod again"
        )
    else:
        advice = (
            f"register it (%sshkey add {key.public}), then create the pod again (a pod takes "
            "the account's keys when it is created)"
        )
    return RemoteError(
        f"pod {pod_id} refused the SSH key {key.describe()}: {advice}",
        reason="key-refused",
        pod_id=pod_id,
    )


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
    return str(text).strip().rstrip(".") or type(exc).__name__
