"""Helpers of the SSH shell, file and sync tests (``test_remote_shell/files/sync.py``): a key
pair made by podbook's own key helper in a temporary home, its registration on the account,
a RUNNING pod of the local runtime with ``startSsh`` and ``22/tcp`` whose SSH answers, and
files with their SHA-256.

The fixtures those modules share are defined here under names of their own and imported
(``from transfer_helpers import pod_fixture  # noqa: F401``): ``client`` (account A's typed
client of ``local_emu``), ``key`` (a fresh key pair), ``pod`` (module-scoped: such a pod,
with ``key`` registered while the module runs), ``conn`` (an open connection to it) and
``tree`` (the pod's working directory on the host)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from pod_helpers import GPU
from processes import wait_for

from podbook import Client
from podbook.api.pods import Pod
from podbook.remote.keys import SshKeyPair, find_key, same_key
from podbook.remote.ssh import PodConnection, RemoteError, connect


def new_key(folder: Path) -> SshKeyPair:
    """A fresh ed25519 pair made by :func:`find_key` in ``folder`` (no user keys there)."""
    empty = folder / "no-user-keys"
    empty.mkdir(parents=True, exist_ok=True)
    key = find_key(ssh_dir=empty, home=folder / "podbook-home")
    assert key.created and key.origin == "podbook"
    return key


@contextmanager
def registered(client: Client, key: SshKeyPair) -> Iterator[None]:
    """``key`` added to the account's SSH keys for the block (the earlier set restored)."""
    before = client.account.ssh_keys.get().keys
    client.account.ssh_keys.put([*before, key.public_line])
    try:
        yield
    finally:
        now = client.account.ssh_keys.get().keys
        client.account.ssh_keys.put([k for k in now if not same_key(k, key.public_line)])


def create_pod(client: Client, **fields: Any) -> Pod:
    """Create a pod of the local runtime (``sleep`` as its main process); its record."""
    body = {
        "name": "remote-ssh",
        "image": "runpod/base:latest",
        "gpu": {"id": GPU},
        "args": "exec sleep 900",
        **fields,
    }
    return client.pods.create(**body)


def running(client: Client, pod: Pod, *, ssh: bool = True) -> Pod:
    """Wait until ``pod`` is RUNNING (with ``ssh.direct`` when ``ssh``); its record."""
    client.pods.wait_for(pod, "RUNNING", timeout=30, poll_interval=0.05)
    if not ssh:
        return client.pods.get(pod.id)
    return wait_for(
        lambda: (p := client.pods.get(pod.id)).ssh.direct is not None and p,
        timeout=15,
        what="the pod's ssh.direct",
    )


def ssh_pod(client: Client, key: SshKeyPair, **fields: Any) -> Pod:
    """A RUNNING pod with ``startSsh`` and ``22/tcp`` whose SSH server lets ``key`` in."""
    fields = {"startSsh": True, "ports": ["22/tcp"], **fields}
    pod = running(client, create_pod(client, **fields))

    def answers() -> bool:
        try:
            connect(pod, key=key, timeout=5).close()
        except RemoteError as exc:
            if exc.reason != "unreachable":
                raise
            return False
        return True

    wait_for(answers, timeout=20, interval=0.1, what="the pod's SSH server answered")
    return pod


def typed_client(emu: Any) -> Client:
    """Account A's typed client of ``emu``."""
    return Client(api_key=emu.api_key, rest_url=emu.url, queue_url=emu.url, v1_url=emu.url)


def sha256(path: Path) -> str:
    """The file's SHA-256 (hex)."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def random_file(path: Path, size: int) -> Path:
    """``path`` filled with ``size`` random bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        left = size
        while left:
            chunk = min(left, 8 << 20)
            file.write(os.urandom(chunk))
            left -= chunk
    return path


def pod_tree(emu: Any, pod: Pod) -> Path:
    """The host folder of a local-runtime pod's working directory (its container disk)."""
    return Path(emu.home) / "podruntime" / "pods" / pod.id / "container"


# ---------------------------------------------------------------- fixtures (imported by name)


@pytest.fixture(scope="module", name="client")
def client_fixture(local_emu: Any) -> Iterator[Client]:
    """Account A's typed client of the local-runtime emulator."""
    with typed_client(local_emu) as c:
        yield c


@pytest.fixture(scope="module", name="key")
def key_fixture(tmp_path_factory: pytest.TempPathFactory) -> SshKeyPair:
    """A key pair made by podbook's key helper (registered by ``pod``)."""
    return new_key(tmp_path_factory.mktemp("key"))


@pytest.fixture(scope="module", name="pod")
def pod_fixture(client: Client, key: SshKeyPair) -> Iterator[Pod]:
    """A RUNNING pod with ``startSsh`` and ``22/tcp`` that lets ``key`` in."""
    with registered(client, key):
        made = ssh_pod(client, key)
        yield made
        client.pods.terminate(made.id)


@pytest.fixture(name="conn")
def conn_fixture(pod: Pod, key: SshKeyPair) -> Iterator[PodConnection]:
    """An open connection to ``pod``."""
    with connect(pod, key=key) as c:
        yield c


@pytest.fixture(name="tree")
def tree_fixture(local_emu: Any, pod: Pod) -> Path:
    """The pod's working directory on the host."""
    return pod_tree(local_emu, pod)
