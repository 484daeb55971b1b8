"""SQLite state with an in-memory, write-through cache.

Everything the emulator knows lives in one SQLite file (WAL journal): accounts, API keys (as
SHA-256 digests, never in clear), pods, clusters, templates, registry credentials. Each
resource is one JSON document per row. On start every row is loaded into memory; reads are
served from memory and each change is written to the file before the request answers, so an
emulator stopped and started on the same file loses nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

Record = dict[str, Any]

_COLLECTIONS = ("pods", "clusters", "templates", "registries", "network_volumes")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    digest TEXT PRIMARY KEY, account_id TEXT NOT NULL, scope TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
""" + "".join(
    f"CREATE TABLE IF NOT EXISTS {name} "
    "(id TEXT PRIMARY KEY, account_id TEXT NOT NULL, doc TEXT NOT NULL);\n"
    for name in _COLLECTIONS
)


def key_digest(api_key: str) -> str:
    """The stored form of an API key."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()


def _create_private_file(path: Path) -> None:
    """Create ``path`` with mode 0600 if it does not exist yet."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)


class Collection:
    """One resource kind: records by id, each owned by one account."""

    def __init__(self, store: Store, table: str) -> None:
        self._store = store
        self._table = table
        self._by_id: dict[str, Record] = {}
        self._by_account: dict[str, dict[str, Record]] = {}

    def _load(self, rows: list[tuple[str, str, str]]) -> None:
        for record_id, account_id, doc in rows:
            record = json.loads(doc)
            self._by_id[record_id] = record
            self._by_account.setdefault(account_id, {})[record_id] = record

    def get(self, account_id: str, record_id: str) -> Record | None:
        """The record if it exists and belongs to ``account_id``."""
        record = self._by_account.get(account_id, {}).get(record_id)
        return record

    def owner_of(self, record_id: str) -> str | None:
        """The account that holds the record, or None when there is none."""
        if record_id not in self._by_id:
            return None
        return next(
            (account for account, records in self._by_account.items() if record_id in records),
            None,
        )

    def exists(self, record_id: str) -> bool:
        """Whether any account holds a record with this id (for id generation)."""
        return record_id in self._by_id

    def fresh_id(self, make: Callable[[], str]) -> str:
        """An id from ``make()`` (drawn again while taken) that no account's record has."""
        while (record_id := make()) in self._by_id:
            pass
        return record_id

    def all_of(self, account_id: str) -> Iterator[Record]:
        """The account's records in creation order."""
        return iter(list(self._by_account.get(account_id, {}).values()))

    def every(self) -> list[tuple[str, Record]]:
        """Every account's records as ``(account_id, record)``, in creation order."""
        return [
            (account_id, record)
            for account_id, records in self._by_account.items()
            for record in records.values()
        ]

    def count(self) -> int:
        """How many records all accounts hold."""
        return len(self._by_id)

    def put(self, account_id: str, record: Record) -> None:
        """Insert or replace a record (memory and file), keeping its place in the order."""
        record_id = record["id"]
        doc = orjson.dumps(record).decode("utf-8")
        self._store._execute(
            f"INSERT INTO {self._table} (id, account_id, doc) VALUES (?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET account_id = excluded.account_id, doc = excluded.doc",
            (record_id, account_id, doc),
        )
        self._by_id[record_id] = record
        self._by_account.setdefault(account_id, {})[record_id] = record

    def delete(self, account_id: str, record_id: str) -> None:
        """Remove a record (memory and file)."""
        self._store._execute(f"DELETE FROM {self._table} WHERE id = ?", (record_id,))
        self._by_id.pop(record_id, None)
        self._by_account.get(account_id, {}).pop(record_id, None)


class Store:
    """The emulator's state: one SQLite file, mirrored in memory."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        _create_private_file(self.path)
        self._lock = threading.RLock()  # reentrant: writes inside ``transaction()``
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        for suffix in ("-wal", "-shm"):
            side = Path(str(self.path) + suffix)
            if side.exists():
                os.chmod(side, 0o600)
        self.pods = Collection(self, "pods")
        self.clusters = Collection(self, "clusters")
        self.templates = Collection(self, "templates")
        self.registries = Collection(self, "registries")
        self.network_volumes = Collection(self, "network_volumes")
        for name in _COLLECTIONS:
            rows = self._db.execute(
                f"SELECT id, account_id, doc FROM {name} ORDER BY rowid"
            ).fetchall()
            getattr(self, name)._load(rows)
        self._accounts: dict[str, Record] = {
            row[0]: json.loads(row[1]) for row in self._db.execute("SELECT id, doc FROM accounts")
        }
        self._keys: dict[str, tuple[str, str]] = {
            row[0]: (row[1], row[2])
            for row in self._db.execute("SELECT digest, account_id, scope FROM api_keys")
        }
        self.identity: str = self._meta_once("identity", uuid.uuid4().hex)
        """This database's own id, made once: it marks what on disk belongs to its records."""
        self.pod_key_secret: bytes = bytes.fromhex(
            self._meta_once("pod_key_secret", secrets.token_hex(32))
        )
        """The secret pod-scoped keys are derived from (see :mod:`podbook.emulator.podkeys`)."""

    def _meta_once(self, name: str, value: str) -> str:
        """The ``meta`` value ``name``, stored as ``value`` the first time it is asked for."""
        self._db.execute("INSERT OR IGNORE INTO meta (name, value) VALUES (?, ?)", (name, value))
        return str(self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()[0])

    def _execute(self, sql: str, params: tuple[Any, ...]) -> None:
        with self._lock:
            self._db.execute(sql, params)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Writes made inside the block are committed together: after a crash (``kill -9``)
        either all of them are in the file or none (a cluster and its member pods). Other
        threads' writes wait; a block inside another joins it. Keep the block free of awaits.
        """
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            self._db.execute("BEGIN")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the database file."""
        with self._lock:
            self._db.close()

    # accounts and keys -------------------------------------------------------------------

    def ensure_account(self, account_id: str) -> Record:
        """The account's document, creating an empty one if needed."""
        account = self._accounts.get(account_id)
        if account is None:
            account = {"id": account_id, "sshKeys": []}
            self.save_account(account)
        return account

    def account(self, account_id: str) -> Record | None:
        """The account's document, if the account exists."""
        return self._accounts.get(account_id)

    def save_account(self, account: Record) -> None:
        """Write an account document."""
        self._execute(
            "INSERT OR REPLACE INTO accounts (id, doc) VALUES (?, ?)",
            (account["id"], json.dumps(account)),
        )
        self._accounts[account["id"]] = account

    def add_key(self, api_key: str, account_id: str, scope: str) -> None:
        """Register an API key (stored as a digest) for an account; scope full|readonly."""
        digest = key_digest(api_key)
        if self._keys.get(digest) == (account_id, scope):
            return
        self._execute(
            "INSERT OR REPLACE INTO api_keys (digest, account_id, scope) VALUES (?, ?, ?)",
            (digest, account_id, scope),
        )
        self._keys[digest] = (account_id, scope)

    def lookup_key(self, api_key: str) -> tuple[str, str] | None:
        """``(account_id, scope)`` for a known key, else None."""
        return self._keys.get(key_digest(api_key))
