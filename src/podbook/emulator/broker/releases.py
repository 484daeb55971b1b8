"""Endpoint versions, releases and the worker listing of ``/v2/serverless/{id}``.

An endpoint's record carries its ``version`` and its release history (``releases``, newest
first, stored with the record so a restart keeps them; never part of the Endpoint body). A
release is recorded at create and at every update that changes the container or handler
configuration (:data:`podbook.api.endpoints.RELEASE_FIELDS`); its ``diff`` names each changed
field as a dotted path (``env.MODEL``, ``gpu.count``). Secret-looking env values are masked
in a diff, so the history never holds a second copy of a secret.

A worker takes the endpoint's version at its first contact: after a release, workers that
connected earlier are stale until they are replaced.
"""

from __future__ import annotations

import secrets
import time
from datetime import datetime, timezone
from typing import Any

from podbook.api.endpoints import RELEASE_FIELDS
from podbook.api.secrets import MASK, is_secret_name
from podbook.emulator.broker.queues import EndpointQueue

MAX_RELEASES = 50
"""Releases kept per endpoint (the oldest are dropped)."""

PRIVATE_KEYS = ("releases",)


def _now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def public(record: dict[str, Any]) -> dict[str, Any]:
    """The Endpoint body of a stored record (release history left out)."""
    body = {k: v for k, v in record.items() if k not in PRIVATE_KEYS}
    body.setdefault("version", 1)
    return body


def _flatten(field: str, value: Any) -> dict[str, Any]:
    """``{"env.A": "1", ...}`` for a dict value, else ``{field: value}``."""
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key, inner in value.items():
            flat.update(_flatten(f"{field}.{key}", inner))
        return flat
    return {field: value}


def _shown(path: str, value: Any) -> Any:
    if value is not None and path.startswith("env.") and is_secret_name(path[4:]):
        return MASK
    return value


def config_diff(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``{field, old, new}`` entries of the release fields that differ."""
    entries = []
    for field in RELEASE_FIELDS:
        before = _flatten(field, old.get(field)) if old.get(field) is not None else {}
        after = _flatten(field, new.get(field)) if new.get(field) is not None else {}
        for path in sorted(set(before) | set(after)):
            if before.get(path) != after.get(path):
                entries.append(
                    {
                        "field": path,
                        "old": _shown(path, before.get(path)),
                        "new": _shown(path, after.get(path)),
                    }
                )
    return entries


def add_release(record: dict[str, Any], diff: list[dict[str, Any]]) -> dict[str, Any]:
    """``record`` one version further, with a MANUAL release of ``diff`` on top."""
    version = int(record.get("version") or 0) + 1
    release = {
        "id": secrets.token_hex(4),
        "version": version,
        "source": "MANUAL",
        "buildId": None,
        "createdByUserId": None,
        "createdAt": _now_iso(),
        "diff": diff,
    }
    history = [release, *(record.get("releases") or [])][:MAX_RELEASES]
    return {**record, "version": version, "releases": history}


def first_release(record: dict[str, Any]) -> dict[str, Any]:
    """A new endpoint's record with version 1 (its configuration as the diff from nothing)."""
    return add_release({**record, "version": 0}, config_diff({}, record))


def history(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The releases of an endpoint, newest first (built-ins: one at their creation)."""
    releases = record.get("releases")
    if releases:
        return [dict(release) for release in releases]
    initial = first_release(record)["releases"][0]
    return [{**initial, "id": "initial", "createdAt": record.get("createdAt") or _now_iso()}]


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def workers_body(
    queue: EndpointQueue, starting: list[tuple[str, float, int]] | None = None
) -> dict[str, Any]:
    """``GET /v2/serverless/{id}/workers``: the connected workers with their status, and the
    workers the emulator started that have not asked for a job yet (``starting``: id, start
    time, version), ``INITIALIZING``."""
    version = int(queue.record.get("version") or 1)
    now = time.time()
    entries = [
        (state.worker_id, "RUNNING" if state.running else "IDLE", state.started_at, state.version)
        for state in queue.workers.values()
    ]
    entries += [(wid, "INITIALIZING", at, ver) for wid, at, ver in starting or []]
    workers = []
    for worker_id, status, started_at, worker_version in entries:
        worker_version = worker_version or version
        workers.append(
            {
                "id": worker_id,
                "status": status,
                "isStale": worker_version != version,
                "version": worker_version,
                "gpuCount": 0,
                "image": queue.record.get("image"),
                "uptimeSeconds": max(0, int(now - started_at)),
                "gpuTypeId": None,
                "dataCenterId": None,
                "startedAt": _iso(started_at),
            }
        )
    summary = {status.lower(): 0 for status in ("RUNNING", "IDLE", "INITIALIZING", "THROTTLED")}
    for worker in workers:
        summary[worker["status"].lower()] += 1
    summary |= {"unhealthy": 0, "total": len(workers)}
    return {"workers": workers, "summary": summary, "endpointVersion": version}


def releases_body(queue: EndpointQueue) -> dict[str, Any]:
    """``GET /v2/serverless/{id}/releases``: the history and how far the latest got."""
    listing = workers_body(queue)  # the connected ones: a release counts who serves it
    total = len(listing["workers"])
    on_latest = sum(1 for w in listing["workers"] if not w["isStale"])
    releases = history(queue.record)
    version = listing["endpointVersion"]
    for release in releases:
        latest = release.get("version") == version
        release["workerCount"] = (
            on_latest
            if latest
            else sum(1 for w in listing["workers"] if w["version"] == release.get("version"))
        )
    return {
        "endpointVersion": version,
        "rollout": {
            "inProgress": on_latest < total,
            "workersOnLatest": on_latest,
            "workersTotal": total,
            "percentOnLatest": 100 if total == 0 else (100 * on_latest) // total,
        },
        "releases": releases,
    }
