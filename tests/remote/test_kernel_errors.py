"""What a user gets wrong, or meets too early, when connecting to a pod's kernel: one line
each that says what and how to fix it, and never the password."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from remote_helpers import running_pod

from podbook import Client
from podbook.errors import (
    JupyterAuthFailed,
    JupyterNotAnswering,
    KernelNotFound,
    NoJupyter,
    PodNotRunning,
    RemoteKernelError,
)
from podbook.remote import connect_kernel

pytestmark = pytest.mark.timeout(120)


def one_line(error: BaseException, *secrets: str) -> str:
    """The error's message, checked to be one line without any of ``secrets``."""
    message = str(error)
    assert "\n" not in message, message
    for secret in secrets:
        assert secret not in message and secret not in repr(error)
    return message


def test_a_wrong_password_is_refused_in_one_line(jupyter_pod: Any) -> None:
    right = jupyter_pod.env["JUPYTER_PASSWORD"]
    with pytest.raises(JupyterAuthFailed) as raised:
        connect_kernel(jupyter_pod, password="not-the-password")
    message = one_line(raised.value, "not-the-password", right)
    assert message.startswith(f"the Jupyter server of pod {jupyter_pod.id} refused the password")
    assert "JUPYTER_PASSWORD" in message


def test_a_pod_without_jupyter_and_a_pod_not_running(pods_client: Client) -> None:
    pod = running_pod(pods_client, ports=["8888/http"])  # no --jupyter: no password
    try:
        with pytest.raises(NoJupyter) as raised:
            connect_kernel(pod)
        assert one_line(raised.value) == (
            f"pod {pod.id} has no Jupyter server (no JUPYTER_PASSWORD in its env); create the "
            "pod with --jupyter (or run shell commands with %%pod sh)"
        )
        bare = {**pod.model_dump(mode="json", by_alias=True), "ports": []}
        with pytest.raises(
            NoJupyter, match=r"\(no 8888/http port\); create the pod with --jupyter"
        ):
            connect_kernel(bare)

        stopped = pods_client.pods.wait_for(pods_client.pods.stop(pod), "EXITED", timeout=30)
        with pytest.raises(PodNotRunning) as raised:
            connect_kernel(stopped)
        assert one_line(raised.value) == (
            f"pod {pod.id} is EXITED, not RUNNING; start it (%pod start {pod.id}, or "
            "client.pods.start) and wait until it is RUNNING"
        )
    finally:
        pods_client.pods.terminate(pod.id)


def test_a_server_that_does_not_answer_yet_is_waited_for_then_named(jupyter_pod: Any) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(JupyterNotAnswering) as raised:
        connect_kernel(url=f"http://127.0.0.1:{port}/", password="secret-pw", server_timeout=1.5)
    waited = time.monotonic() - started
    assert 1.0 <= waited < 8.0  # the back-off, on a loaded machine
    message = one_line(raised.value, "secret-pw")
    assert message.startswith(
        f"the Jupyter server at http://127.0.0.1:{port}/ did not answer within 1.5 s (ConnectError"
    )
    assert "starts a few seconds after the pod is RUNNING" in message


def test_an_id_instead_of_the_record(jupyter_pod: Any) -> None:
    with pytest.raises(TypeError, match=r"pass the pod's record \(client.pods.get\('"):
        connect_kernel(jupyter_pod.id)


def test_an_unknown_kernel_id(jupyter_pod: Any) -> None:
    with pytest.raises(KernelNotFound) as raised:
        connect_kernel(jupyter_pod, kernel_id="00000000-0000-0000-0000-000000000000")
    message = one_line(raised.value, jupyter_pod.env["JUPYTER_PASSWORD"])
    assert "connect without kernel_id= to start a new one" in message


def test_no_repr_or_message_holds_the_password(jupyter_pod: Any) -> None:
    password = jupyter_pod.env["JUPYTER_PASSWORD"]
    remote = connect_kernel(jupyter_pod)
    try:
        assert password not in repr(remote) and password not in repr(remote._server)
        assert password not in str(vars(remote))
    finally:
        remote.close(shutdown=True)
    with pytest.raises(RemoteKernelError) as raised:
        remote.execute("1")
    one_line(raised.value, password)
