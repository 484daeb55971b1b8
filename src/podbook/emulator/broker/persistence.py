"""The broker's tables in the emulator's SQLite file (write-through; memory serves reads).

``endpoints`` (definitions), ``jobs`` (queued, running and finished jobs within retention;
never stream chunks) and ``worker_keys`` (SHA-256 digests only). On start every row is read
back; a job that was IN_PROGRESS when the emulator stopped goes back to the queue (its
worker's connection is gone with the old process, so only a new take can finish it).
"""

from __future__ import annotations

from typing import Any

import orjson

from podbook.emulator.store import Store, key_digest

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
        return [
            orjson.loads(doc) for (doc,) in self._rows("SELECT doc FROM queue_jobs ORDER BY rowid")
        ]

    def save_job(self, doc: dict[str, Any]) -> None:
        """Insert or replace a job document."""
        self._store._execute(
            "INSERT INTO queue_jobs (id, account_id, endpoint_id, doc) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET doc = excluded.doc",
            (doc["id"], doc["account_id"], doc["endpoint_id"], orjson.dumps(doc).decode()),
        )

    def delete_job(self, job_id: str) -> None:
        """Remove a job."""
        self._store._execute("DELETE FROM queue_jobs WHERE id = ?", (job_id,))

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
