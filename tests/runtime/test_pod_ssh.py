"""SSH into pods of ``podbook emulator --runtime local`` with the pod record's own commands.

The ``ssh.direct.command`` and ``ssh.proxy.command`` strings run as they are with the OpenSSH
client (only ``-i KEY`` and the non-interactive ``-o`` options are appended): direct gives exec,
scp both ways and a forwarded port; proxy gives a shell and refuses exec, scp and forwarding;
a key the account did not register is refused; a pod without ``startSsh`` has no SSH; the SSH
sessions' processes end with the pod.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from runtime_helpers import LOCAL, create_pod, wait_for, wait_status
from ssh_helpers import (
    Endpoint,
    forwarded,
    keygen,
    pong_server,
    refused_forwards,
    scp,
    ssh,
)

from podbook.emulator.podruntime.landlock import abi_version
from podbook.emulator.podruntime.ssh import PROXY_REFUSAL

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``good`` (registered on the account while the module runs) and ``other`` (never)."""
    assert shutil.which("ssh"), "the OpenSSH client (openssh-client) is needed"
    folder = tmp_path_factory.mktemp("podkeys")
    return {name: keygen(folder, name) for name in ("good", "other")}


@pytest.fixture(scope="module")
def registered(local_emu: Any, keys: dict[str, Path]) -> Iterator[httpx.Client]:
    """Account A's client with the ``good`` key added to its SSH keys (restored afterwards)."""
    with local_emu.http() as http:
        before = http.get("/v2/account/ssh-keys").json()["keys"]
        mine = keys["good"].with_suffix(".pub").read_text().strip()
        response = http.put("/v2/account/ssh-keys", json={"keys": [*before, mine]})
        assert response.status_code == 200, response.text
        yield http
        http.put("/v2/account/ssh-keys", json={"keys": before})


def endpoints(pod: dict[str, Any]) -> tuple[Endpoint, Endpoint]:
    """The pod record's direct and proxy endpoints, each with its own ``command``."""
    made = []
    for kind in ("direct", "proxy"):
        block = pod["ssh"][kind]
        assert block is not None, pod["ssh"]
        assert block["host"].startswith("127."), block
        made.append(Endpoint(block["host"], block["port"], block["username"], block["command"]))
    return made[0], made[1]


def wait_ssh(endpoint: Endpoint, key: Path) -> subprocess.CompletedProcess[str]:
    """Run ``echo ready`` through ``endpoint`` until its server answers (it starts with the pod)."""

    def attempt() -> subprocess.CompletedProcess[str] | None:
        result = ssh(endpoint, key, "echo ready")
        return result if result.returncode == 0 else None

    return wait_for(attempt, timeout=20, interval=0.1, what="the pod's SSH server answered")


@pytest.fixture(scope="module")
def ssh_pod(registered: httpx.Client, keys: dict[str, Path]) -> Iterator[dict[str, Any]]:
    """A running pod with ``startSsh`` and ``22/tcp`` whose SSH answers."""
    pod = create_pod(registered, args="sleep 600", startSsh=True, ports=["22/tcp", "8000/tcp"])
    running = wait_status(registered, pod["id"], "RUNNING", timeout=30)
    wait_ssh(endpoints(running)[0], keys["good"])
    yield running
    registered.delete(f"/v2/pods/{pod['id']}")


def test_direct_command_runs_commands_in_the_pod(
    ssh_pod: dict[str, Any], keys: dict[str, Path]
) -> None:
    direct, _ = endpoints(ssh_pod)
    assert direct.command.startswith("ssh root@127.")
    result = ssh(direct, keys["good"], 'echo "pod=$RUNPOD_POD_ID"; pwd; echo "home=$HOME"')
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert f"pod={ssh_pod['id']}" in lines
    assert lines[1] == lines[2].removeprefix("home=")


@pytest.mark.skipif(abi_version() < 1, reason="the kernel has no Landlock")
def test_an_ssh_session_cannot_read_the_emulators_key_file(
    ssh_pod: dict[str, Any], keys: dict[str, Path], local_emu: Any
) -> None:
    direct, _ = endpoints(ssh_pod)
    result = ssh(direct, keys["good"], f"cat {local_emu.home / 'emulator.key'}; echo $?")
    assert "Permission denied" in result.stderr
    assert result.stdout.strip() == "1"
    assert (local_emu.home / "emulator.key").read_text().strip() not in result.stdout


def test_direct_scp_both_ways_and_a_forwarded_port(
    ssh_pod: dict[str, Any], keys: dict[str, Path], tmp_path: Path
) -> None:
    direct, _ = endpoints(ssh_pod)
    local = tmp_path / "model.txt"
    local.write_text("weights\n")
    result = scp(direct, keys["good"], str(local), "REMOTE:model.txt")
    assert result.returncode == 0, result.stderr
    assert ssh(direct, keys["good"], "cat model.txt").stdout == "weights\n"
    ssh(direct, keys["good"], "echo results > out.txt")
    back = tmp_path / "out.txt"
    result = scp(direct, keys["good"], "REMOTE:out.txt", str(back), legacy=True)
    assert result.returncode == 0, result.stderr
    assert back.read_text() == "results\n"
    with pong_server() as port:
        assert forwarded(direct, keys["good"], port) == b"pong:ping"


def test_proxy_command_gives_a_shell_only(ssh_pod: dict[str, Any], keys: dict[str, Path]) -> None:
    _, proxy = endpoints(ssh_pod)
    assert proxy.user != "root"
    shell = ssh(proxy, keys["good"], flags=("-tt",), stdin="echo in-$RUNPOD_POD_ID; exit\n")
    assert shell.returncode == 0, shell.stdout + shell.stderr
    assert f"in-{ssh_pod['id']}" in shell.stdout
    refused = ssh(proxy, keys["good"], "echo no")
    assert refused.returncode == 1
    assert PROXY_REFUSAL in refused.stderr
    assert scp(proxy, keys["good"], "REMOTE:x", "/dev/null").returncode != 0
    with pong_server() as port:
        err = refused_forwards(proxy, keys["good"], f"127.0.0.1:{port}", port)
    assert "administratively prohibited" in err


def test_unregistered_key_refused(ssh_pod: dict[str, Any], keys: dict[str, Path]) -> None:
    for endpoint in endpoints(ssh_pod):
        result = ssh(endpoint, keys["other"], flags=("-tt",), stdin="exit\n")
        assert result.returncode == 255
        assert "Permission denied (publickey)" in result.stderr


def test_no_start_ssh_no_ssh(registered: httpx.Client, keys: dict[str, Path]) -> None:
    pod = create_pod(registered, args="sleep 600", ports=["22/tcp"])
    try:
        running = wait_status(registered, pod["id"], "RUNNING", timeout=30)
        # no command that would reach another server (port 22 is the host's own sshd)
        assert running["ssh"]["proxy"] is None and running["ssh"]["direct"] is None
        assert "no SSH server" in running["ssh"]["unavailable"]
        port = next(r["public"] for r in running["runtime"]["ports"] if r["private"] == 22)
        endpoint = Endpoint("127.0.0.1", int(port), "root")
        result = ssh(endpoint, keys["good"], flags=("-tt",), stdin="exit\n")
        assert result.returncode == 255  # nothing listens on the pod's 22/tcp
    finally:
        registered.delete(f"/v2/pods/{pod['id']}")


def left_behind(http: httpx.Client, key: Path) -> int:
    """Start a pod with SSH and leave a background process of an SSH session in it; its pid."""
    pod = create_pod(http, args="sleep 600", startSsh=True, ports=["22/tcp"])
    running = wait_status(http, pod["id"], "RUNNING", timeout=30)
    direct, _ = endpoints(running)
    wait_ssh(direct, key)
    started = ssh(direct, key, "nohup sleep 304 >/dev/null 2>&1 & echo $!")
    pid = int(started.stdout)
    assert psutil.pid_exists(pid)
    return pid


def gone(pid: int) -> bool:
    """True once ``pid`` has ended."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_ssh_processes_end_with_the_pod(registered: httpx.Client, keys: dict[str, Path]) -> None:
    pid = left_behind(registered, keys["good"])
    pod_id = psutil.Process(pid).environ()["RUNPOD_POD_ID"]
    assert registered.delete(f"/v2/pods/{pod_id}").status_code in (200, 204)
    wait_for(lambda: gone(pid), timeout=15, what="the SSH session's background process ended")


def test_ssh_processes_end_with_the_emulator(start_emulator: Any, keys: dict[str, Path]) -> None:
    emu = start_emulator(extra_args=LOCAL)
    with emu.http() as http:
        mine = keys["good"].with_suffix(".pub").read_text().strip()
        assert http.put("/v2/account/ssh-keys", json={"keys": [mine]}).status_code == 200
        pid = left_behind(http, keys["good"])
    emu.stop()
    wait_for(
        lambda: gone(pid), timeout=15, what="the SSH session's process ended with the emulator"
    )


def test_kill_9_then_restart_ends_what_ssh_sessions_left(
    start_emulator: Any, keys: dict[str, Path]
) -> None:
    emu = start_emulator(extra_args=LOCAL)
    with emu.http() as http:
        mine = keys["good"].with_suffix(".pub").read_text().strip()
        assert http.put("/v2/account/ssh-keys", json={"keys": [mine]}).status_code == 200
        pid = left_behind(http, keys["good"])
    try:
        os.kill(emu.proc.pid, signal.SIGKILL)
        emu.proc.wait()
        assert not gone(pid)  # nothing ended it yet: the emulator died without a word
        emu.start()
        wait_for(lambda: gone(pid), timeout=15, what="the restarted emulator ended the SSH orphan")
    finally:
        if not gone(pid):  # this test's own process: never leave it behind
            os.kill(pid, signal.SIGKILL)
        emu.stop()
