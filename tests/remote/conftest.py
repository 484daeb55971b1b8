"""Fixtures of the remote-kernel tests: an emulator with ``--runtime local`` whose pods run a
real Jupyter server (``startJupyter``), one such pod shared by the session, and a fresh kernel
on it per test.

``jupyter_pod`` is the pod's record as the typed client returns it (a ``Pod``), read once
its ``8888/http`` port is mapped; :func:`podbook.remote.connect_kernel` is called right
after, so it waits for the server itself (it answers ~2-3 s after RUNNING).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from remote_helpers import running_pod

from podbook import Client
from podbook.remote import RemoteKernel, connect_kernel


@pytest.fixture(scope="session")
def local_emu(start_emulator: Any) -> Any:
    """An emulator whose pods run for real (``--runtime local``), shared by the session."""
    return start_emulator(extra_args=("--runtime", "local"))


@pytest.fixture(scope="session")
def pods_client(local_emu: Any) -> Iterator[Client]:
    """The typed client of the local emulator (account A)."""
    with Client(
        api_key=local_emu.api_key,
        rest_url=local_emu.url,
        queue_url=local_emu.url,
        v1_url=local_emu.url,
    ) as client:
        yield client


@pytest.fixture(scope="session")
def jupyter_pod(pods_client: Client) -> Iterator[Any]:
    """A RUNNING ``startJupyter`` pod with ``8888/http`` (terminated at the end)."""
    pod = running_pod(pods_client, ports=["8888/http"], start_jupyter=True)
    yield pod
    pods_client.pods.terminate(pod.id)


@pytest.fixture
def kernel(jupyter_pod: Any) -> Iterator[RemoteKernel]:
    """A new kernel on the shared pod, shut down after the test."""
    remote = connect_kernel(jupyter_pod, server_timeout=60)
    try:
        yield remote
    finally:
        remote.close(shutdown=True)
