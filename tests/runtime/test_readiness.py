"""``client.pods.wait_for(pod, "RUNNING", ready=...)``: it returns only once the pod's SSH
server takes an OpenSSH login and its Jupyter serves the login page (pods of a local-runtime
emulator read RUNNING before their services are up, as on the service)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from ssh_helpers import Endpoint, keygen, ssh

from podbook import Client
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
