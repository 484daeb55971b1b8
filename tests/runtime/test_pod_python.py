"""``python`` in a pod is the emulator's own interpreter, with the packages the user installed
(podbook, ``runpod``): the folder of that interpreter (its virtualenv's ``bin``) leads the
pod's ``PATH`` in both modes, though the emulator was started without activating it; in the
sandbox that virtualenv is read-only, and SSH sessions get the same ``python``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import create_pod, log_lines, wait_status
from ssh_helpers import Endpoint, keygen, ssh

from podbook import Client

pytestmark = pytest.mark.timeout(120)

VENV_BIN = Path(sys.executable).parent  # the emulators of these tests run this interpreter
REPORT = (
    'echo "python=$(command -v python)"; '
    "python -c \"import podbook, runpod, sys; print('imports', sys.prefix)\"; "
)


def test_python_in_a_pod_is_the_emulators_with_its_packages(either_emu: Any) -> None:
    boxed = "bwrap" in either_emu.extra_args
    script = REPORT
    if boxed:  # in the box the virtualenv is there read-only; never write it on the host
        script += f"touch {VENV_BIN}/.pod-wrote 2>/dev/null && echo WROTE-VENV; "
    with either_emu.http() as http:
        pod = create_pod(http, args=script + "echo checked; exec sleep 600")
        try:
            wait_status(http, pod["id"], "RUNNING", timeout=30)
            lines = log_lines(http, pod["id"], "checked", timeout=30)
        finally:
            http.delete(f"/v2/pods/{pod['id']}")
    assert f"python={VENV_BIN}/python" in lines, lines
    assert f"imports {sys.prefix}" in lines, lines
    assert "WROTE-VENV" not in lines and not (VENV_BIN / ".pod-wrote").exists()


def test_an_ssh_session_has_the_same_python(either_emu: Any, tmp_path: Path) -> None:
    key = keygen(tmp_path, "id_ed25519")
    with Client(api_key=either_emu.api_key, url=either_emu.url) as client:
        before = client.account.ssh_keys.get().keys
        client.account.ssh_keys.put([*before, key.with_suffix(".pub").read_text().strip()])
        pod = client.pods.create(
            name="ssh-python",
            image="runpod/base",
            gpu={"id": "NVIDIA GeForce RTX 4090"},
            args="exec sleep 600",
            ports=["22/tcp"],
            start_ssh=True,
        )
        try:
            ready = client.pods.wait_for(pod, "RUNNING", ready="ssh", timeout=60, poll_interval=0.1)
            direct = Endpoint(ready.ssh.direct.host, ready.ssh.direct.port, "root")
            shell = ssh(direct, key, REPORT, timeout=60)
            assert shell.returncode == 0, shell.stderr
            assert shell.stdout.splitlines() == [
                f"python={VENV_BIN}/python",
                f"imports {sys.prefix}",
            ], shell.stderr
        finally:
            client.pods.terminate(pod.id)
            client.account.ssh_keys.put(before)
