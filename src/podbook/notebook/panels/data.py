"""Plain-dict views of the client's models, as the panels and snapshots use them."""

from __future__ import annotations

import ipaddress
from typing import Any

from podbook.notebook.panels.masking import mask_pod

FINAL_POD_STATUSES = frozenset({"TERMINATED"})


def to_wire(obj: Any) -> dict[str, Any]:
    """The wire-form JSON dict of a model (pydantic) or a dict."""
    if obj is None:
        return {}
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True)
    return dict(obj)


def records(result: Any, key: str) -> list[Any]:
    """The records of a list call, whether a plain list or wrapped as ``{key: [...]}``."""
    if isinstance(result, dict):
        return list(result.get(key) or [])
    inner = getattr(result, key, None)
    if isinstance(inner, list):
        return inner
    return list(result or [])


def pod_state(obj: Any) -> dict[str, Any]:
    """A pod as a masked wire dict, ready for a trait or a snapshot."""
    return mask_pod(to_wire(obj))


def terminated(pod: dict[str, Any]) -> dict[str, Any]:
    """The panel state of a pod that is gone: TERMINATED, no actions, no cost."""
    return {
        **pod,
        "status": "TERMINATED",
        "actions": [],
        "cost": 0.0,
        "runtime": None,
        "ssh": {"proxy": None, "direct": None},
    }


def shape_text(pod: dict[str, Any]) -> str:
    """``2 × NVIDIA GeForce RTX 4090`` or ``cpu3c · 4 vCPU · 8 GB``."""
    gpu, cpu = pod.get("gpu"), pod.get("cpu")
    if gpu:
        return f"{gpu.get('count') or 1} × {gpu.get('id', '?')}"
    if cpu:
        memory = f" · {cpu['memory']} GB" if cpu.get("memory") else ""
        return f"{cpu.get('id', '?')} · {cpu.get('vcpuCount', '?')} vCPU{memory}"
    return "-"


def cost_text(pod: dict[str, Any]) -> str:
    """``$0.69/h``."""
    cost = pod.get("cost")
    return f"${cost:.2f}/h" if isinstance(cost, (int, float)) else "-"


def ssh_commands(pod: dict[str, Any]) -> dict[str, str]:
    """The ready SSH commands by kind (``proxy``, ``direct``), only those available."""
    ssh = pod.get("ssh") or {}
    return {
        kind: endpoint["command"]
        for kind in ("proxy", "direct")
        if isinstance(endpoint := ssh.get(kind), dict) and endpoint.get("command")
    }


def _loopback_mapping(pod: dict[str, Any], private: int) -> str | None:
    """``http://IP:PUBLIC/`` when ``runtime.ports`` maps ``private`` to a loopback address."""
    for mapping in (pod.get("runtime") or {}).get("ports") or []:
        if not isinstance(mapping, dict) or mapping.get("private") != private:
            continue
        ip, public = mapping.get("ip"), mapping.get("public")
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


def http_links(pod: dict[str, Any]) -> dict[str, str]:
    """Links for the pod's HTTP ports: ``{"8888/http": "https://<id>-8888.proxy.runpod.net"}``,
    or ``http://IP:PUBLIC/`` when the pod's ``runtime.ports`` maps the port to a loopback
    address (the local emulator's runtime; the same rule as ``portUrl`` in js/src/pod.js)."""
    links = {}
    for port in pod.get("ports") or []:
        number, _, proto = str(port).partition("/")
        if proto == "http" and number.isdigit():
            local = _loopback_mapping(pod, int(number))
            links[port] = local or f"https://{pod.get('id')}-{number}.proxy.runpod.net"
    return links
