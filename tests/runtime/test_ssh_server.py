"""The pod SSH server (``podruntime.ssh.PodSshServer``) against the real OpenSSH client.

The servers run in a background asyncio loop on 127.0.0.1 with a temporary sandbox; keys come
from ``ssh-keygen``. Direct: exec, an interactive shell on a pty, scp both ways (SFTP and
legacy ``-O``), sftp, a local forward to a loopback TCP server. Proxy: a shell with a terminal,
and exec, scp, sftp and forwarding refused. Keys that are not registered, passwords and wrong
user names are refused; ``stop()`` leaves no process behind.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import socketserver
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from processes import BackgroundLoop, wait_for

from podbook.emulator.podruntime.sandbox import Sandbox
from podbook.emulator.podruntime.ssh import PROXY_REFUSAL, PodSshServer, load_host_key

HOST = "127.0.0.1"
TOKEN = "pod7xq2-64411fa9"
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


@pytest.fixture(scope="module")
def loop() -> Iterator[BackgroundLoop]:
    """The asyncio loop the servers run in."""
    assert shutil.which("ssh"), "the OpenSSH client (openssh-client) is needed"
    background = BackgroundLoop()
    yield background
    background.close()


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two ed25519 key pairs: ``good`` is registered, ``other`` is not."""
    folder = tmp_path_factory.mktemp("keys")
    made = {}
    for name in ("good", "other"):
        path = folder / name
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)],
            check=True,
            timeout=30,
        )
        made[name] = path
    return made


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """A pod tree: ``/workspace`` is the workdir inside the root, ``/data`` a volume elsewhere."""
    base = tmp_path_factory.mktemp("pod")
    root = base / "root"
    workdir = root / "workspace"
    volume = base / "volume"
    for folder in (workdir, volume):
        folder.mkdir(parents=True)
    env = {"PATH": os.environ["PATH"], "RUNPOD_POD_ID": "pod7xq2", "FOO": "bar baz"}
    return Sandbox(
        root=root, workdir=workdir, env=env, mounts={"/workspace": workdir, "/data": volume}
    )


def _start(loop: BackgroundLoop, sandbox: Sandbox, keys: dict[str, Path], mode: str) -> Any:
    host_key = sandbox.root.parent / f"host_key_{mode}"
    registered = [f"# the account's keys\n{keys['good'].with_suffix('.pub').read_text()}"]
    return loop.run(
        PodSshServer.start(
            host=HOST,
            port=0,
            mode=mode,  # type: ignore[arg-type]
            authorized_keys=registered,
            sandbox=sandbox,
            host_key=host_key,
            proxy_username=TOKEN if mode == "proxy" else None,
        ),
        timeout=30,
    )


@pytest.fixture(scope="module")
def direct(loop: BackgroundLoop, sandbox: Sandbox, keys: dict[str, Path]) -> Iterator[Any]:
    """The pod's direct endpoint."""
    server = _start(loop, sandbox, keys, "direct")
    yield server
    loop.run(server.stop(), timeout=30)


@pytest.fixture(scope="module")
def proxy(loop: BackgroundLoop, sandbox: Sandbox, keys: dict[str, Path]) -> Iterator[Any]:
    """The pod's proxy endpoint (user name = the routing token)."""
    server = _start(loop, sandbox, keys, "proxy")
    yield server
    loop.run(server.stop(), timeout=30)


def ssh_argv(server: Any, key: Path, *args: str, user: str = "root") -> list[str]:
    """An ``ssh`` command line to ``server``."""
    return ["ssh", *OPTS, "-i", str(key), "-p", str(server.port), *args, f"{user}@{HOST}"]


def ssh(
    server: Any,
    key: Path,
    *remote: str,
    flags: tuple[str, ...] = (),
    user: str = "root",
    stdin: str | None = None,
    timeout: float = 20,
) -> subprocess.CompletedProcess[str]:
    """Run the OpenSSH client against ``server`` and return what it did."""
    return subprocess.run(
        [*ssh_argv(server, key, *flags, user=user), *remote],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def scp(
    server: Any, key: Path, *paths: str, legacy: bool = False, user: str = "root"
) -> subprocess.CompletedProcess[str]:
    """Run ``scp`` (SFTP protocol, or the legacy one with ``legacy``) against ``server``."""
    argv = ["scp", *OPTS, "-i", str(key), "-P", str(server.port), *(["-O"] if legacy else [])]
    paths = tuple(p.replace("REMOTE:", f"{user}@{HOST}:") for p in paths)
    return subprocess.run(
        [*argv, *paths], capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
    )


def sftp(
    server: Any, key: Path, batch: str, user: str = "root"
) -> subprocess.CompletedProcess[str]:
    """Run an ``sftp`` batch against ``server``."""
    argv = ["sftp", *OPTS, "-i", str(key), "-P", str(server.port), "-b", "-", f"{user}@{HOST}"]
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


@pytest.fixture
def pong() -> Iterator[int]:
    """A tiny loopback TCP server answering ``pong:`` + what it got; yields its port."""
    server = socketserver.ThreadingTCPServer((HOST, 0), _Pong)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def exchange(port: int) -> bytes:
    """Connect to ``port``, send ``ping`` and return what comes back (b"" when refused)."""
    with socket.create_connection((HOST, port), timeout=10) as sock:
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


def forward(server: Any, key: Path, spec: str, user: str = "root") -> subprocess.Popen[str]:
    """Start ``ssh -N -L spec`` (or ``-R``) in the background."""
    flag, _, rest = spec.partition(" ")
    argv = ssh_argv(server, key, "-N", "-o", "ExitOnForwardFailure=yes", flag, rest, user=user)
    argv[1:1] = ["-o", "LogLevel=INFO"]  # the first value wins: show channel refusals
    return subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(proc: subprocess.Popen[str]) -> str:
    """Stop a background client started by this test; its stderr."""
    if proc.poll() is None:
        proc.terminate()
    _, err = proc.communicate(timeout=10)
    return err


# direct ------------------------------------------------------------------------------------


def test_direct_exec_runs_in_the_sandbox_with_its_env(
    direct: Any, keys: dict[str, Path], sandbox: Sandbox
) -> None:
    result = ssh(direct, keys["good"], "echo hi; pwd; env")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "hi"
    assert lines[1] == str(sandbox.workdir)
    assert f"HOME={sandbox.workdir}" in lines
    assert "FOO=bar baz" in lines
    assert "RUNPOD_POD_ID=pod7xq2" in lines
    assert any(line.startswith("SSH_CONNECTION=127.0.0.1 ") for line in lines)


def test_direct_exec_stdin_stderr_and_exit_status(direct: Any, keys: dict[str, Path]) -> None:
    result = ssh(direct, keys["good"], "tr a-z A-Z; echo oops >&2; exit 7", stdin="quiet\n")
    assert (result.stdout, result.returncode) == ("QUIET\n", 7)
    assert "oops" in result.stderr


def test_direct_interactive_shell_on_a_pty(
    direct: Any, keys: dict[str, Path], sandbox: Sandbox
) -> None:
    script = "echo pty-$((40+2)); tty; pwd; exit 5\n"
    result = ssh(direct, keys["good"], flags=("-tt",), stdin=script)
    assert result.returncode == 5, result.stdout + result.stderr
    assert "pty-42" in result.stdout
    assert "/dev/pts/" in result.stdout
    assert str(sandbox.workdir) in result.stdout


def test_direct_scp_both_ways(
    direct: Any, keys: dict[str, Path], sandbox: Sandbox, tmp_path: Path
) -> None:
    local = tmp_path / "up.txt"
    local.write_text("to the pod\n")
    # the pod's home (workdir), its /data volume, and back from the pod's /workspace path
    assert scp(direct, keys["good"], str(local), "REMOTE:").returncode == 0
    assert (sandbox.workdir / "up.txt").read_text() == "to the pod\n"
    assert scp(direct, keys["good"], str(local), "REMOTE:/data/v.txt").returncode == 0
    assert (sandbox.mounts["/data"] / "v.txt").read_text() == "to the pod\n"
    (sandbox.workdir / "down.txt").write_text("from the pod\n")
    back = tmp_path / "back.txt"
    result = scp(direct, keys["good"], "REMOTE:/workspace/down.txt", str(back))
    assert result.returncode == 0, result.stderr
    assert back.read_text() == "from the pod\n"
    # the real path the shell's pwd shows works too
    again = tmp_path / "again.txt"
    assert (
        scp(direct, keys["good"], f"REMOTE:{sandbox.workdir}/down.txt", str(again)).returncode == 0
    )
    assert again.read_text() == "from the pod\n"


def test_direct_legacy_scp_both_ways(
    direct: Any, keys: dict[str, Path], sandbox: Sandbox, tmp_path: Path
) -> None:
    local = tmp_path / "legacy.txt"
    local.write_text("old protocol\n")
    result = scp(direct, keys["good"], str(local), "REMOTE:legacy.txt", legacy=True)
    assert result.returncode == 0, result.stderr
    assert (sandbox.workdir / "legacy.txt").read_text() == "old protocol\n"
    back = tmp_path / "legacy-back.txt"
    result = scp(direct, keys["good"], "REMOTE:/workspace/legacy.txt", str(back), legacy=True)
    assert result.returncode == 0, result.stderr
    assert back.read_text() == "old protocol\n"


def test_direct_sftp(direct: Any, keys: dict[str, Path], sandbox: Sandbox, tmp_path: Path) -> None:
    local = tmp_path / "s.txt"
    local.write_text("sftp\n")
    batch = f"pwd\nput {local} s.txt\nmkdir sub\nls\nget s.txt {tmp_path / 's-back.txt'}\n"
    result = sftp(direct, keys["good"], batch)
    assert result.returncode == 0, result.stderr
    assert "Remote working directory: /workspace" in result.stdout
    assert (sandbox.workdir / "s.txt").read_text() == "sftp\n"
    assert (sandbox.workdir / "sub").is_dir()
    assert (tmp_path / "s-back.txt").read_text() == "sftp\n"


def test_direct_local_forward_to_loopback(direct: Any, keys: dict[str, Path], pong: int) -> None:
    lport = free_port()
    client = forward(direct, keys["good"], f"-L {lport}:127.0.0.1:{pong}")
    try:
        wait_for(lambda: listening(lport) or client.poll() is not None, timeout=15)
        assert client.poll() is None, finish(client)
        assert exchange(lport) == b"pong:ping"
    finally:
        finish(client)


def refused_forwards(server: Any, key: Path, target: str, pong: int, user: str = "root") -> str:
    """``ssh -L`` to ``target`` gets its connection closed and ``ssh -R`` fails; the ``-L``
    client's stderr."""
    lport = free_port()
    client = forward(server, key, f"-L {lport}:{target}", user=user)
    try:
        wait_for(lambda: listening(lport) or client.poll() is not None, timeout=15)
        assert exchange(lport) == b""
    finally:
        err = finish(client)
    remote = forward(server, key, f"-R 0:127.0.0.1:{pong}", user=user)
    assert remote.wait(timeout=15) == 255
    assert "remote port forwarding failed" in finish(remote)
    return err


def test_direct_forward_beyond_loopback_and_remote_forward_refused(
    direct: Any, keys: dict[str, Path], pong: int
) -> None:
    # The server refuses without connecting anywhere (192.0.2.1 is a documentation address).
    err = refused_forwards(direct, keys["good"], "192.0.2.1:80", pong)
    assert "loopback" in err


# proxy -------------------------------------------------------------------------------------


def test_proxy_shell_works(proxy: Any, keys: dict[str, Path], sandbox: Sandbox) -> None:
    result = ssh(
        proxy, keys["good"], flags=("-tt",), user=TOKEN, stdin="echo via-$((6*7)); pwd; exit\n"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "via-42" in result.stdout
    assert str(sandbox.workdir) in result.stdout


def test_proxy_exec_refused(proxy: Any, keys: dict[str, Path], sandbox: Sandbox) -> None:
    result = ssh(proxy, keys["good"], "touch exec-ran", user=TOKEN)
    assert result.returncode == 1
    assert PROXY_REFUSAL in result.stderr
    assert not (sandbox.workdir / "exec-ran").exists()
    # a shell without a terminal (a script on stdin) is an exec in disguise: refused too
    result = ssh(proxy, keys["good"], flags=("-T",), user=TOKEN, stdin="touch exec-ran\n")
    assert result.returncode == 1
    assert "needs a terminal" in result.stderr
    assert not (sandbox.workdir / "exec-ran").exists()


def test_proxy_scp_and_sftp_refused(
    proxy: Any, keys: dict[str, Path], sandbox: Sandbox, tmp_path: Path
) -> None:
    local = tmp_path / "p.txt"
    local.write_text("no\n")
    for legacy in (False, True):
        result = scp(proxy, keys["good"], str(local), "REMOTE:p.txt", legacy=legacy, user=TOKEN)
        assert result.returncode != 0
        assert not (sandbox.workdir / "p.txt").exists()
    assert PROXY_REFUSAL in result.stderr  # the legacy scp shows the server's message
    result = sftp(proxy, keys["good"], f"put {local} p.txt\n", user=TOKEN)
    assert result.returncode != 0
    assert "subsystem request failed" in result.stderr  # refused before any channel data
    assert not (sandbox.workdir / "p.txt").exists()


def test_proxy_forwarding_refused(proxy: Any, keys: dict[str, Path], pong: int) -> None:
    err = refused_forwards(proxy, keys["good"], f"127.0.0.1:{pong}", pong, user=TOKEN)
    assert "administratively prohibited" in err
    assert "shell only" in err


# authentication ----------------------------------------------------------------------------


def test_unregistered_key_refused(direct: Any, proxy: Any, keys: dict[str, Path]) -> None:
    for server, user in ((direct, "root"), (proxy, TOKEN)):
        result = ssh(server, keys["other"], "true", user=user)
        assert result.returncode == 255
        assert "Permission denied (publickey)" in result.stderr


def test_wrong_user_names_refused(direct: Any, proxy: Any, keys: dict[str, Path]) -> None:
    assert ssh(direct, keys["good"], "true", user=TOKEN).returncode == 255
    assert ssh(direct, keys["good"], "true", user="ubuntu").returncode == 255
    assert ssh(proxy, keys["good"], "-tt", user="root", stdin="exit\n").returncode == 255


def test_only_public_keys_are_offered(direct: Any, keys: dict[str, Path]) -> None:
    result = ssh(
        direct,
        keys["good"],
        "true",
        flags=("-o", "PreferredAuthentications=password,keyboard-interactive"),
    )
    assert result.returncode == 255
    assert "Permission denied (publickey)" in result.stderr


def test_host_key_is_kept_and_private(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "host_ed25519"
    first = load_host_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert first.algorithm == b"ssh-ed25519"
    assert load_host_key(path).public_data == first.public_data


# processes ---------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_closed_session_ends_its_command(direct: Any, keys: dict[str, Path]) -> None:
    client = subprocess.Popen(
        [*ssh_argv(direct, keys["good"]), "echo $$; exec sleep 60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert client.stdout is not None
    pid = int(client.stdout.readline())
    assert _alive(pid)
    client.send_signal(signal.SIGKILL)
    client.communicate(timeout=10)
    wait_for(lambda: not _alive(pid), timeout=10, what="the command of a closed session ended")


def test_stop_leaves_no_process(
    loop: BackgroundLoop, sandbox: Sandbox, keys: dict[str, Path]
) -> None:
    server = _start(loop, sandbox, keys, "direct")
    stopped = False
    try:
        started = ssh(
            server,
            keys["good"],
            "nohup sleep 301 >/dev/null 2>&1 & echo $!;"
            " setsid sleep 302 >/dev/null 2>&1 </dev/null & echo $!;"
            " (trap '' TERM; exec sleep 303) >/dev/null 2>&1 </dev/null & echo $!",
        )
        assert started.returncode == 0, started.stderr
        pids = [int(line) for line in started.stdout.split()]
        assert len(pids) == 3
        shell = subprocess.Popen(
            ssh_argv(server, keys["good"], "-tt"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        wait_for(
            lambda: any(
                (p.info["environ"] or {}).get(server.marker[0]) == server.marker[1]
                and p.info["name"] == "bash"
                and p.pid not in pids
                for p in psutil.process_iter(["environ", "name"], ad_value=None)
            ),
            timeout=10,
            what="the interactive shell started",
        )
        assert all(_alive(pid) for pid in pids)
        loop.run(server.stop(), timeout=30)
        stopped = True
        assert not [pid for pid in pids if _alive(pid)]
        name, value = server.marker
        left = [
            p.pid
            for p in psutil.process_iter(["environ"], ad_value=None)
            if (p.info["environ"] or {}).get(name) == value and _alive(p.pid)
        ]
        assert left == []
        assert shell.wait(timeout=10) == 255  # the client saw the server go
    finally:
        if not stopped:
            loop.run(server.stop(), timeout=30)
