"""The ``runtime`` block of a local-runtime pod, measured with psutil.

``uptime``: seconds since the pod became RUNNING. ``cpu.util``: the CPU time of the pod's
processes (its main process tree and its Jupyter server's) in the last interval, as a percentage
of the whole machine. ``memory.util``: their resident memory as a percentage of the machine's.
``gpus``: measured with ``nvidia-smi`` when the machine has NVIDIA GPUs (one entry per GPU
the pod asked for, the first ones of the machine); without one the block has no ``gpus`` (no
invented figure). ``ports``: the real public ports, each on the pod's loopback address.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from typing import Any

import psutil

from podbook.emulator.podmetrics import port_rows

Record = dict[str, Any]

_gpu_cache: tuple[float, list[dict[str, int]]] = (0.0, [])


class ProcessTree:
    """The processes of one pod, remembered between samples (psutil needs two for CPU)."""

    def __init__(self) -> None:
        self._procs: dict[int, psutil.Process] = {}

    def sample(self, roots: list[int]) -> tuple[int, int]:
        """``(cpu %, memory %)`` of ``roots`` and all their descendants."""
        current: dict[int, psutil.Process] = {}
        for pid in roots:
            if pid <= 0:  # a box's process that ended before its host pid was known
                continue
            try:
                root = self._procs.get(pid) or psutil.Process(pid)
                family = [root, *root.children(recursive=True)]
            except psutil.Error:
                continue
            for proc in family:
                current[proc.pid] = self._procs.get(proc.pid, proc)
        self._procs = current
        cpu = 0.0
        rss = 0
        for proc in current.values():
            with contextlib.suppress(psutil.Error):
                cpu += proc.cpu_percent(None)
                rss += proc.memory_info().rss
        cpu_util = cpu / (os.cpu_count() or 1)
        mem_util = 100.0 * rss / psutil.virtual_memory().total
        return _pct(cpu_util), _pct(mem_util)


def _pct(value: float) -> int:
    return max(0, min(100, round(value)))


def gpu_figures() -> list[dict[str, int]]:
    """``[{"util", "memoryUtil"}]`` per NVIDIA GPU of the machine (cached 2 s); [] without."""
    global _gpu_cache
    if time.monotonic() - _gpu_cache[0] < 2:
        return _gpu_cache[1]
    figures: list[dict[str, int]] = []
    smi = shutil.which("nvidia-smi")
    if smi:
        with contextlib.suppress(OSError, subprocess.SubprocessError, ValueError):
            out = subprocess.run(
                [
                    smi,
                    "--query-gpu=utilization.gpu,utilization.memory",
                    "--format=csv,noheader,nounits",
                ],
                capture_output=True,
                text=True,
                timeout=2,
                check=True,
            ).stdout
            for line in out.splitlines():
                util, mem = (int(part.strip()) for part in line.split(","))
                figures.append({"util": util, "memoryUtil": mem})
    _gpu_cache = (time.monotonic(), figures)
    return figures


def runtime_block(
    record: Record, now: float, running_since: float, tree: ProcessTree, roots: list[int]
) -> dict[str, Any]:
    """The measured ``runtime`` object of a RUNNING local pod."""
    cpu, memory = tree.sample(roots)
    block: dict[str, Any] = {"uptime": max(0, int(now - running_since))}
    count = record.get("gpu", {}).get("count", 0)
    gpus = gpu_figures()[:count] if count else []
    if gpus:
        block["gpus"] = gpus
    block["cpu"] = {"util": cpu}
    block["memory"] = {"util": memory}
    block["ports"] = port_rows(
        record.get("ports") or [], record.get("portMap") or {}, record["publicIp"]
    )
    return block
