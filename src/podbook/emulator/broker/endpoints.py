"""Endpoint definitions: ids, the built-in endpoints, and the create body of ``/v2/serverless``.

A local endpoint's id is its ``name`` when that is a free, URL-safe id (so ``--name demo``
gives ``/v2/demo/...``), else a generated ``ep_...`` id. Ids are per account: every account
has its own ``echo``, ``stream-demo`` and ``chat-demo``. The record has the reference's Endpoint shape plus
the emulator-only ``handler`` (``path/to/handler.py[:fn]`` or ``package.module:fn``), which
makes the emulator start and supervise podbook workers for it.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from podbook.api.endpoints import DEFAULT_SCALING
from podbook.emulator import catalog_data
from podbook.emulator.broker.limits import (
    EXECUTION_TIMEOUT_DEFAULT_MS,
    EXECUTION_TIMEOUT_MAX_MS,
    EXECUTION_TIMEOUT_MIN_MS,
)

BUILTIN_HANDLERS: dict[str, str] = {
    "echo": "podbook.worker.builtins:echo",
    "stream-demo": "podbook.worker.builtins:stream_demo",
    "chat-demo": "podbook.worker.builtins:chat_demo",
}

# First path segments of REST routes: an endpoint named like one would be unreachable.
RESERVED_IDS = frozenset(
    {
        "pods",
        "clusters",
        "catalog",
        "account",
        "registries",
        "templates",
        "serverless",
        "network-volumes",
        "billing",
        "endpoints",
    }
)
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")

ENDPOINT_TYPES = ("QUEUE", "LOAD_BALANCER")

CREATE_FIELDS = frozenset(
    {
        "name",
        "type",
        "scaling",
        "image",
        "templateId",
        "args",
        "disk",
        "ports",
        "env",
        "registry",
        "gpu",
        "cpu",
        "workers",
        "dataCenterIds",
        "networkVolumes",
        "timeout",
        "flashboot",
        "handler",
    }
)


def check_endpoint_id(text: str) -> str | None:
    """Why ``text`` cannot be an endpoint id, or None when it can."""
    if not text:
        return "the endpoint name is empty"
    if not _ID_RE.match(text):
        return (
            f"{text!r} is not a URL-safe id (letters, digits, '-' and '_', at most 63, "
            "starting with a letter or digit)"
        )
    if text in RESERVED_IDS:
        return f"{text!r} is reserved for a REST path"
    return None


def generated_endpoint_id() -> str:
    """A fresh opaque endpoint id."""
    return "ep_" + secrets.token_hex(6)


def check_handler_spec(spec: str) -> str | None:
    """Why ``spec`` is not a usable handler (``file.py[:fn]`` or ``package.module:fn``)."""
    target, _, function = spec.partition(":")
    if function and not function.isidentifier():
        return f"handler {spec!r}: {function!r} is not a function name"
    if target.endswith(".py"):
        if not Path(target).expanduser().is_file():
            return f"handler file {target!r} not found; give an existing .py file"
        return None
    if not function or not all(part.isidentifier() for part in target.split(".")):
        return f"handler {spec!r} is neither path/to/handler.py[:fn] nor package.module:fn"
    return None


def absolute_handler(spec: str) -> str:
    """``spec`` with a handler file made absolute (workers run from another directory)."""
    target, sep, function = spec.partition(":")
    if target.endswith(".py"):
        target = str(Path(target).expanduser().resolve())
    return target + sep + function


def _now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def gpu_config(
    gpu: dict[str, Any] | None, previous: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """An endpoint's ``gpu`` in the reference's shape (``allowedCudaVersions`` and
    ``minCudaVersion`` always present: ``[]`` and null mean no constraint).

    A PATCH's ``gpu`` merges into ``previous``: sending ``pools`` replaces the selection, so
    ``excludedTypes`` not restated are cleared; an empty ``minCudaVersion`` clears the floor.
    """
    if gpu is None:
        return None
    merged = dict(previous or {})
    if "pools" in gpu:
        merged.pop("excludedTypes", None)
    merged.update(gpu)
    merged.setdefault("allowedCudaVersions", [])
    if not merged.get("minCudaVersion"):
        merged["minCudaVersion"] = None
    return merged


def cpu_configs(cpu: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """An endpoint's ``cpu`` entries with ``memory`` in GB (vCPUs × the flavor's RAM per
    vCPU), as the reference's ``CpuConfig`` has it. Flavors are checked by
    :func:`compute_errors` first."""
    if cpu is None:
        return None
    configs = []
    for entry in cpu:
        flavor = catalog_data.get_cpu_type(entry["id"]) or {"ramGbPerVcpu": 1}
        configs.append({**entry, "memory": entry["vcpuCount"] * flavor["ramGbPerVcpu"]})
    return configs


def compute_errors(record: dict[str, Any]) -> list[str]:
    """The 400 rules on an endpoint's (merged) compute: a GPU selection names its ``pools``;
    each CPU entry is a known flavor with a power-of-two vCPU count it offers."""
    errors = []
    gpu = record.get("gpu")
    if gpu is not None and not gpu.get("pools"):
        errors.append("$.gpu.pools: required; name the GPU pools (GET /v2/catalog/gpus, pool)")
    for index, entry in enumerate(record.get("cpu") or []):
        flavor = catalog_data.get_cpu_type(entry["id"])
        count = entry["vcpuCount"]
        if flavor is None:
            errors.append(f"$.cpu[{index}].id: unknown CPU flavor {entry['id']!r}")
        elif count & (count - 1) or not flavor["vcpu"]["min"] <= count <= flavor["vcpu"]["max"]:
            low, high = flavor["vcpu"]["min"], flavor["vcpu"]["max"]
            errors.append(
                f"$.cpu[{index}].vcpuCount: {entry['id']} takes a power of two from {low} to {high}"
            )
    return errors


def endpoint_record(
    endpoint_id: str,
    name: str,
    *,
    handler: str | None,
    fields: dict[str, Any] | None = None,
    builtin: bool = False,
    created_at: str | None = None,
) -> dict[str, Any]:
    """An Endpoint in the reference's shape (with ``handler`` and ``builtin`` extras)."""
    fields = fields or {}
    record: dict[str, Any] = {
        "id": endpoint_id,
        "name": name,
        "type": fields.get("type", "QUEUE"),
        "image": fields.get("image", "podbook/local-worker"),
        "gpu": gpu_config(fields.get("gpu")),
        "workers": {"min": 0, "max": 3, **(fields.get("workers") or {})},
        "scaling": fields.get("scaling")
        or dict(DEFAULT_SCALING.get(fields.get("type", ""), DEFAULT_SCALING["QUEUE"])),
        "dataCenterIds": list(fields.get("dataCenterIds") or []),
        "networkVolumes": list(fields.get("networkVolumes") or []),
        "timeout": fields.get("timeout", EXECUTION_TIMEOUT_DEFAULT_MS),
        "flashboot": fields.get("flashboot", "OFF"),
        "createdAt": created_at or _now_iso(),
        "handler": handler,
        "builtin": builtin,
    }
    for extra in ("args", "disk", "ports", "env", "registry"):
        if extra in fields:
            record[extra] = fields[extra]
    if "cpu" in fields:
        record["cpu"] = cpu_configs(fields["cpu"])
    return record


def start_command(record: dict[str, Any]) -> str | None:
    """The start command (``args``) of a queue-based endpoint, if it has one (a
    load-balancing endpoint's workers are started by hand: ``podbook worker --lb``)."""
    if record.get("type", "QUEUE") != "QUEUE":
        return None
    args = record.get("args")
    if isinstance(args, list):
        args = " ".join(str(part) for part in args)
    return args.strip() or None if isinstance(args, str) else None


def builtin_record(endpoint_id: str) -> dict[str, Any]:
    """The record of a built-in endpoint (never stored; the same for every account)."""
    return endpoint_record(
        endpoint_id,
        endpoint_id,
        handler=BUILTIN_HANDLERS[endpoint_id],
        builtin=True,
        created_at="2026-01-01T00:00:00Z",
    )


def create_body_errors(body: Any) -> list[str]:
    """``$.field: message`` lines for everything wrong with a create body (empty if fine)."""
    if not isinstance(body, dict):
        return ["$: must be a JSON object"]
    errors = [f"$.{key}: unknown property" for key in body if key not in CREATE_FIELDS]
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.append("$.name: required, a non-empty string")
    if "type" in body and body["type"] not in ENDPOINT_TYPES:
        errors.append("$.type: QUEUE or LOAD_BALANCER")
    if body.get("type") == "LOAD_BALANCER" and body.get("handler") is not None:
        errors.append(
            "$.handler: a LOAD_BALANCER endpoint serves your own HTTP app, not a handler; "
            "start it with `podbook worker --lb app.py:app --endpoint ID`"
        )
    timeout = body.get("timeout")
    if timeout is not None and (
        not isinstance(timeout, int)
        or isinstance(timeout, bool)
        or not EXECUTION_TIMEOUT_MIN_MS <= timeout <= EXECUTION_TIMEOUT_MAX_MS
    ):
        errors.append(
            f"$.timeout: milliseconds between {EXECUTION_TIMEOUT_MIN_MS} and "
            f"{EXECUTION_TIMEOUT_MAX_MS}"
        )
    workers = body.get("workers")
    if workers is not None and (
        not isinstance(workers, dict)
        or any(k not in ("min", "max", "idleTimeout") for k in workers)
        or any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in workers.values())
    ):
        errors.append("$.workers: an object with integer min, max (0 or more)")
    for key in ("env",):
        if key in body and not (
            isinstance(body[key], dict) and all(isinstance(v, str) for v in body[key].values())
        ):
            errors.append(f"$.{key}: an object of strings")
    handler = body.get("handler")
    if handler is not None:
        if not isinstance(handler, str):
            errors.append("$.handler: a string path/to/handler.py[:fn] or package.module:fn")
        elif problem := check_handler_spec(handler):
            errors.append(f"$.handler: {problem}")
    return errors
