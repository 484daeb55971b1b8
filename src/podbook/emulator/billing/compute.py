"""Per-bucket amounts from what really ran.

A *usage* is one resource billing one cost component at a rate (USD per hour) over an
interval; its amount in a bucket is the overlap in hours times the rate. Pods bill their GPU
or CPU price only while RUNNING (stopped time costs nothing) and a persistent volume for their
whole life; cluster member pods bill under their cluster; serverless jobs bill their
execution time at the endpoint's worker rate (an endpoint whose workers the emulator starts
bills its workers from start to stop instead, as the service does); network volumes bill their size for their life.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from podbook.emulator import catalog_data
from podbook.emulator.billing.ledger import archive_of, billable
from podbook.emulator.billing.window import Window, iso
from podbook.emulator.broker.endpoints import start_command
from podbook.emulator.store import Store

DISK_PER_GB_MONTH = 0.10
"""Persistent pod volume, USD per GB per month (730 hours)."""
VOLUME_PER_GB_MONTH = {"STANDARD": 0.07, "HIGH_PERFORMANCE": 0.14}
"""Network volume storage, USD per GB per month."""
DEFAULT_SERVERLESS_GPU = "NVIDIA GeForce RTX 4090"
"""The worker GPU of an endpoint that names none (podbook's local workers)."""
HOURS_PER_MONTH = 730.0

# The aggregate route's field for each (kind, component).
AGGREGATE_FIELDS: dict[tuple[str, str], str] = {
    ("pods", "gpuAmount"): "podGpuAmount",
    ("pods", "cpuAmount"): "podCpuAmount",
    ("pods", "diskAmount"): "podDiskAmount",
    ("serverless", "gpuAmount"): "serverlessGpuAmount",
    ("serverless", "cpuAmount"): "serverlessCpuAmount",
    ("serverless", "diskAmount"): "serverlessDiskAmount",
    ("serverless", "feeAmount"): "serverlessFeeAmount",
    ("network-volumes", "standardAmount"): "storageStandardAmount",
    ("network-volumes", "highPerformanceAmount"): "storageHighPerformanceAmount",
    ("endpoints", "totalAmount"): "endpointAmount",
    ("clusters", "gpuAmount"): "clusterGpuAmount",
    ("clusters", "diskAmount"): "clusterDiskAmount",
    ("clusters", "networkingAmount"): "clusterNetworkingAmount",
}

# Per kind: the components of a record, and the record's id field (None: no per-id records).
KIND_COMPONENTS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "pods": (("gpuAmount", "cpuAmount", "diskAmount"), "podId"),
    "serverless": (("gpuAmount", "cpuAmount", "diskAmount", "feeAmount"), "serverlessId"),
    "endpoints": ((), None),
    "network-volumes": (("standardAmount", "highPerformanceAmount"), "networkVolumeId"),
    "clusters": (("gpuAmount", "diskAmount", "networkingAmount"), "clusterId"),
}


@dataclass(frozen=True)
class Usage:
    """One resource billing one component at ``rate`` USD/hour over ``[start, end)``."""

    kind: str
    resource_id: str
    component: str
    start: float
    end: float
    rate: float


def _pod_usages(facts: dict[str, Any], now: float) -> Iterable[Usage]:
    cluster = facts.get("clusterId")
    kind, rid = ("clusters", cluster) if cluster else ("pods", facts["id"])
    compute = "gpuAmount" if facts["gpu"] or cluster else "cpuAmount"
    for start, end in facts["runs"]:
        yield Usage(kind, rid, compute, start, end, facts["pricePerHour"])
    if facts["persistentGb"]:
        rate = facts["persistentGb"] * DISK_PER_GB_MONTH / HOURS_PER_MONTH
        end = facts["endedAt"] if facts["endedAt"] is not None else now
        yield Usage(kind, rid, "diskAmount", facts["createdAt"], end, rate)


def worker_rate(endpoint: dict[str, Any]) -> tuple[str, float]:
    """``(component, USD per hour)`` of one worker of a serverless endpoint."""
    gpu = endpoint.get("gpu")
    if isinstance(gpu, dict):
        gpu = gpu.get("id")
    if isinstance(gpu, list):
        gpu = gpu[0] if gpu else None
    if gpu is None and isinstance(endpoint.get("cpu"), dict):
        cpu = endpoint["cpu"]
        flavor = next((c for c in catalog_data.CPU_TYPES if c["id"] == cpu.get("id")), None)
        per_vcpu = flavor["price"]["serverlessPerVcpu"] if flavor else 0.03
        return "cpuAmount", per_vcpu * int(cpu.get("vcpuCount") or 2)
    entry = next((g for g in catalog_data.GPU_TYPES if g["id"] == gpu), None)
    if entry is None or "serverless" not in entry["price"]:
        entry = next(g for g in catalog_data.GPU_TYPES if g["id"] == DEFAULT_SERVERLESS_GPU)
    return "gpuAmount", float(entry["price"]["serverless"])


def _serverless_usages(store: Store, service: Any, account_id: str, now: float) -> Iterable[Usage]:
    """Ended executions from the archive, running ones from the broker."""
    broker = getattr(service, "broker", None)

    def rate(endpoint_id: str) -> tuple[str, float]:
        queue = broker.queues.get((account_id, endpoint_id)) if broker else None
        return worker_rate(queue.record if queue else {})

    for endpoint_id, start, end in archive_of(store).executions(account_id):
        component, per_hour = rate(endpoint_id)
        yield Usage("serverless", endpoint_id, component, start, end, per_hour)
    if broker is None:
        return
    for job in list(broker.jobs.values()):
        if job.account_id != account_id or job.started_at is None or job.finished_at is not None:
            continue
        queue = broker.queues.get((account_id, job.endpoint_id))
        if queue is not None and start_command(queue.record):
            continue  # its workers bill, below
        component, per_hour = rate(job.endpoint_id)
        yield Usage("serverless", job.endpoint_id, component, job.started_at / 1000, now, per_hour)
    autoscaler = getattr(service, "autoscaler", None)
    for (owner, endpoint_id), started in autoscaler.alive_since() if autoscaler else []:
        if owner == account_id:
            component, per_hour = rate(endpoint_id)
            yield Usage("serverless", endpoint_id, component, started, now, per_hour)


def _volume_usages(store: Store, account_id: str, now: float) -> Iterable[Usage]:
    for volume in archive_of(store).volumes(account_id):
        high = volume.get("type") == "HIGH_PERFORMANCE"
        per_gb = VOLUME_PER_GB_MONTH["HIGH_PERFORMANCE" if high else "STANDARD"] / HOURS_PER_MONTH
        component = "highPerformanceAmount" if high else "standardAmount"
        for start, end, size in volume["segments"]:
            yield Usage(
                "network-volumes",
                volume["id"],
                component,
                start,
                now if end is None else end,
                size * per_gb,
            )


def usages(store: Store, account_id: str, now: float, queue: Any = None) -> list[Usage]:
    """Everything the account ran or kept, as usages (``queue``: the broker's service)."""
    out: list[Usage] = []
    pods = [billable(r, now) for r in store.pods.all_of(account_id)]
    for facts in [*archive_of(store).of(account_id), *pods]:
        out.extend(_pod_usages(facts, now))
    out.extend(_serverless_usages(store, queue, account_id, now))
    out.extend(_volume_usages(store, account_id, now))
    return out


def _overlap_hours(usage: Usage, start: float, end: float) -> float:
    return max(0.0, min(usage.end, end) - max(usage.start, start)) / 3600.0


def _ts(moment: datetime) -> float:
    return moment.astimezone(timezone.utc).timestamp()


def _money(value: float) -> float:
    return round(value, 8)


def bucket_amounts(
    window: Window, items: list[Usage]
) -> list[tuple[datetime, datetime, dict[tuple[str, str], dict[str, float]]]]:
    """Per bucket: ``{(kind, resource_id): {component: amount}}`` (only what overlaps).

    Each usage visits only the buckets it overlaps (found by bisection), so many short job
    executions over many buckets stay cheap.
    """
    buckets = window.buckets()
    edges = [_ts(start) for start, _ in buckets] + [_ts(window.end)]
    amounts: list[dict[tuple[str, str], dict[str, float]]] = [{} for _ in buckets]
    for usage in items:
        if usage.end <= edges[0] or usage.start >= edges[-1]:
            continue
        index = max(0, bisect_right(edges, usage.start) - 1)
        while index < len(buckets) and edges[index] < usage.end:
            hours = _overlap_hours(usage, edges[index], edges[index + 1])
            if hours > 0:
                slot = amounts[index].setdefault((usage.kind, usage.resource_id), {})
                slot[usage.component] = slot.get(usage.component, 0.0) + hours * usage.rate
            index += 1
    return [(start, end, amounts[i]) for i, (start, end) in enumerate(buckets)]


def aggregate(window: Window, items: list[Usage]) -> list[dict[str, Any]]:
    """``GET /v2/billing`` records: one per bucket, every component."""
    records = []
    for start, end, amounts in bucket_amounts(window, items):
        record: dict[str, Any] = {"startTime": iso(start), "endTime": iso(end)}
        fields = dict.fromkeys(AGGREGATE_FIELDS.values(), 0.0)
        for (kind, _rid), parts in amounts.items():
            for component, value in parts.items():
                fields[AGGREGATE_FIELDS[(kind, component)]] += value
        record["totalAmount"] = _money(sum(fields.values()))
        record.update({name: _money(value) for name, value in fields.items()})
        records.append(record)
    return records


def per_kind(
    window: Window, items: list[Usage], kind: str, resource_id: str | None
) -> list[dict[str, Any]]:
    """A per-kind route's records: per resource per bucket (only buckets it spent in)."""
    components, id_field = KIND_COMPONENTS[kind]
    selected = [
        u for u in items if u.kind == kind and (resource_id is None or u.resource_id == resource_id)
    ]
    records = []
    for start, end, amounts in bucket_amounts(window, selected):
        if id_field is None:
            total = sum(sum(parts.values()) for parts in amounts.values())
            records.append(
                {"startTime": iso(start), "endTime": iso(end), "totalAmount": _money(total)}
            )
            continue
        for (_kind, rid), parts in sorted(amounts.items()):
            record: dict[str, Any] = {"startTime": iso(start), "endTime": iso(end), id_field: rid}
            record["totalAmount"] = _money(sum(parts.values()))
            record.update({c: _money(parts.get(c, 0.0)) for c in components})
            records.append(record)
    return records


def totals(records: list[dict[str, Any]], names: Iterable[str]) -> dict[str, float]:
    """Sums of the amount fields over the records."""
    return {name: _money(sum(r[name] for r in records)) for name in names}
