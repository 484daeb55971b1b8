"""The read-only checks: each reads one area of the service through the typed client (so
the answer is parsed into, and validated against, podbook's models) and sums it up in a few
words. Nothing here writes anything."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podbook.livecheck.options import NAME_PREFIX, LiveOptions
from podbook.livecheck.report import Reporter

__all__ = ["READ_ONLY_CHECKS", "run_read_only"]

Check = Callable[[Any], tuple[str, Any]]


def _count(items: list[Any], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _available(items: list[Any]) -> int:
    return sum(1 for item in items if getattr(item, "availability", None) not in (None, "NONE"))


def gpus(client: Any) -> tuple[str, Any]:
    """GPU types with availability."""
    found = client.catalog.gpus(availability=True)
    return f"{_count(found, 'type')}, {_available(found)} available", found


def cpus(client: Any) -> tuple[str, Any]:
    """CPU flavors with availability."""
    found = client.catalog.cpus(availability=True)
    return f"{_count(found, 'flavor')}, {_available(found)} available", found


def pods(client: Any) -> tuple[str, Any]:
    """The account's pods; names pods a live check left behind (read-only: not removed)."""
    found = client.pods.list()
    summary = _count(found, "pod")
    left = [pod.name for pod in found if pod.name.startswith(NAME_PREFIX)]
    if left:
        summary += (
            f"; {len(left)} named {NAME_PREFIX}* left by an interrupted live check "
            "(PODBOOK_LIVE_SPEND=1 sweeps them)"
        )
    return summary, found


def ssh_keys(client: Any) -> tuple[str, Any]:
    """Registered SSH public keys."""
    found = client.account.ssh_keys.get()
    return _count(list(found.keys), "SSH key"), found


def billing(client: Any) -> tuple[str, Any]:
    """Spend of the last 7 days, by day."""
    found = client.billing.list(last_n=7, bucket_size="day")
    total = sum(record.total_amount for record in found.records)
    return f"${total:.2f} over the last 7 days ({_count(found.records, 'bucket')})", found


def listing(read: Callable[[Any], list[Any]], noun: str) -> Check:
    """A check that reads a list and counts it in ``noun``s."""

    def check(client: Any) -> tuple[str, Any]:
        found = read(client)
        return _count(found, noun), found

    return check


READ_ONLY_CHECKS: tuple[tuple[str, Check], ...] = (
    ("catalog gpus", gpus),
    ("catalog cpus", cpus),
    ("catalog datacenters", listing(lambda c: c.catalog.datacenters(), "data center")),
    ("pods", pods),
    ("endpoints", listing(lambda c: c.endpoints.list(), "endpoint")),
    ("templates", listing(lambda c: c.templates.list(), "template")),
    ("network volumes", listing(lambda c: c.network_volumes.list(), "network volume")),
    ("registries", listing(lambda c: c.registries.list(), "registry credential")),
    ("ssh keys", ssh_keys),
    ("billing", billing),
)
"""(name, check) in the order they run; every one only reads."""


def queue_health(client: Any, endpoint_id: str) -> tuple[str, Any]:
    """The queue ``health`` of one endpoint: job and worker counts."""
    health = client.endpoint(endpoint_id).health()
    jobs, workers = health.jobs, health.workers
    return (
        f"{endpoint_id}: {jobs.in_queue} queued, {jobs.in_progress} in progress, "
        f"{workers.idle} idle and {workers.running} running workers",
        health,
    )


def run_read_only(client: Any, reporter: Reporter, options: LiveOptions) -> None:
    """Run every read-only check, then the queue health (or say why it is skipped)."""
    for name, check in READ_ONLY_CHECKS:
        reporter.check(name, lambda check=check: check(client))
    if options.endpoint:
        reporter.check("queue health", lambda: queue_health(client, options.endpoint or ""))
    else:
        reporter.skip("queue health", "set PODBOOK_LIVE_ENDPOINT=ID to read an endpoint's health")
