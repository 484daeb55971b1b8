"""Plain-dict views of the client's models, as the panels and snapshots use them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from podbook.guard.settings import fold
from podbook.notebook.panels.masking import mask_pod
from podbook.remote.podurl import pod_http_url

if TYPE_CHECKING:
    from pydantic import BaseModel

JsonDict: TypeAlias = "dict[str, Any]"
"""A JSON object in wire form: a model's ``model_dump(mode="json", by_alias=True)``, a panel
trait's value. Its keys are the API's field names; its values are whatever JSON holds, so the
code reads them with ``.get`` and checks the type where it depends on it."""

FINAL_POD_STATUSES = frozenset({"TERMINATED"})


def to_wire(obj: BaseModel | Mapping[str, object] | None) -> JsonDict:
    """The wire-form JSON dict of a model (pydantic) or a dict."""
    if obj is None:
        return {}
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True)
    return dict(obj)


def records(result: object, key: str) -> list[Any]:
    """The records of a list call, whether a plain list or wrapped as ``{key: [...]}`` (as
    that call gave them: models or wire dicts)."""
    if isinstance(result, dict):
        return list(result.get(key) or [])
    inner = getattr(result, key, None)
    if isinstance(inner, list):
        return inner
    return list(cast("Iterable[Any]", result or []))


def pod_state(obj: BaseModel | Mapping[str, object] | None) -> JsonDict:
    """A pod as a masked wire dict, ready for a trait or a snapshot: the guard's launcher and
    variables folded into ``guardSettings`` (see :func:`podbook.guard.settings.fold`)."""
    return mask_pod(fold(to_wire(obj)))


def terminated(pod: JsonDict) -> JsonDict:
    """The panel state of a pod that is gone: TERMINATED, no actions, no cost."""
    return {
        **pod,
        "status": "TERMINATED",
        "actions": [],
        "cost": 0.0,
        "runtime": None,
        "ssh": {"proxy": None, "direct": None},
    }


def shape_text(pod: JsonDict) -> str:
    """``2 × NVIDIA GeForce RTX 4090`` or ``cpu3c · 4 vCPU · 8 GB``."""
    gpu, cpu = pod.get("gpu"), pod.get("cpu")
    if gpu:
        return f"{gpu.get('count') or 1} × {gpu.get('id', '?')}"
    if cpu:
        memory = f" · {cpu['memory']} GB" if cpu.get("memory") else ""
        return f"{cpu.get('id', '?')} · {cpu.get('vcpuCount', '?')} vCPU{memory}"
    return "-"


def cost_text(pod: JsonDict) -> str:
    """``$0.69/h``."""
    cost = pod.get("cost")
    return f"${cost:.2f}/h" if isinstance(cost, (int, float)) else "-"


def ssh_commands(pod: JsonDict) -> dict[str, str]:
    """The ready SSH commands by kind (``proxy``, ``direct``), only those available."""
    ssh = pod.get("ssh") or {}
    return {
        kind: endpoint["command"]
        for kind in ("proxy", "direct")
        if isinstance(endpoint := ssh.get(kind), dict) and endpoint.get("command")
    }


def http_links(pod: JsonDict) -> dict[str, str]:
    """Links for the pod's HTTP ports: ``{"8888/http": "https://<id>-8888.proxy.runpod.net"}``,
    or ``http://IP:PUBLIC/`` when the pod's ``runtime.ports`` maps the port to a loopback
    address (the local emulator's runtime; the same rule as ``portUrl`` in js/src/pod.js and
    :func:`podbook.remote.pod_http_url`, which builds each link)."""
    links = {}
    for port in pod.get("ports") or []:
        number, _, proto = str(port).partition("/")
        if proto == "http" and number.isdigit():
            url = pod_http_url(pod, int(number))
            if url is not None:
                links[port] = url
    return links
