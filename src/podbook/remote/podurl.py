"""The address of a pod's HTTP port, as a browser or a client reaches it.

One rule for the panels, the static snapshots and :mod:`podbook.remote.kernel`: a pod whose
record maps the port to a loopback address in ``runtime.ports`` (the local emulator's
runtime) is reached there, ``http://IP:PUBLIC/``; any other pod through the service's proxy,
``https://{pod_id}-{port}.proxy.runpod.net`` (the same rule as ``portUrl`` in js/src/pod.js).

Standard library only: the notebook imports this on its hot path.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

__all__ = ["loopback_url", "pod_http_url"]


def _field(obj: Any, name: str) -> Any:
    """``obj[name]`` of a wire dict, or ``obj.<name>`` of a model (None when absent)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def loopback_url(pod: Any, private: int) -> str | None:
    """``http://IP:PUBLIC/`` when the pod's ``runtime.ports`` maps ``private`` to a loopback
    address, else None.

    :param pod: a :class:`podbook.api.pods.Pod` or its wire dict.
    :param private: the container port (``8888``).
    """
    for mapping in _field(_field(pod, "runtime") or {}, "ports") or []:
        if _field(mapping, "private") != private:
            continue
        ip, public = _field(mapping, "ip"), _field(mapping, "public")
        if not ip or public is None:
            continue
        try:
            address = ipaddress.ip_address(str(ip).strip("[]"))
        except ValueError:
            continue
        if address.is_loopback:
            host = f"[{address}]" if address.version == 6 else str(address)
            return f"http://{host}:{public}/"
    return None


def pod_http_url(pod: Any, port: int) -> str | None:
    """The URL of the pod's HTTP port ``port``, or None when the pod does not expose
    ``{port}/http``.

    The local emulator's loopback mapping (``http://127.0.0.1:PUBLIC/``) when the record has
    one, otherwise the service's proxy address (``https://{pod_id}-{port}.proxy.runpod.net``).
    A pod that is not RUNNING has no mapping yet, so its URL is the proxy address until it is.

    :param pod: a :class:`podbook.api.pods.Pod` or its wire dict (``GET /v2/pods/{id}``).
    :param port: the container port, e.g. ``8888`` for Jupyter.
    """
    wanted = f"{port}/http"
    if not any(str(entry) == wanted for entry in _field(pod, "ports") or []):
        return None
    return loopback_url(pod, port) or f"https://{_field(pod, 'id')}-{port}.proxy.runpod.net"
