"""Helpers of the pod-guard tests: guarded pods, their guard's reports, an OpenSSH session."""

from __future__ import annotations

import subprocess
import time
from typing import Any

from pod_helpers import GPU
from processes import wait_for
from ssh_helpers import Endpoint

from podbook import Client
from podbook.guard import GuardStatus, latest
from podbook.guard.state import parse_line
from podbook.remote.keys import SshKeyPair


def guarded_pod(client: Client, *, ssh: bool = False, jupyter: bool = False, **fields: Any) -> Any:
    """Create a local-runtime pod with the guard options in ``fields``; its record."""
    body: dict[str, Any] = {
        "name": "guarded",
        "image": "runpod/base:latest",
        "gpu": {"id": GPU},
        "args": "exec sleep 900",
        **fields,
    }
    if ssh or jupyter:
        body["ports"] = [*(["22/tcp"] if ssh else []), *(["8888/http"] if jupyter else [])]
        body["start_ssh"] = ssh
        body["start_jupyter"] = jupyter
    return client.pods.create(**body)


def guard_lines(client: Client, pod_id: str) -> list[GuardStatus]:
    """Every report of the pod's guard so far, oldest first."""
    found = []
    for line in client.pods.logs(pod_id, source="container", tail=500, idle=0.3):
        status = parse_line(line.line, ts=line.ts)
        if status is not None:
            found.append(status)
    return found


def wait_guard(
    client: Client, pod_id: str, state: str, *, timeout: float = 20, after: int = 0
) -> GuardStatus:
    """Wait for a report in ``state`` (the ``after``-th report or later); return it."""

    def seen() -> GuardStatus | None:
        reports = guard_lines(client, pod_id)[after:]
        return next((r for r in reports if r.state == state), None)

    return wait_for(seen, timeout=timeout, interval=0.3, what=f"a guard report {state!r}")


def status_of(client: Client, pod_id: str) -> str:
    """The pod's status; TERMINATED once it is gone."""
    from podbook.errors import NotFound

    try:
        return client.pods.get(pod_id).status
    except NotFound:
        return "TERMINATED"


def wait_status(client: Client, pod_id: str, wanted: str, timeout: float) -> float:
    """Wait until the pod reads ``wanted``; the monotonic time it was seen."""
    wait_for(
        lambda: status_of(client, pod_id) == wanted,
        timeout=timeout,
        interval=0.2,
        what=f"pod {pod_id} {wanted}",
    )
    return time.monotonic()


def openssh_session(pod: Any, key: SshKeyPair) -> subprocess.Popen[bytes]:
    """A real OpenSSH session into the pod's direct endpoint running ``cat`` (it lasts until
    the process is ended); it tries again while the pod's SSH server is not listening yet."""
    direct = pod.ssh.direct
    endpoint = Endpoint(direct.host, direct.port, direct.username)
    return subprocess.Popen(
        [*endpoint.base(key.private), "-o", "IdentitiesOnly=yes", "-o", "ConnectionAttempts=20",
         "cat"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def last_report(client: Client, pod_id: str) -> GuardStatus | None:
    """The guard's last report."""
    return latest(client.pods.logs(pod_id, source="container", tail=500, idle=0.3))
