"""Pod run intervals for billing.

A pod is billed only while RUNNING: each stored pod keeps ``runs``, its closed RUNNING
intervals ``[start, end]`` (epoch seconds); the open one is derived from its phase. When a pod
is terminated its billable facts move to the ``billing_archive`` table, so its spend stays in
the history after the pod is gone (and across emulator restarts). Each serverless job
execution that ends is written there too (the broker forgets jobs after their retention);
those rows are batched and written half a second later, off the request's path. In memory an
execution is two floats of its endpoint's array, not its record: a million executions hold
16 MB, not the records' half a gigabyte.
"""

from __future__ import annotations

import asyncio
import time
from array import array
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import orjson

from podbook.emulator.broker.endpoints import start_command
from podbook.emulator.lifecycle import running_since
from podbook.emulator.store import Store

Record = dict[str, Any]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS billing_archive (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, doc TEXT NOT NULL
);
"""


def close_run(record: Record, now: float) -> None:
    """Record the pod's current RUNNING interval as ended at ``now`` (before a stop/restart)."""
    since = running_since(record["phase"])
    if since is not None and since < now:
        record["runs"] = [*record.get("runs", []), [since, now]]


def runs_of(record: Record, now: float) -> list[tuple[float, float]]:
    """Every RUNNING interval of a pod (stored or archived), the open one ending at ``now``."""
    runs = [(float(a), float(b)) for a, b in record.get("runs", [])]
    phase = record.get("phase")
    if phase is not None:
        since = running_since(phase)
        if since is not None and since < now:
            runs.append((since, now))
    return runs


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def billable(record: Record, now: float, ended: float | None = None) -> Record:
    """The facts billing needs about a pod (what the archive keeps)."""
    persistent = (record.get("mounts") or {}).get("persistent") or {}
    return {
        "id": record["id"],
        "runs": [list(run) for run in runs_of(record, now)],
        "pricePerHour": float(record.get("pricePerHour") or 0.0),
        "gpu": "gpu" in record,
        "clusterId": (record.get("cluster") or {}).get("id"),
        "persistentGb": int(persistent.get("size") or 0),
        "createdAt": _epoch(record["createdAt"]),
        "endedAt": ended,
    }


class BillingArchive:
    """Billable facts of terminated pods, in the emulator's SQLite file."""

    def __init__(self, store: Store) -> None:
        self._store = store
        with store._lock:
            store._db.executescript(_SCHEMA)
            rows = store._db.execute(
                "SELECT account_id, doc FROM billing_archive ORDER BY rowid"
            ).fetchall()
        self._by_account: dict[str, list[Record]] = {}
        self._jobs: dict[str, dict[str, array[float]]] = {}
        """Ended executions by account and endpoint: ``start, end, start, end, ...``."""
        self._volumes: dict[str, dict[str, Record]] = {}
        self._pending: list[tuple[str, str, str]] = []
        for account_id, doc in rows:
            facts = orjson.loads(doc)
            if facts.get("kind") == "volume":
                self._volumes.setdefault(account_id, {})[facts["id"]] = facts
                continue
            if facts.get("kind") == "job":
                self._keep(account_id, facts)
            else:
                self._by_account.setdefault(account_id, []).append(facts)

    def add(self, account_id: str, record: Record, now: float) -> None:
        """Archive a pod being terminated at ``now``."""
        facts = billable(record, now, ended=now)
        self._store._execute(
            "INSERT OR REPLACE INTO billing_archive (id, account_id, doc) VALUES (?, ?, ?)",
            (facts["id"], account_id, orjson.dumps(facts).decode()),
        )
        self._by_account.setdefault(account_id, []).append(facts)

    def of(self, account_id: str) -> list[Record]:
        """The account's archived pods."""
        return list(self._by_account.get(account_id, []))

    def _keep(self, account_id: str, facts: Record) -> None:
        spans = self._jobs.setdefault(account_id, {})
        spans.setdefault(facts["endpointId"], array("d")).extend((facts["start"], facts["end"]))

    def add_execution(self, account_id: str, facts: Record) -> None:
        """Keep one ended job execution (``endpointId``, ``start``/``end`` epoch seconds)."""
        facts = {**facts, "kind": "job"}
        self._keep(account_id, facts)
        self._pending.append((facts["id"], account_id, orjson.dumps(facts).decode()))
        if len(self._pending) == 1:
            try:
                asyncio.get_running_loop().call_later(0.5, self.flush)
            except RuntimeError:  # no loop (tests, tools): write now
                self.flush()

    def executions(self, account_id: str) -> Iterator[tuple[str, float, float]]:
        """The account's ended job executions: ``(endpoint id, start, end)``."""
        for endpoint_id, spans in list(self._jobs.get(account_id, {}).items()):
            for index in range(0, len(spans), 2):
                yield endpoint_id, spans[index], spans[index + 1]

    def volume_changed(
        self, account_id: str, volume: Record | None, volume_id: str, now: float
    ) -> None:
        """Follow a network volume's size over its life (``volume`` None: deleted)."""
        facts = self._volumes.setdefault(account_id, {}).get(volume_id)
        if facts is None:
            if volume is None:
                return
            facts = {"id": volume_id, "kind": "volume", "type": volume.get("type"), "segments": []}
            self._volumes[account_id][volume_id] = facts
        segments = facts["segments"]
        size = None if volume is None else int(volume.get("size") or 0)
        if segments and segments[-1][1] is None and segments[-1][2] == size:
            return
        if segments and segments[-1][1] is None:
            segments[-1][1] = now
        if size is not None:
            segments.append([now, None, size])
        self._store._execute(
            "INSERT OR REPLACE INTO billing_archive (id, account_id, doc) VALUES (?, ?, ?)",
            (f"volume:{volume_id}", account_id, orjson.dumps(facts).decode()),
        )

    def volumes(self, account_id: str) -> list[Record]:
        """The account's network volumes with their size segments ``[start, end|None, GB]``."""
        return list(self._volumes.get(account_id, {}).values())

    def flush(self) -> None:
        """Write the batched job executions in one transaction."""
        rows, self._pending = self._pending, []
        if not rows:
            return
        with self._store._lock:
            db = self._store._db
            db.execute("BEGIN")
            try:
                db.executemany(
                    "INSERT OR REPLACE INTO billing_archive (id, account_id, doc) VALUES (?, ?, ?)",
                    rows,
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise


def archive_of(store: Store) -> BillingArchive:
    """The store's billing archive (made on first use, one per store)."""
    archive = getattr(store, "_billing_archive", None)
    if archive is None:
        archive = BillingArchive(store)
        store._billing_archive = archive  # type: ignore[attr-defined]
    return archive


def terminated(store: Store, account_id: str, record: Record, now: float) -> None:
    """Keep a terminated pod's spend: call before deleting it from the store."""
    archive_of(store).add(account_id, record, now)


def _watch_jobs(archive: BillingArchive, broker: Any, autoscaler: Any = None) -> None:
    """Keep each job execution as it ends (chained before the broker's own hook); an endpoint
    whose workers the emulator starts bills its workers' lifetimes instead, as the service
    bills a worker from its start to its stop, idle time included."""
    previous = broker.on_job_ended

    def scaled(account_id: str, endpoint_id: str) -> bool:
        queue = broker.queues.get((account_id, endpoint_id))
        return queue is not None and start_command(queue.record) is not None

    def ended(job: Any) -> None:
        if (
            job.started_at is not None
            and job.finished_at is not None
            and not scaled(job.account_id, job.endpoint_id)
        ):
            archive.add_execution(
                job.account_id,
                {
                    "id": f"job:{job.id}:{job.started_at}",
                    "endpointId": job.endpoint_id,
                    "start": job.started_at / 1000,
                    "end": job.finished_at / 1000,
                },
            )
        if previous is not None:
            previous(job)

    broker.on_job_ended = ended
    if autoscaler is not None:

        def worker_ended(account_id: str, endpoint_id: str, worker_id: str, start: float) -> None:
            end = time.time()
            facts = {"id": f"worker:{worker_id}", "endpointId": endpoint_id, "start": start}
            archive.add_execution(account_id, {**facts, "end": end})

        autoscaler.on_worker_ended = worker_ended


def _watch_volumes(archive: BillingArchive, volumes: Any, clock: Any) -> None:
    """Follow each network volume's size from creation to deletion."""
    put, delete = volumes.put, volumes.delete

    def put_and_follow(account_id: str, record: Record) -> None:
        put(account_id, record)
        archive.volume_changed(account_id, record, record["id"], clock())

    def delete_and_follow(account_id: str, record_id: str) -> None:
        delete(account_id, record_id)
        archive.volume_changed(account_id, None, record_id, clock())

    volumes.put = put_and_follow
    volumes.delete = delete_and_follow


def install(store: Store, clock: Any, queue: Any = None) -> None:
    """Archive every pod the store deletes (terminate, cluster delete) before it goes, and
    every job execution of ``queue`` (the broker's service) as it ends."""
    archive = archive_of(store)
    if queue is not None:
        _watch_jobs(archive, queue.broker, getattr(queue, "autoscaler", None))
    volumes = getattr(store, "network_volumes", None)
    if volumes is not None:
        _watch_volumes(archive, volumes, clock)
    delete = store.pods.delete

    def delete_and_archive(account_id: str, record_id: str) -> None:
        with store.transaction():  # a crash leaves the pod alive or archived, never both
            record = store.pods.get(account_id, record_id)
            if record is not None:
                archive.add(account_id, record, clock())
            delete(account_id, record_id)

    store.pods.delete = delete_and_archive  # type: ignore[method-assign]
