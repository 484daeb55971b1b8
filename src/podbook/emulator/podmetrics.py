"""Plausible live metrics for RUNNING pods, and public port mappings.

Utilization drifts smoothly with time (a few overlapping sine waves per pod and metric, so
two reads a second apart differ a little and a minute apart differ more); it is a pure
function of the pod id and the clock, so nothing needs storing.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
from typing import Any


@functools.lru_cache(maxsize=65536)
def _phase(pod_id: str, metric: str) -> float:
    digest = hashlib.blake2b(f"{pod_id}:{metric}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") / 2**32 * 2 * math.pi


def utilization(pod_id: str, metric: str, now: float, base: float, swing: float) -> int:
    """A percentage around ``base`` ± ``swing`` that varies smoothly with ``now``."""
    phase = _phase(pod_id, metric)
    wave = 0.7 * math.sin(now / 23.0 + phase) + 0.3 * math.sin(now / 4.1 + 2 * phase)
    return max(0, min(100, round(base + swing * wave)))


def new_port_map(ports: list[str], rng: random.Random | None = None) -> dict[str, int]:
    """Fresh public ports for each ``port/protocol`` (port mappings change on each start)."""
    rng = rng or random.SystemRandom()
    used: set[int] = set()
    mapping: dict[str, int] = {}
    for spec in ports:
        port = rng.randint(10000, 60999)
        while port in used:
            port = rng.randint(10000, 60999)
        used.add(port)
        mapping[spec] = port
    return mapping


def runtime_block(
    pod_id: str,
    now: float,
    running_since: float,
    gpu_count: int,
    ports: list[str],
    port_map: dict[str, int],
    public_ip: str,
) -> dict[str, Any]:
    """The ``runtime`` object of a RUNNING pod."""
    block: dict[str, Any] = {"uptime": max(0, int(now - running_since))}
    if gpu_count:
        block["gpus"] = [
            {
                "util": utilization(pod_id, f"gpu{i}", now, 62, 30),
                "memoryUtil": utilization(pod_id, f"gpumem{i}", now, 48, 20),
            }
            for i in range(gpu_count)
        ]
    block["cpu"] = {"util": utilization(pod_id, "cpu", now, 35, 25)}
    block["memory"] = {"util": utilization(pod_id, "memory", now, 40, 12)}
    block["ports"] = port_rows(ports, port_map, public_ip)
    return block


def port_rows(ports: list[str], port_map: dict[str, int], public_ip: str) -> list[dict[str, Any]]:
    """``runtime.ports``: each ``port/protocol`` with its public port and address."""
    rows = []
    for spec in ports:
        number, _, kind = spec.partition("/")
        public = port_map.get(spec)
        rows.append(
            {
                "private": int(number),
                "public": public,
                "type": kind,
                "ip": public_ip if public is not None else None,
            }
        )
    return rows
