"""Helpers of the local pod runtime tests: create pods, wait for a status, read the runtime's
process ledger (``<home>/podruntime/ledger.json``: pod id → ``{pid: start time}``, the main
process first)
and check on /proc that no process of a process group survives."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pod_helpers
from pod_helpers import GPU, create, gpu_pod
from processes import wait_for

__all__ = ["GPU", "wait_for"]

LOCAL = ("--runtime", "local", "--sandbox", "none")
"""The process runtime (the fallback where bubblewrap cannot work): what most of these tests
check (host pids, public ports, mapped paths). ``BOXED`` is the sandbox."""
BOXED = ("--runtime", "local", "--sandbox", "bwrap")


def pod_body(**fields: Any) -> dict[str, Any]:
    """A minimal valid GPU pod create body (``fields`` override or add)."""
    return {**gpu_pod(name="rt-pod", image="runpod/base:latest"), **fields}


def create_pod(http: httpx.Client, **fields: Any) -> dict[str, Any]:
    """Create a pod (asserting 201) and return its JSON."""
    return create(http, pod_body(**fields))


def wait_status(
    http: httpx.Client, pod_id: str, status: str, timeout: float = 15.0
) -> dict[str, Any]:
    """Poll ``GET /v2/pods/{id}`` until it reports ``status``; return that pod."""
    return pod_helpers.wait_status(http, pod_id, status, timeout=timeout, every=0.05)


def ledger(emu: Any) -> dict[str, dict[str, Any]]:
    """The main processes the runtime's ledger names: pod id → ``{"pid", "pgid", "pids"}``
    (the main process leads its own group; ``pids``: every process recorded of the pod)."""
    path = Path(emu.home) / "podruntime" / "ledger.json"
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    found = {}
    for pod_id, processes in entries.items():
        if processes:
            main = int(next(iter(processes)))
            found[pod_id] = {"pid": main, "pgid": main, "pids": [int(p) for p in processes]}
    return found


def group_members(pgid: int) -> list[int]:
    """Pids of live (non-zombie) processes in process group ``pgid`` (from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def wait_group_gone(pgid: int, timeout: float = 10.0) -> None:
    """Wait until no live process is left in process group ``pgid``."""
    deadline = time.monotonic() + timeout
    while group_members(pgid):
        if time.monotonic() > deadline:
            raise AssertionError(f"process group {pgid} still has {group_members(pgid)}")
        time.sleep(0.05)


def log_lines(
    http: httpx.Client, pod_id: str, until: str, timeout: float = 15.0, source: str = "container"
) -> list[str]:
    """Follow the pod's log stream until a line containing ``until``; the lines of ``source``."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    with http.stream(
        "GET", f"/v2/pods/{pod_id}/logs", params={"tail": 1000}, timeout=timeout
    ) as response:
        assert response.status_code == 200, response.read()
        for raw in response.iter_lines():
            if raw.startswith("data:"):
                data = json.loads(raw[5:])
                if data["source"] == source:
                    lines.append(data["line"])
                    if until in data["line"] and not data["line"].startswith("container started"):
                        return lines
            if time.monotonic() > deadline:
                break
    raise AssertionError(f"{until!r} not in the log of {pod_id}; saw {lines}")
