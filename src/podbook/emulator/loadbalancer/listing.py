"""``GET /v2/serverless/{id}/workers`` of a load-balancing endpoint: its registered workers.

A healthy worker is RUNNING while it has requests in flight, else IDLE; the others are
INITIALIZING (no ``200`` from its health route yet, or ``204``) or UNHEALTHY.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

from podbook.emulator.loadbalancer.pool import HEALTHY, LbWorker, WorkerPool

_SUMMARY_KEYS = ("running", "idle", "initializing", "throttled", "unhealthy")


def worker_status(worker: LbWorker) -> str:
    """The reference's worker status of a registered worker."""
    if worker.state == HEALTHY:
        return "RUNNING" if worker.in_flight else "IDLE"
    return worker.state


def lb_workers_body(record: dict[str, Any], pool: WorkerPool) -> dict[str, Any]:
    """The listing body, in the reference's shape."""
    version = int(record.get("version") or 1)
    now = time.time()
    workers = [
        {
            "id": worker.worker_id,
            "status": worker_status(worker),
            "isStale": False,
            "version": version,
            "gpuCount": 0,
            "image": record.get("image"),
            "uptimeSeconds": max(0, int(now - worker.registered_at)),
            "gpuTypeId": None,
            "dataCenterId": None,
            "startedAt": datetime.fromtimestamp(worker.registered_at, timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            ),
        }
        for worker in pool.workers.values()
    ]
    summary = {key: sum(1 for w in workers if w["status"] == key.upper()) for key in _SUMMARY_KEYS}
    summary["total"] = len(workers)
    return {"workers": workers, "summary": summary, "endpointVersion": version}
