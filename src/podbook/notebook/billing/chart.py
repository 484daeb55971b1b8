"""Chart data from a billing answer: one bar per bucket, one stacked series per kind or id.

The same dict drives the live view (``views/billing.js``) and the static SVG
(:mod:`podbook.notebook.billing.svg`), so both show the same bars, labels and colors.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

KIND_SERIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "pods": ("Pods", "#2f81f7", ("podGpuAmount", "podCpuAmount", "podDiskAmount")),
    "serverless": (
        "Serverless",
        "#a371f7",
        (
            "serverlessGpuAmount",
            "serverlessCpuAmount",
            "serverlessDiskAmount",
            "serverlessFeeAmount",
        ),
    ),
    "network-volumes": (
        "Network volumes",
        "#3fb950",
        ("storageStandardAmount", "storageHighPerformanceAmount"),
    ),
    "endpoints": ("Public endpoints", "#d29922", ("endpointAmount",)),
    "clusters": (
        "Clusters",
        "#f85149",
        ("clusterGpuAmount", "clusterDiskAmount", "clusterNetworkingAmount"),
    ),
}
"""Aggregate series: label, color and the aggregate fields summed into it."""

PALETTE = ("#2f81f7", "#a371f7", "#3fb950", "#d29922", "#f85149", "#39c5cf", "#db61a2", "#8b949e")
ID_FIELDS = ("podId", "serverlessId", "networkVolumeId", "clusterId")


def bucket_label(start: datetime, bucket_size: str) -> str:
    """A short axis label of a bucket."""
    if bucket_size == "hour":
        return start.strftime("%d %H:00")
    if bucket_size == "day":
        return start.strftime("%b %d")
    if bucket_size == "week":
        return "wk " + start.strftime("%b %d")
    if bucket_size == "month":
        return start.strftime("%b %Y")
    return start.strftime("%Y")


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def wire_dict(response: Any) -> dict[str, Any]:
    """The wire-form dict of a billing answer (a model or a dict)."""
    if hasattr(response, "model_dump"):
        return response.model_dump(mode="json", by_alias=True)
    return dict(response)


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def chart_data(response: Any, kind: str | None = None) -> dict[str, Any]:
    """The chart of an aggregate answer (``kind`` None: one series per resource kind) or of
    one kind's answer (one series per resource id, or one when the kind has no ids)."""
    wire = wire_dict(response)
    query = wire["metadata"]["query"]
    size = query["bucketSize"]
    buckets: dict[str, dict[str, Any]] = {}
    series: dict[str, dict[str, str]] = {}
    for record in wire["records"]:
        start = _parse(record["startTime"])
        bucket = buckets.setdefault(
            _iso(start),
            {"start": _iso(start), "label": bucket_label(start, size), "values": {}},
        )
        if kind is None:
            for key, (label, color, fields) in KIND_SERIES.items():
                series.setdefault(key, {"key": key, "label": label, "color": color})
                bucket["values"][key] = sum(float(record.get(f) or 0.0) for f in fields)
            continue
        rid = next((record[f] for f in ID_FIELDS if f in record), None)
        key = rid or kind
        if key not in series:
            label = KIND_SERIES[kind][0] if rid is None else rid
            color = PALETTE[len(series) % len(PALETTE)]
            series[key] = {"key": key, "label": label, "color": color}
        values = bucket["values"]
        values[key] = values.get(key, 0.0) + float(record["totalAmount"])
    ordered = [buckets[k] for k in sorted(buckets)]
    totals = {key: sum(b["values"].get(key, 0.0) for b in ordered) for key in series}
    return {
        "title": "Spend by " + ("resource kind" if kind is None else kind),
        "bucketSize": size,
        "window": {"start": query["startTime"], "end": query["endTime"]},
        "series": list(series.values()),
        "buckets": ordered,
        "totals": totals,
        "total": sum(totals.values()),
    }


def nice_max(value: float) -> float:
    """The smallest 1, 2 or 5 × 10^k at or above ``value`` (1 for nothing spent)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if step * power >= value * (1 - 1e-12):
            return step * power
    return 10 * power


def money(value: float) -> str:
    """``$12.34``, or three significant digits under a dollar (``$0.00123``)."""
    if value == 0:
        return "$0"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    digits = max(2, 2 - math.floor(math.log10(abs(value))))
    return f"${value:.{digits}f}"
