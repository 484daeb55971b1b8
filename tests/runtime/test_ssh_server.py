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
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from processes import BackgroundLoop, wait_for
from ssh_helpers import (
    HOST,
    Endpoint,
    forwarded,
    keygen,
    pong_server,
    refused_forwards,
    scp,
    sftp,
    ssh,
)

from podbook.emulator.podruntime.sandbox import Sandbox
from podbook.emulator.podruntime.ssh import (
    MARKER_VAR,
    PROXY_REFUSAL,
    PodSshServer,
    kill_orphans,
    load_host_key,
)

pytestmark = pytest.mark.timeout(60)

TOKEN = "pod7xq2-64411fa9"


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
    return {name: keygen(folder, name) for name in ("good", "other")}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """A pod tree: ``/`` is its container disk, ``/workspace`` the workdir inside the root,
    ``/data`` a volume elsewhere."""
    base = tmp_path_factory.mktemp("pod")
    root = base / "root"
    workdir = root / "workspace"
    container = root / "container"
    volume = base / "volume"
    for folder in (workdir, container, volume):
        folder.mkdir(parents=True)
    env = {"PATH": os.environ["PATH"], "RUNPOD_POD_ID": "pod7xq2", "FOO": "bar baz"}
    env["RUNPOD_CONTAINER_DISK"] = str(container)
    return Sandbox(
        root=root,
        workdir=workdir,
        env=env,
        mounts={"/workspace": workdir, "/data": volume},
        container=container,
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


def _endpoint(server: Any, user: str) -> Endpoint:
    return Endpoint(HOST, server.port, user)


@pytest.fixture(scope="module")
def servers(loop: BackgroundLoop, sandbox: Sandbox, keys: dict[str, Path]) -> Iterator[list[Any]]:
    """The pod's direct and proxy servers."""
    started = [_start(loop, sandbox, keys, mode) for mode in ("direct", "proxy")]
    yield started
    for server in started:
        loop.run(server.stop(), timeout=30)


@pytest.fixture(scope="module")
def direct(servers: list[Any]) -> Endpoint:
    """The pod's direct endpoint (user ``root``)."""
    return _endpoint(servers[0], "root")


@pytest.fixture(scope="module")
def proxy(servers: list[Any]) -> Endpoint:
    """The pod's proxy endpoint (user name = the routing token)."""
    return _endpoint(servers[1], TOKEN)


@pytest.fixture
def pong() -> Iterator[int]:
    """A tiny loopback TCP server answering ``pong:`` + what it got; yields its port."""
    with pong_server() as port:
        yield port


# direct ------------------------------------------------------------------------------------


def test_direct_exec_runs_in_the_sandbox_with_its_env(
    direct: Endpoint, keys: dict[str, Path], sandbox: Sandbox
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


def test_direct_exec_takes_the_clients_locale(
    direct: Endpoint, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_PODBOOK_TEST", "kept")
    monkeypatch.setenv("OTHER_PODBOOK_TEST", "dropped")
    flags = ("-o", "SendEnv=LC_PODBOOK_TEST OTHER_PODBOOK_TEST")
    result = ssh(direct, keys["good"], 'echo "$LC_PODBOOK_TEST/$OTHER_PODBOOK_TEST"', flags=flags)
    assert result.stdout == "kept/\n", result.stderr


def test_direct_exec_stdin_stderr_and_exit_status(direct: Endpoint, keys: dict[str, Path]) -> None:
    result = ssh(direct, keys["good"], "tr a-z A-Z; echo oops >&2; exit 7", stdin="quiet\n")
    assert (result.stdout, result.returncode) == ("QUIET\n", 7)
    assert "oops" in result.stderr


def test_direct_interactive_shell_on_a_pty(
    direct: Endpoint, keys: dict[str, Path], sandbox: Sandbox
) -> None:
    script = "echo pty-$((40+2)); tty; pwd; exit 5\n"
    result = ssh(direct, keys["good"], flags=("-tt",), stdin=script)
    assert result.returncode == 5, result.stdout + result.stderr
    assert "pty-42" in result.stdout
    assert "/dev/pts/" in result.stdout
    assert str(sandbox.workdir) in result.stdout


def test_direct_scp_both_ways(
    direct: Endpoint, keys: dict[str, Path], sandbox: Sandbox, tmp_path: Path
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
    direct: Endpoint, keys: dict[str, Path], sandbox: Sandbox, tmp_path: Path
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


def test_direct_sftp(
    direct: Endpoint, keys: dict[str, Path], sandbox: Sandbox, tmp_path: Path
) -> None:
    local = tmp_path / "s.txt"
    local.write_text("sftp\n")
    batch = f"pwd\nput {local} s.txt\nmkdir sub\nls\nget s.txt {tmp_path / 's-back.txt'}\n"
    batch += f"put {local} /etc-like.txt\n"
    result = sftp(direct, keys["good"], batch)
    assert result.returncode == 0, result.stderr
    assert "Remote working directory: /workspace" in result.stdout
    assert (sandbox.workdir / "s.txt").read_text() == "sftp\n"
    assert (sandbox.workdir / "sub").is_dir()
    assert (tmp_path / "s-back.txt").read_text() == "sftp\n"
    assert (Path(sandbox.env["RUNPOD_CONTAINER_DISK"]) / "etc-like.txt").exists()  # / = the disk


def test_direct_local_forward_to_loopback(
    direct: Endpoint, keys: dict[str, Path], pong: int
) -> None:
    assert forwarded(direct, keys["good"], pong) == b"pong:ping"
    assert forwarded(direct, keys["good"], pong, "localhost") == b"pong:ping"


def test_direct_local_forward_reaches_another_loopback_address(
    direct: Endpoint, keys: dict[str, Path]
) -> None:
    # A cluster member listens at its own address (127.0.0.2, ...): a forward reaches it there.
    with pong_server("127.0.0.2") as port:
        assert forwarded(direct, keys["good"], port, "127.0.0.2") == b"pong:ping"


def test_direct_forward_beyond_loopback_and_remote_forward_refused(
    direct: Endpoint, keys: dict[str, Path], pong: int
) -> None:
    # The server refuses without connecting anywhere (0.0.0.0 is not a loopback address).
    err = refused_forwards(direct, keys["good"], "0.0.0.0:80", pong)
    assert "loopback" in err


# proxy -------------------------------------------------------------------------------------


def test_proxy_shell_works(proxy: Endpoint, keys: dict[str, Path], sandbox: Sandbox) -> None:
    result = ssh(proxy, keys["good"], flags=("-tt",), stdin="echo via-$((6*7)); pwd; exit\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "via-42" in result.stdout
    assert str(sandbox.workdir) in result.stdout


def test_proxy_exec_refused(proxy: Endpoint, keys: dict[str, Path], sandbox: Sandbox) -> None:
    result = ssh(proxy, keys["good"], "touch exec-ran")
    assert result.returncode == 1
    assert PROXY_REFUSAL in result.stderr
    assert not (sandbox.workdir / "exec-ran").exists()
    # a shell without a terminal (a script on stdin) is an exec in disguise: refused too
    result = ssh(proxy, keys["good"], flags=("-T",), stdin="touch exec-ran\n")
    assert result.returncode == 1
    assert "needs a terminal" in result.stderr
    assert not (sandbox.workdir / "exec-ran").exists()


def test_proxy_scp_and_sftp_refused(
    proxy: Endpoint, keys: dict[str, Path], sandbox: Sandbox, tmp_path: Path
) -> None:
    local = tmp_path / "p.txt"
    local.write_text("no\n")
    for legacy in (False, True):
        result = scp(proxy, keys["good"], str(local), "REMOTE:p.txt", legacy=legacy)
        assert result.returncode != 0
        assert not (sandbox.workdir / "p.txt").exists()
    assert PROXY_REFUSAL in result.stderr  # the legacy scp shows the server's message
    result = sftp(proxy, keys["good"], f"put {local} p.txt\n")
    assert result.returncode != 0
    assert "subsystem request failed" in result.stderr  # refused before any channel data
    assert not (sandbox.workdir / "p.txt").exists()


def test_proxy_forwarding_refused(proxy: Endpoint, keys: dict[str, Path], pong: int) -> None:
    err = refused_forwards(proxy, keys["good"], f"127.0.0.1:{pong}", pong)
    assert "administratively prohibited" in err
    assert "shell only" in err


# authentication ----------------------------------------------------------------------------


def test_unregistered_key_refused(direct: Endpoint, proxy: Endpoint, keys: dict[str, Path]) -> None:
    for endpoint in (direct, proxy):
        result = ssh(endpoint, keys["other"], "true")
        assert result.returncode == 255
        assert "Permission denied (publickey)" in result.stderr


def test_wrong_user_names_refused(direct: Endpoint, proxy: Endpoint, keys: dict[str, Path]) -> None:
    for endpoint, user in ((direct, TOKEN), (direct, "ubuntu"), (proxy, "root"), (proxy, "jörg")):
        wrong = Endpoint(endpoint.host, endpoint.port, user)
        assert ssh(wrong, keys["good"], flags=("-tt",), stdin="exit\n").returncode == 255


def test_only_public_keys_are_offered(direct: Endpoint, keys: dict[str, Path]) -> None:
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


def test_closed_session_ends_its_command(direct: Endpoint, keys: dict[str, Path]) -> None:
    client = subprocess.Popen(
        [*direct.base(keys["good"]), "echo $$; exec sleep 60"],
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
    endpoint = _endpoint(server, "root")
    stopped = False
    try:
        started = ssh(
            endpoint,
            keys["good"],
            "nohup sleep 301 >/dev/null 2>&1 & echo $!;"
            " setsid sleep 302 >/dev/null 2>&1 </dev/null & echo $!;"
            " (trap '' TERM; exec sleep 303) >/dev/null 2>&1 </dev/null & echo $!",
        )
        assert started.returncode == 0, started.stderr
        pids = [int(line) for line in started.stdout.split()]
        assert len(pids) == 3
        shell = subprocess.Popen(
            [*endpoint.base(keys["good"]), "-tt"],
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


def test_kill_orphans_ends_what_a_dead_emulators_sessions_left() -> None:
    def sleeper(pod_id: str) -> subprocess.Popen[bytes]:
        env = {**os.environ, MARKER_VAR: "dead-server", "RUNPOD_POD_ID": pod_id}
        return subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)

    orphan, other = sleeper("pod-gone"), sleeper("pod-elsewhere")
    try:
        wait_for(lambda: _has_marker(orphan.pid), timeout=5)
        assert kill_orphans(["pod-gone"]) == 1
        assert orphan.wait(timeout=5) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        for proc in (orphan, other):
            proc.kill()
            proc.wait(timeout=5)


def _has_marker(pid: int) -> bool:
    try:
        return MARKER_VAR in psutil.Process(pid).environ()
    except psutil.Error:
        return False
