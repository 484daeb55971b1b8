"""Helpers of the SSH tests: the OpenSSH client (ssh, scp, sftp) run against an endpoint, key
pairs from ``ssh-keygen``, and a tiny loopback TCP server to forward to."""

from __future__ import annotations

import shlex
import socket
import socketserver
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from processes import wait_for

HOST = "127.0.0.1"
OPTS = [
    "-o",
    "BatchMode=yes",
    "-o",
    "StrictHostKeyChecking=no",
    "-o",
    "UserKnownHostsFile=/dev/null",
    "-o",
    "LogLevel=ERROR",
    "-o",
    "ConnectTimeout=10",
]
"""Non-interactive client options (the first value of an option wins in OpenSSH)."""


@dataclass
class Endpoint:
    """Where an SSH client connects: host, port, user name, and the ``ssh`` command to use
    (the pod record's ``command`` when there is one)."""

    host: str
    port: int
    user: str
    command: str = ""

    def base(self, key: Path) -> list[str]:
        """The ``ssh`` argv up to the remote command, with the key and the test options."""
        if self.command:
            return [*shlex.split(self.command), "-i", str(key), *OPTS]
        return ["ssh", *OPTS, "-i", str(key), "-p", str(self.port), f"{self.user}@{self.host}"]

    def remote(self, path: str) -> str:
        """An ``scp`` remote path on this endpoint."""
        return f"{self.user}@{self.host}:{path}"


def keygen(folder: Path, name: str) -> Path:
    """A fresh ed25519 key pair ``folder/name`` (+ ``.pub``); the private key's path."""
    path = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)],
        check=True,
        timeout=30,
    )
    return path


def ssh(
    endpoint: Endpoint,
    key: Path,
    *remote: str,
    flags: tuple[str, ...] = (),
    stdin: str = "",
    timeout: float = 20,
) -> subprocess.CompletedProcess[str]:
    """Run ``ssh`` (with ``flags`` and a ``remote`` command) and return what it did."""
    return subprocess.run(
        [*endpoint.base(key), *flags, *remote],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def scp(
    endpoint: Endpoint, key: Path, *paths: str, legacy: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``scp`` (SFTP protocol, or the legacy one with ``legacy``); ``REMOTE:`` in a path
    names the endpoint."""
    argv = ["scp", *OPTS, "-i", str(key), "-P", str(endpoint.port), *(["-O"] if legacy else [])]
    paths = tuple(
        endpoint.remote(p[len("REMOTE:") :]) if p.startswith("REMOTE:") else p for p in paths
    )
    return subprocess.run(
        [*argv, *paths], capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
    )


def sftp(endpoint: Endpoint, key: Path, batch: str) -> subprocess.CompletedProcess[str]:
    """Run an ``sftp`` batch."""
    argv = ["sftp", *OPTS, "-i", str(key), "-P", str(endpoint.port), "-b", "-"]
    argv.append(f"{endpoint.user}@{endpoint.host}")
    return subprocess.run(argv, input=batch, capture_output=True, text=True, timeout=20)


def free_port() -> int:
    """A loopback port that is free right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class _Pong(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        data = self.request.recv(1024)
        self.request.sendall(b"pong:" + data)


@contextmanager
def pong_server(host: str = HOST) -> Iterator[int]:
    """A tiny TCP server on ``host`` answering ``pong:`` + what it got; yields its port."""
    server = socketserver.ThreadingTCPServer((host, 0), _Pong)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def exchange(port: int) -> bytes:
    """Connect to ``port``, send ``ping`` and return what comes back (b"" when refused)."""
    with socket.create_connection((HOST, port), timeout=30) as sock:
        sock.sendall(b"ping")
        try:
            return sock.recv(1024)
        except ConnectionResetError:
            return b""


def listening(port: int) -> bool:
    """True once something accepts connections on ``port``."""
    try:
        socket.create_connection((HOST, port), timeout=1).close()
    except OSError:
        return False
    return True


def forward(endpoint: Endpoint, key: Path, flag: str, spec: str) -> subprocess.Popen[str]:
    """Start ``ssh -N -L spec`` (or ``-R``) in the background (channel refusals are shown)."""
    base = endpoint.base(key)
    argv = [base[0], "-o", "LogLevel=INFO", *base[1:], "-N", "-o", "ExitOnForwardFailure=yes"]
    return subprocess.Popen(
        [*argv, flag, spec],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> str:
    """Stop a background client this test started; its stderr."""
    if proc.poll() is None:
        proc.terminate()
    try:
        _, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a client busy closing its channels: end it
        proc.kill()
        _, err = proc.communicate(timeout=10)
    return err


def forwarded(
    endpoint: Endpoint, key: Path, target_port: int, target_host: str = "127.0.0.1"
) -> bytes:
    """``ssh -L`` to ``target_host:target_port``: what a ``ping`` through it gets back."""
    lport = free_port()
    client = forward(endpoint, key, "-L", f"{lport}:{target_host}:{target_port}")
    try:
        wait_for(lambda: listening(lport) or client.poll() is not None, timeout=15)
        assert client.poll() is None, finish(client)
        return exchange(lport)
    finally:
        finish(client)


def refused_forwards(endpoint: Endpoint, key: Path, target: str, pong: int) -> str:
    """``ssh -L`` to ``target`` gets its connection closed and ``ssh -R`` fails; the ``-L``
    client's stderr."""
    lport = free_port()
    client = forward(endpoint, key, "-L", f"{lport}:{target}")
    try:
        wait_for(lambda: listening(lport) or client.poll() is not None, timeout=15)
        assert exchange(lport) == b""
    finally:
        err = finish(client)
    remote = forward(endpoint, key, "-R", f"0:127.0.0.1:{pong}")
    assert remote.wait(timeout=15) == 255
    assert "remote port forwarding failed" in finish(remote)
    return err
