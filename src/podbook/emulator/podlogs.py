"""Pod log lines: produced from what happens to each pod, stored so each line keeps its id.

A pod's status is derived from its stored phase (:mod:`podbook.emulator.lifecycle`), so its
log is too: the lines a phase implies up to a moment (scheduled and image pulled, container
started, the services its image starts, a periodic line while RUNNING) are a pure function
of the pod record and that moment. :class:`PodLogBook` *materializes* them lazily — whenever
a log is read, and just before an action changes the phase — appending every line stamped
after the pod's cursor and up to now to SQLite (table ``pod_logs``) with the next sequence
number. A stored line never changes, so its event id (``ts/seq``) names it forever, across
emulator restarts. Actions add their own lines (stop, restart, start, terminate).

Services follow the environment the container gets, as the usual images do: ``PUBLIC_KEY``
(injected by ``startSsh``) starts sshd, ``JUPYTER_PASSWORD`` (injected by ``startJupyter``)
starts Jupyter. The lines name the variables, never their values.

Bounds: at most :data:`PERIODIC_BACKFILL` periodic lines are produced for a gap nobody read
(older ones are never produced), and a pod keeps its last :data:`KEEP_LINES` lines. A
terminated pod's lines stay readable by the streams already open (they end once they have
sent them); they are dropped when the emulator next starts.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from podbook.api.logs import format_event_id
from podbook.emulator.lifecycle import iso, running_since
from podbook.emulator.podmetrics import utilization
from podbook.emulator.settings import EmulatorSettings
from podbook.emulator.store import Store

Record = dict[str, Any]

PERIODIC_BACKFILL = 1000
KEEP_LINES = 20_000
_PRUNE_EVERY = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pod_logs (
    pod_id TEXT NOT NULL, seq INTEGER NOT NULL, ts REAL NOT NULL, source TEXT NOT NULL,
    line TEXT NOT NULL, PRIMARY KEY (pod_id, seq)
);
CREATE TABLE IF NOT EXISTS pod_log_cursors (
    pod_id TEXT PRIMARY KEY, upto REAL NOT NULL, seq INTEGER NOT NULL
);
"""


@dataclass(frozen=True)
class StoredLine:
    """One stored log line."""

    seq: int
    ts: float
    source: str
    line: str

    @property
    def ts_text(self) -> str:
        """The RFC 3339 timestamp of the line."""
        return iso(self.ts)

    @property
    def event_id(self) -> str:
        """The line's SSE event id."""
        return format_event_id(self.ts_text, self.seq)

    def data(self) -> dict[str, str]:
        """The SSE ``data`` payload."""
        return {"ts": self.ts_text, "source": self.source, "line": self.line}


Event = tuple[float, str, str]  # (ts, source, line)


def phase_events(
    record: Record, after: float, upto: float, interval: float, *, services: bool = True
) -> list[Event]:
    """The lines the pod's current phase implies, stamped in ``(after, upto]``, in order
    (``services``: with the invented sshd and Jupyter lines; the local runtime logs real ones)."""
    phase = record["phase"]
    if phase["kind"] != "boot":
        return []
    since = phase["since"]
    ready = running_since(phase)
    assert ready is not None
    started = since + phase["provisionFor"]
    events: list[Event] = []
    if phase["provisionFor"] > 0:  # a new pod: placed, then its image pulled
        machine = record.get("gpu", {}).get("id") or record.get("cpu", {}).get("id", "cpu")
        events += [
            (
                since,
                "system",
                f"pod {record['id']} scheduled on a {machine} host in {record['dataCenterId']}",
            ),
            (since, "system", f"pulling image {record['image']}"),
            (started, "system", f"image {record['image']} pulled"),
        ]
    events.append((started, "system", "starting container"))
    events += _startup_lines(record, started, ready, services=services)
    events = [event for event in events if after < event[0] <= upto]
    events += _periodic(record, ready, after, upto, interval)
    return events


def _startup_lines(record: Record, started: float, ready: float, *, services: bool) -> list[Event]:
    env = (record.get("env") or {}) if services else {}
    args = record.get("args") or ""
    # With real services (the local runtime) the container log is the process's own output,
    # so the emulator's "started" line is a system line.
    lines: list[Event] = [
        (
            started,
            "container" if services else "system",
            f"container started: {record['image']}" + (f" {args}" if args else ""),
        ),
    ]
    if "PUBLIC_KEY" in env:
        count = len([k for k in str(env["PUBLIC_KEY"]).splitlines() if k.strip()])
        port = "22/tcp" in (record.get("ports") or [])
        lines += [
            (ready, "container", f"setting up SSH: {count} authorized key(s) from PUBLIC_KEY"),
            (
                ready,
                "container",
                "sshd listening on port 22" + ("" if port else " (port 22/tcp not exposed)"),
            ),
        ]
    if "JUPYTER_PASSWORD" in env:
        lines.append(
            (
                ready,
                "container",
                "Jupyter Server listening on http://0.0.0.0:8888/ (password from JUPYTER_PASSWORD)",
            )
        )
    lines.append((ready, "system", "pod is RUNNING"))
    return lines


def _periodic(
    record: Record, ready: float, after: float, upto: float, interval: float
) -> list[Event]:
    """One line every ``interval`` seconds of RUNNING: uptime and utilization."""
    if upto <= ready or interval <= 0:
        return []
    first = max(1, math.floor((after - ready) / interval) + 1)
    last = math.floor((upto - ready) / interval)
    first = max(first, last - PERIODIC_BACKFILL + 1)
    events: list[Event] = []
    gpus = record.get("gpu", {}).get("count", 0)
    for k in range(first, last + 1):
        ts = ready + k * interval
        if ts <= after:
            continue
        pid = record["id"]
        parts = [f"uptime {int(k * interval)}s"]
        if gpus:
            parts.append(f"gpu0 {utilization(pid, 'gpu0', ts, 62, 30)}%")
        parts.append(f"cpu {utilization(pid, 'cpu', ts, 35, 25)}%")
        parts.append(f"memory {utilization(pid, 'memory', ts, 40, 12)}%")
        events.append((ts, "container", "heartbeat: " + ", ".join(parts)))
    return events


ACTION_LINES: dict[str, list[tuple[str, str]]] = {
    "stop": [
        ("system", "stop requested"),
        ("container", "received SIGTERM, shutting down"),
        ("system", "container stopped"),
    ],
    "restart": [
        ("system", "restart requested"),
        ("container", "received SIGTERM, shutting down"),
        ("system", "container stopped"),
    ],
    "start": [("system", "start requested")],
    "terminate": [
        ("system", "terminate requested"),
        ("container", "received SIGTERM, shutting down"),
        ("system", "pod terminated"),
    ],
}


class PodLogBook:
    """Every pod's log lines: materialized from pod records, stored in SQLite."""

    def __init__(self, store: Store, settings: EmulatorSettings) -> None:
        self._store = store
        self._settings = settings
        # Simulated pods get invented container lines; a real main process (the local runtime)
        # writes its own.
        self._invented = settings.runtime != "local"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            store.path, check_same_thread=False, isolation_level=None, timeout=10.0
        )
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._cursors: dict[str, list[float]] = {
            row[0]: [row[1], row[2]]
            for row in self._db.execute("SELECT pod_id, upto, seq FROM pod_log_cursors")
        }
        self._drop_gone()

    def _drop_gone(self) -> None:
        """Forget the lines of pods that no longer exist (terminated before a restart)."""
        gone = [pod_id for pod_id in self._cursors if not self._store.pods.exists(pod_id)]
        for pod_id in gone:
            self._write([], pod_id, delete=True)

    # writing -----------------------------------------------------------------------------

    def materialize(self, record: Record, now: float) -> None:
        """Store every line the pod's phase implies up to ``now`` not stored yet."""
        pod_id = record["id"]
        cursor = self._cursor(record)
        if now <= cursor[0]:
            return
        events = phase_events(
            record,
            cursor[0],
            now,
            self._settings.log_interval_seconds,
            services=self._invented,
        )
        self._append(pod_id, events, now)

    def note_action(self, record: Record, action: str, now: float) -> None:
        """Before ``action`` changes the pod: its lines so far, then the action's own."""
        self.materialize(record, now)
        events = [
            (now, source, line)
            for source, line in ACTION_LINES.get(action, [])
            if self._invented or source == "system"
        ]
        self._append(record["id"], events, now)

    def append_lines(self, record: Record, lines: list[tuple[str, str]], now: float) -> None:
        """Add ``(source, line)`` lines stamped ``now`` after the lines its phase implies."""
        self.materialize(record, now)
        cursor = self._cursor(record)
        ts = max(now, cursor[0])
        self._append(record["id"], [(ts, source, line) for source, line in lines], ts)

    def _cursor(self, record: Record) -> list[float]:
        cursor = self._cursors.get(record["id"])
        if cursor is None:
            cursor = [record["phase"]["since"] - 0.001, 0]
            self._cursors[record["id"]] = cursor
        return cursor

    def _append(self, pod_id: str, events: list[Event], upto: float) -> None:
        cursor = self._cursors[pod_id]
        seq = int(cursor[1])
        rows = []
        for ts, source, line in events:
            seq += 1
            rows.append((pod_id, seq, ts, source, line))
        self._write(rows, pod_id, upto=max(upto, cursor[0]), seq=seq)
        prune = seq // _PRUNE_EVERY != int(cursor[1]) // _PRUNE_EVERY and seq > KEEP_LINES
        cursor[0], cursor[1] = max(upto, cursor[0]), seq
        if prune:
            with self._lock:
                self._db.execute(
                    "DELETE FROM pod_logs WHERE pod_id = ? AND seq <= ?", (pod_id, seq - KEEP_LINES)
                )

    def _write(
        self,
        rows: list[tuple[str, int, float, str, str]],
        pod_id: str,
        *,
        upto: float = 0.0,
        seq: int = 0,
        delete: bool = False,
    ) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                if delete:
                    self._db.execute("DELETE FROM pod_logs WHERE pod_id = ?", (pod_id,))
                    self._db.execute("DELETE FROM pod_log_cursors WHERE pod_id = ?", (pod_id,))
                    self._cursors.pop(pod_id, None)
                else:
                    self._db.executemany("INSERT INTO pod_logs VALUES (?, ?, ?, ?, ?)", rows)
                    self._db.execute(
                        "INSERT OR REPLACE INTO pod_log_cursors VALUES (?, ?, ?)",
                        (pod_id, upto, seq),
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    # reading -----------------------------------------------------------------------------

    def last_seq(self, pod_id: str) -> int:
        """The sequence number of the pod's latest stored line (0: none)."""
        cursor = self._cursors.get(pod_id)
        return int(cursor[1]) if cursor else 0

    def tail(self, pod_id: str, count: int, source: str | None) -> list[StoredLine]:
        """The last ``count`` lines (of ``source``, or all), oldest first."""
        if count <= 0:
            return []
        sql = "SELECT seq, ts, source, line FROM pod_logs WHERE pod_id = ?"
        params: tuple[Any, ...] = (pod_id,)
        if source:
            sql += " AND source = ?"
            params += (source,)
        rows = self._query(sql + " ORDER BY seq DESC LIMIT ?", (*params, count))
        return [StoredLine(*row) for row in reversed(rows)]

    def after(
        self,
        pod_id: str,
        *,
        seq: int | None = None,
        ts: float | None = None,
        inclusive: bool = False,
        source: str | None = None,
        limit: int = 1000,
    ) -> list[StoredLine]:
        """Lines after sequence ``seq`` (or stamped after/at ``ts``), oldest first."""
        sql = "SELECT seq, ts, source, line FROM pod_logs WHERE pod_id = ?"
        params: tuple[Any, ...] = (pod_id,)
        if seq is not None:
            sql += " AND seq > ?"
            params += (seq,)
        if ts is not None:
            # lines are stamped in milliseconds on the wire: compare at that precision
            sql += " AND ROUND(ts * 1000) >= ?" if inclusive else " AND ROUND(ts * 1000) > ?"
            params += (math.floor(ts * 1000 + 0.5),)
        if source:
            sql += " AND source = ?"
            params += (source,)
        rows = self._query(sql + " ORDER BY seq LIMIT ?", (*params, limit))
        return [StoredLine(*row) for row in rows]

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def close(self) -> None:
        """Close the book's database connection."""
        with self._lock:
            self._db.close()


def log_book(emulator: Any) -> PodLogBook:
    """The emulator's :class:`PodLogBook` (made on first use, kept in ``extras``)."""
    book = emulator.extras.get("pod_logs")
    if book is None:
        book = emulator.extras["pod_logs"] = PodLogBook(emulator.store, emulator.settings)
    return book


def iter_pages(
    book: PodLogBook, pod_id: str, seq: int, source: str | None
) -> Iterator[list[StoredLine]]:
    """Pages of lines after ``seq`` until none is left."""
    while True:
        page = book.after(pod_id, seq=seq, source=source)
        if not page:
            return
        yield page
        seq = page[-1].seq
