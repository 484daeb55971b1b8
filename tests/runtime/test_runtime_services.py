"""The local runtime wires the pod's SSH server (direct and proxy) and its Jupyter server."""

from __future__ import annotations

import asyncio
import shlex
import socket
import subprocess
from pathlib import Path
from typing import Any

import asyncssh
import httpx
import pytest
from runtime_helpers import create_pod, log_lines, wait_for, wait_status

pytestmark = pytest.mark.timeout(120)

SSH_OPTIONS = (
    "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes "
    "-o LogLevel=ERROR -o ConnectTimeout=5"
)


@pytest.fixture
def key(tmp_path: Path) -> tuple[Path, str]:
    """A fresh ed25519 key: its private file and its public line."""
    path = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path, path.with_suffix(".pub").read_text().strip()


def _ssh(command: str, key: Path, *, remote: str = "") -> str | None:
    """Run the record's ``ssh`` command with ``-i KEY``; its stdout, None when it failed."""
    argv = shlex.split(command)
    argv[1:1] = ["-i", str(key), *shlex.split(SSH_OPTIONS)]
    done = subprocess.run(
        argv + ([remote] if remote else []),
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


async def _proxy_shell(proxy: dict[str, Any], key: Path, text: str) -> str:
    """Type ``text`` into an interactive shell (with a terminal) of the proxy endpoint."""
    async with asyncssh.connect(
        proxy["host"],
        port=proxy["port"],
        username=proxy["username"],
        client_keys=[str(key)],
        known_hosts=None,
    ) as conn:
        process = await conn.create_process(term_type="xterm")
        process.stdin.write(text)
        output, _ = await asyncio.wait_for(process.communicate(), 20)
        return str(output)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_ssh_direct_and_proxy_reach_the_pod(http: httpx.Client, key: tuple[Path, str]) -> None:
    private, public = key
    pod = create_pod(
        http, args="sleep 120", ports=["22/tcp"], startSsh=True, env={"PUBLIC_KEY": public}
    )
    running = wait_status(http, pod["id"], "RUNNING")
    direct, proxy = running["ssh"]["direct"], running["ssh"]["proxy"]
    assert direct["host"] == proxy["host"] == "127.0.0.1"
    assert direct["port"] == running["runtime"]["ports"][0]["public"]
    out = wait_for(
        lambda: _ssh(direct["command"], private, remote="echo id=$RUNPOD_POD_ID; pwd"),
        timeout=20,
        what="ssh direct",
    )
    assert f"id={pod['id']}" in out
    assert _ssh(proxy["command"], private, remote="true") is None  # the proxy refuses exec
    assert http.delete(f"/v2/pods/{pod['id']}").status_code == 204

    wait_for(lambda: not _listening(direct["port"]), what="ssh port closed after terminate")


def test_ssh_proxy_shell_reaches_the_pod(http: httpx.Client, key: tuple[Path, str]) -> None:
    private, public = key
    pod = create_pod(http, args="sleep 120", startSsh=True, env={"PUBLIC_KEY": public})
    proxy = wait_status(http, pod["id"], "RUNNING")["ssh"]["proxy"]
    wait_for(lambda: _listening(proxy["port"]), what="proxy endpoint listening")
    try:
        shell = asyncio.run(_proxy_shell(proxy, private, "echo via-proxy-$RUNPOD_POD_ID\nexit\n"))
        assert f"via-proxy-{pod['id']}" in shell
    finally:
        http.delete(f"/v2/pods/{pod['id']}")


def test_jupyter_serves_on_the_8888_public_port(http: httpx.Client, local_emu: Any) -> None:
    pod = create_pod(http, ports=["8888/http"], startJupyter=True)
    running = wait_status(http, pod["id"], "RUNNING")
    port = running["runtime"]["ports"][0]["public"]
    lines = log_lines(http, pod["id"], "Jupyter listening", timeout=60, source="system")
    assert any(f"127.0.0.1:{port}" in line for line in lines)
    login = httpx.get(f"http://127.0.0.1:{port}/login", timeout=10)
    assert login.status_code == 200
    assert httpx.get(f"http://127.0.0.1:{port}/api/contents", timeout=10).status_code == 403
    password = running["env"]["JUPYTER_PASSWORD"]
    assert password not in local_emu.log_path.read_text()  # never in the emulator's own log
    assert http.delete(f"/v2/pods/{pod['id']}").status_code == 204
