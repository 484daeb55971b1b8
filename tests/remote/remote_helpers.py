"""Helpers of the remote-kernel tests: a RUNNING pod of the local runtime, read once its
ports are mapped."""

from __future__ import annotations

from typing import Any

from pod_helpers import GPU
from processes import wait_for

from podbook import Client


def running_pod(client: Client, **fields: Any) -> Any:
    """Create a pod, wait until it is RUNNING with its ports mapped; its record (a ``Pod``)."""
    body = {
        "name": "remote-kernel",
        "image": "runpod/base:latest",
        "gpu": GPU,
        "args": "exec sleep 600",
        **fields,
    }
    pod = client.pods.wait_for(
        client.pods.create(**body), "RUNNING", timeout=30, poll_interval=0.05
    )
    if not pod.ports:
        return pod
    return wait_for(
        lambda: (p := client.pods.get(pod.id)).runtime and p.runtime.ports and p,
        timeout=15,
        what="the pod's port mappings",
    )


def stdout(outputs: list[Any]) -> str:
    """The text the outputs wrote to stdout (a kernel may split one ``print`` in two)."""
    from podbook.remote import StreamText

    return "".join(o.text for o in outputs if isinstance(o, StreamText) and o.name == "stdout")
