"""``client.pods.wait_for(pod, "RUNNING", ready=...)``: it returns only once the pod's SSH
server takes an OpenSSH login and its Jupyter serves the login page (pods of a local-runtime
emulator read RUNNING before their services are up, as on the service)."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from runtime_helpers import wait_for
from ssh_helpers import Endpoint, keygen, ssh

from podbook import Client
from podbook.client.readiness import not_ready
from podbook.errors import InvalidRequest, WaitTimeout

pytestmark = pytest.mark.timeout(120)


def test_wait_for_ready_returns_when_ssh_and_jupyter_answer(
    either_emu: Any, tmp_path: Path
) -> None:
    key = keygen(tmp_path, "id_ed25519")
    with Client(api_key=either_emu.api_key, url=either_emu.url) as client:
        before = client.account.ssh_keys.get().keys
        client.account.ssh_keys.put([*before, key.with_suffix(".pub").read_text().strip()])
        pod = client.pods.create(
            name="ready",
            image="runpod/pytorch",
            gpu={"id": "NVIDIA GeForce RTX 4090"},
            args="exec sleep 600",
            ports=["22/tcp", "8888/http"],
            start_ssh=True,
            start_jupyter=True,
        )
        try:
            ready = client.pods.wait_for(
                pod, "RUNNING", ready="ssh,jupyter", timeout=60, poll_interval=0.05
            )
            direct = Endpoint(ready.ssh.direct.host, ready.ssh.direct.port, "root")
            login = ssh(direct, key, "true", timeout=30)
            log = Path(either_emu.log_path).read_text(errors="replace")[-3000:]
            assert login.returncode == 0, (login.stderr, log)  # at once: no retry needed
            public = next(p.public for p in ready.runtime.ports if p.private == 8888)
            assert httpx.get(f"http://127.0.0.1:{public}/login").status_code == 200
        finally:
            client.pods.terminate(pod.id)
            client.account.ssh_keys.put(before)


def test_what_is_not_ready_is_named_and_a_bad_name_is_refused(either_emu: Any) -> None:
    with Client(api_key=either_emu.api_key, url=either_emu.url) as client:
        with pytest.raises(InvalidRequest, match="'sshd' is not a service; use ssh, jupyter"):
            client.pods.wait_for("any", "RUNNING", ready=["sshd"])
        with pytest.raises(InvalidRequest, match="needs status RUNNING"):
            client.pods.wait_for("any", "EXITED", ready="ssh")
        pod = client.pods.create(
            name="not-ready", image="x", gpu={"id": "NVIDIA GeForce RTX 4090"}, args="sleep 600"
        )
        try:
            with pytest.raises(WaitTimeout) as caught:
                client.pods.wait_for(pod, "RUNNING", ready="jupyter", timeout=3, poll_interval=0.1)
            assert str(caught.value).startswith(f"pod {pod.id} is RUNNING but not ready within 3 s")
            assert "Jupyter: the pod does not expose 8888/http" in str(caught.value)
        finally:
            client.pods.terminate(pod.id)


# A server on the pod's 5432 that waits for ``go`` in its working directory (its volume), then
# greets each client. In the sandbox it listens on the private port (the box carries the
# public one to it); in the process runtime on the public port (``RUNPOD_TCP_PORT_5432``).
GREETER = (
    'echo waiting for go; while [ ! -e go ]; do sleep 0.05; done; exec python3 -c "'
    "import os,socket\n"
    "port=int(os.environ.get('LISTEN') or os.environ['RUNPOD_TCP_PORT_5432'])\n"
    "s=socket.create_server(('127.0.0.1',port));print('listening',flush=True)\n"
    "while True:\n c,_=s.accept();c.sendall(b'hello');c.close()\""
)


def test_a_tcp_port_reads_listening_only_once_the_pod_listens(
    either_emu: Any, tmp_path: Path
) -> None:
    boxed = "bwrap" in either_emu.extra_args
    with Client(api_key=either_emu.api_key, url=either_emu.url) as client:
        pod = client.pods.create(
            name="tcp-ready",
            image="runpod/base",
            gpu={"id": "NVIDIA GeForce RTX 4090"},
            args=GREETER,
            ports=["5432/tcp"],
            env={"LISTEN": "5432"} if boxed else {},
            mounts={"persistent": {"size": 10, "path": "/workspace"}},
        )
        try:
            record = wait_for(
                lambda: (p := client.pods.get(pod.id)).runtime and p.runtime.ports and p, 30
            )
            wait_for(lambda: "waiting for go" in container_log(client, pod.id), 30, 0.1)
            # the pod runs (and in the sandbox the box's relay takes the public port), but
            # nothing in it listens on 5432 yet: never "listening"
            with pytest.raises(WaitTimeout) as caught:
                client.pods.wait_for(pod, "RUNNING", ready="5432/tcp", timeout=3, poll_interval=0.1)
            assert "5432/tcp: nothing listening on 127.0.0.1:" in str(caught.value)
            assert not_ready(record, ["5432/tcp"])[0].startswith("5432/tcp: nothing listening")
            volume = Path(either_emu.home) / "podruntime" / "pods" / pod.id / "persistent"
            (volume / "go").touch()
            ready = client.pods.wait_for(
                pod, "RUNNING", ready="5432/tcp", timeout=30, poll_interval=0.1
            )
            assert "listening" in container_log(client, pod.id)
            public = next(p.public for p in ready.runtime.ports if p.private == 5432)
            with socket.create_connection(("127.0.0.1", public), timeout=10) as conn:
                conn.settimeout(10)
                assert conn.recv(5) == b"hello"  # what the probe found is the pod's server
        finally:
            client.pods.terminate(pod.id)


def _record(port: int) -> dict[str, Any]:
    return {"runtime": {"ports": [{"ip": "127.0.0.1", "private": 5432, "public": port}]}}


def test_the_tcp_probe_tells_a_server_from_a_relay_with_nothing_behind_it() -> None:
    # A relay that closes each connection at once (nothing behind it): not listening; a
    # silent server that keeps the connection (a database waiting for its client) and one that
    # greets: listening; a closed port: not listening.
    def serve(handle: Any) -> tuple[socket.socket, int]:
        server = socket.create_server(("127.0.0.1", 0))

        def loop() -> None:
            with contextlib.suppress(OSError):
                while True:
                    conn, _ = server.accept()
                    handle(conn)

        threading.Thread(target=loop, daemon=True).start()
        return server, server.getsockname()[1]

    held: list[socket.socket] = []
    relay, relay_port = serve(lambda conn: conn.close())
    silent, silent_port = serve(held.append)
    greeter, greeter_port = serve(lambda conn: (conn.sendall(b"220 hi\r\n"), conn.close()))
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    try:
        assert not_ready(_record(relay_port), ["5432/tcp"]) == [
            f"5432/tcp: nothing listening on 127.0.0.1:{relay_port} yet"
        ]
        assert not_ready(_record(silent_port), ["5432/tcp"]) == []
        assert not_ready(_record(greeter_port), ["5432/tcp"]) == []
        assert not_ready(_record(closed_port), ["5432/tcp"])[0].startswith("5432/tcp: nothing")
    finally:
        for sock in (relay, silent, greeter, *held):
            sock.close()


def container_log(client: Any, pod_id: str) -> str:
    """What the pod's main process printed so far."""
    lines = client.pods.logs(pod_id, source="container", tail=50, idle=0.2)
    return "\n".join(line.line for line in lines)
