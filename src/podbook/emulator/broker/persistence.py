"""The broker's tables in the emulator's SQLite file (write-through; memory serves reads).

Job changes are pending until ``flush`` writes all of them in one transaction. The broker
flushes before it answers any request that changed a job (a ``/run`` id, a take, an
acknowledged result, a cancel, a retry): an answered change survives ``kill -9`` of the
emulator (WAL with ``synchronous=NORMAL``: a commit is in the file once the process has
written it; only an OS crash could lose the last ones). Changes nobody is waiting for
(timers) are flushed at the end of their event-loop tick. A *lazy* change (a ``/runsync`` job
whose id nobody outside knows yet, see ``Broker._lazy``) waits at most
:data:`LAZY_WRITE_SECONDS`, unless an earlier flush takes it along. Endpoints and worker keys
are written at once.

``endpoints`` (definitions), ``jobs`` (queued, running and finished jobs within retention;
never stream chunks) and ``worker_keys`` (SHA-256 digests only). On start every row is read
back; a job that was IN_PROGRESS stays on its worker until that worker claims or disowns it
(``Broker.start``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from podbook.emulator.broker.jobs import Job
from podbook.emulator.memory import release_if_empty
from podbook.emulator.store import Store, key_digest

LAZY_WRITE_SECONDS = 0.05
"""How long a lazy job change may wait in memory before it is written."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queue_endpoints (
    account_id TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL,
    PRIMARY KEY (account_id, id)
);
CREATE TABLE IF NOT EXISTS queue_jobs (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, doc TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS queue_worker_keys (
    digest TEXT PRIMARY KEY, account_id TEXT NOT NULL, endpoint_id TEXT NOT NULL
);
"""


class BrokerTables:
    """Reads and writes the broker's rows through the emulator's :class:`Store`."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._pending: dict[str, Job | None] = {}
        self._flush_scheduled = False
        self._late: asyncio.TimerHandle | None = None
        self._written: set[str] = set()
        with store._lock:
            store._db.executescript(_SCHEMA)

    def _rows(self, sql: str) -> list[tuple[Any, ...]]:
        with self._store._lock:
            return self._store._db.execute(sql).fetchall()

    # endpoints --------------------------------------------------------------------------

    def load_endpoints(self) -> list[tuple[str, dict[str, Any]]]:
        """``(account_id, record)`` of every stored endpoint, oldest first."""
        return [
            (account, orjson.loads(doc))
            for account, doc in self._rows(
                "SELECT account_id, doc FROM queue_endpoints ORDER BY rowid"
            )
        ]

    def save_endpoint(self, account_id: str, record: dict[str, Any]) -> None:
        """Insert or replace an endpoint definition."""
        self._store._execute(
            "INSERT OR REPLACE INTO queue_endpoints (account_id, id, doc) VALUES (?, ?, ?)",
            (account_id, record["id"], orjson.dumps(record).decode()),
        )

    def delete_endpoint(self, account_id: str, endpoint_id: str) -> None:
        """Remove an endpoint with its jobs and worker keys."""
        for table in ("queue_endpoints", "queue_jobs", "queue_worker_keys"):
            column = "id" if table == "queue_endpoints" else "endpoint_id"
            self._store._execute(
                f"DELETE FROM {table} WHERE account_id = ? AND {column} = ?",
                (account_id, endpoint_id),
            )

    # jobs -------------------------------------------------------------------------------

    def load_jobs(self) -> list[dict[str, Any]]:
        """Every stored job document, in submission order."""
        docs = [
            orjson.loads(doc) for (doc,) in self._rows("SELECT doc FROM queue_jobs ORDER BY rowid")
        ]
        self._written.update(doc["id"] for doc in docs)
        return docs

    def written(self, job_id: str) -> bool:
        """Whether the job has a row in the file (its latest change may still be pending)."""
        return job_id in self._written

    def save_job(self, job: Job, *, lazy: bool = False) -> None:
        """Insert or replace the job's document, as it is when the next ``flush`` writes it:
        at the latest at the end of this loop tick, or within :data:`LAZY_WRITE_SECONDS`
        when ``lazy``."""
        self._pending[job.id] = job
        self._schedule_flush(lazy)

    def delete_job(self, job_id: str) -> None:
        """Remove a job (at the end of this loop tick; at once when it was never written)."""
        if job_id not in self._written:
            self._pending.pop(job_id, None)
            return
        self._pending[job_id] = None
        self._schedule_flush()

    def _schedule_flush(self, lazy: bool = False) -> None:
        if self._flush_scheduled or (lazy and self._late is not None):
            return  # a flush on its way takes this change along
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving yet (start-up): write now
            self.flush()
            return
        if lazy:
            self._late = loop.call_later(LAZY_WRITE_SECONDS, self._flush_late)
        else:
            self._flush_scheduled = True
            loop.call_soon(self.flush)

    def _flush_late(self) -> None:
        self._late = None
        self.flush()

    def flush(self) -> None:
        """Write every pending job change in one transaction."""
        self._flush_scheduled = False
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        upserts = [
            (job.id, job.account_id, job.endpoint_id, orjson.dumps(job.to_doc()).decode())
            for job in pending.values()
            if job is not None
        ]
        deletes = [(job_id,) for job_id, job in pending.items() if job is None]
        self._written.update(row[0] for row in upserts)
        self._written.difference_update(row[0] for row in deletes)
        release_if_empty(self._written)
        store = self._store
        with store._lock:
            db = store._db
            db.execute("BEGIN")
            try:
                if upserts:
                    db.executemany(
                        "INSERT INTO queue_jobs (id, account_id, endpoint_id, doc) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET doc = excluded.doc",
                        upserts,
                    )
                if deletes:
                    db.executemany("DELETE FROM queue_jobs WHERE id = ?", deletes)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # worker keys ------------------------------------------------------------------------

    def load_worker_keys(self) -> dict[str, tuple[str, str]]:
        """digest → ``(account_id, endpoint_id)``."""
        return {
            digest: (account, endpoint)
            for digest, account, endpoint in self._rows(
                "SELECT digest, account_id, endpoint_id FROM queue_worker_keys"
            )
        }

    def add_worker_key(self, worker_key: str, account_id: str, endpoint_id: str) -> str:
        """Store a worker key's digest; returns the digest."""
        digest = key_digest(worker_key)
        self._store._execute(
            "INSERT OR REPLACE INTO queue_worker_keys (digest, account_id, endpoint_id) "
            "VALUES (?, ?, ?)",
            (digest, account_id, endpoint_id),
        )
        return digest
