"""``kill -9`` of the emulator under load, then a restart on the same database.

Pods, clusters and endpoints are being created and jobs submitted with ``/run`` from several
threads while a real ``podbook worker`` (a separate process that outlives the emulator) runs
them through a handler that appends each job id to a ledger. The emulator is killed with
SIGKILL mid-load and started again on the same port and file. Then: every resource whose
creation was answered 201 is there, every job whose ``/run`` was answered with an id is
there and ends COMPLETED with its output readable, and the ledger names every accepted job
exactly once (queued jobs ran once; jobs running at the kill were not run again).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil
from faults_helpers import (
    FAST_BROKER,
    WorkerProcess,
    create_endpoint,
    ledger_counts,
    status,
    wait_for,
    worker_key,
    write_ledger_handler,
)

GPU = "NVIDIA GeForce RTX 4090"
LOAD_SECONDS_BEFORE_KILL = 2.5
UNLIMITED = (
    "--rate-limit",
    "minute=1000000",
    "--queue-rate-limit",
    "run=1000000/10000",
    "--queue-rate-limit",
    "status=1000000/10000",
)
"""Rate limits are not under test here: the checks read every accepted id back."""


class Load:
    """Threads that create one kind of thing in a loop and keep the ids that were accepted."""

    def __init__(self, url: str, api_key: str) -> None:
        self.url = url
        self.api_key = api_key
        self.stop = threading.Event()
        self.accepted: dict[str, list[str]] = {"job": [], "pod": [], "cluster": [], "endpoint": []}
        self.refused: dict[str, int] = {kind: 0 for kind in self.accepted}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def spawn(self, kind: str, send: Callable[[httpx.Client, int], str | None]) -> None:
        """Loop ``send(http, n)`` (an accepted id, or None) until stopped."""

        def loop() -> None:
            headers = {"Authorization": f"Bearer {self.api_key}"}
            with httpx.Client(base_url=self.url, headers=headers, timeout=10) as http:
                n = 0
                while not self.stop.is_set():
                    n += 1
                    try:
                        accepted = send(http, n)
                    except httpx.HTTPError:
                        accepted = None
                        time.sleep(0.05)  # the emulator is down: do not spin
                    with self._lock:
                        if accepted is None:
                            self.refused[kind] += 1
                        else:
                            self.accepted[kind].append(accepted)

        thread = threading.Thread(target=loop, name=f"load-{kind}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def join(self) -> None:
        """Stop every thread and wait for it."""
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def count(self, kind: str) -> int:
        """How many of ``kind`` were accepted so far."""
        with self._lock:
            return len(self.accepted[kind])


def stored_job_statuses(db: Path) -> Counter[str]:
    """Job statuses as the database file holds them (read while the emulator is dead)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT doc FROM queue_jobs").fetchall()
    return Counter(json.loads(doc)["status"] for (doc,) in rows)


def _created(response: httpx.Response, status: int = 201) -> str | None:
    return response.json()["id"] if response.status_code == status else None


def test_kill_9_under_load_loses_nothing_and_runs_each_job_once(
    start_emulator: Any, tmp_path: Path
) -> None:
    emu = start_emulator(extra_args=(*FAST_BROKER, *UNLIMITED))
    handler, ledger = write_ledger_handler(tmp_path)
    with emu.http() as http:
        endpoint = create_endpoint(http, "crash-load")
        key = worker_key(http, endpoint)
    worker = WorkerProcess(
        emu.url,
        endpoint,
        key,
        handler,
        tmp_path / "worker.log",
        worker_id="w-survivor",
        concurrency=6,
    )
    load = Load(emu.url, emu.api_key)
    try:

        def run_job(http: httpx.Client, n: int) -> str | None:
            # Every fourth job takes half a second: some are always running at the kill.
            body = {"input": {"n": n, "sleep": 0.5 if n % 4 == 0 else 0.01}}
            return _created(http.post(f"/v2/{endpoint}/run", json=body), 200)

        def create_pod(http: httpx.Client, n: int) -> str | None:
            body = {"name": f"load-{n}", "image": "runpod/pytorch:latest", "gpu": {"id": GPU}}
            return _created(http.post("/v2/pods", json=body))

        def create_cluster(http: httpx.Client, n: int) -> str | None:
            body = {
                "name": f"load-{n}",
                "type": "TRAINING",
                "image": "runpod/pytorch:latest",
                "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
            }
            return _created(http.post("/v2/clusters", json=body))

        def create_serverless(http: httpx.Client, n: int) -> str | None:
            return _created(http.post("/v2/serverless", json={"name": f"load-{n}"}))

        for _ in range(2):
            load.spawn("job", run_job)
        load.spawn("pod", create_pod)
        load.spawn("cluster", create_cluster)
        load.spawn("endpoint", create_serverless)

        time.sleep(LOAD_SECONDS_BEFORE_KILL)
        wait_for(lambda: len(ledger_counts(ledger)) >= 20 and load.count("pod"), timeout=60)
        executed_before = sum(ledger_counts(ledger).values())
        assert emu.proc is not None
        emu.proc.kill()  # SIGKILL: no shutdown, no flush, no farewell
        emu.proc.wait(timeout=10)
        time.sleep(0.3)  # the load keeps trying against a dead port
        load.join()
        accepted = {kind: list(ids) for kind, ids in load.accepted.items()}
        stored = stored_job_statuses(emu.db)
        # The kill hit mid-work: jobs waited in the queue and jobs ran on the worker.
        assert stored.get("IN_QUEUE", 0) >= 1 and stored.get("IN_PROGRESS", 0) >= 1, stored

        restart_started = time.monotonic()
        emu.start()
        back_after = time.monotonic() - restart_started
        assert worker.alive(), worker.log()

        with emu.http() as http:
            for kind, path in (
                ("pod", "/v2/pods/{}"),
                ("cluster", "/v2/clusters/{}"),
                ("endpoint", "/v2/serverless/{}"),
            ):
                missing = [i for i in accepted[kind] if http.get(path.format(i)).status_code != 200]
                assert not missing, f"{kind}s accepted before the kill are gone: {missing}"
            short = [
                c
                for c in accepted["cluster"]
                if len(http.get(f"/v2/clusters/{c}/pods").json()["pods"]) != 2
            ]
            assert not short, f"clusters that lost member pods: {short}"
            # Nor a member pod whose cluster never made it to the file (created together).
            pods = http.get("/v2/pods", params={"includeClusterPods": "true"}).json()["pods"]
            clusters = {c["id"] for c in http.get("/v2/clusters").json()["clusters"]}
            orphans = [
                p["id"] for p in pods if "cluster" in p and p["cluster"]["id"] not in clusters
            ]
            assert not orphans, f"member pods without their cluster: {orphans}"
            for job_id in accepted["job"]:  # every accepted job is known after the restart
                status(http, endpoint, job_id)

            def drained() -> bool:
                jobs = http.get(f"/v2/{endpoint}/health").json()["jobs"]
                return jobs["inQueue"] == 0 and jobs["inProgress"] == 0

            wait_for(drained, timeout=120, interval=0.2)
            recovered_after = time.monotonic() - restart_started
            records = [status(http, endpoint, j) for j in accepted["job"]]
            wrong = [r for r in records if r["status"] != "COMPLETED" or "n" not in r["output"]]
            assert not wrong, f"results not readable after the restart: {wrong[:5]}"

        # Nothing new arrives: let a late duplicate show itself before the ledger is read.
        time.sleep(1.0)
        counts = ledger_counts(ledger)
        twice = {j: c for j, c in counts.items() if c > 1}
        never = [j for j in accepted["job"] if counts[j] == 0]
        assert not twice, f"jobs executed more than once: {twice}"
        assert not never, f"accepted jobs never executed: {never}"
        assert worker.alive(), worker.log()

        print(
            "\nkill -9 under load:"
            f" accepted before the kill: {len(accepted['job'])} jobs, {len(accepted['pod'])} pods,"
            f" {len(accepted['cluster'])} clusters, {len(accepted['endpoint'])} endpoints;"
            f" executed before the kill: {executed_before};"
            f" stored at the kill: {dict(stored)};"
            f" refused or failed calls: {sum(load.refused.values())};"
            f" after the restart: all present, executions {sum(counts.values())}"
            f" (distinct {len(counts)}), duplicates 0;"
            f" emulator answering {back_after:.2f} s after the restart;"
            f" every accepted job COMPLETED {recovered_after:.2f} s after the restart"
        )
    finally:
        load.join()
        worker.stop()


def test_a_job_whose_worker_died_with_the_emulator_runs_again_after_the_restart(
    start_emulator: Any, tmp_path: Path
) -> None:
    emu = start_emulator(extra_args=FAST_BROKER)
    handler, ledger = write_ledger_handler(tmp_path)
    go = tmp_path / "go"
    with emu.http() as http:
        endpoint = create_endpoint(http, "both-died")
        key = worker_key(http, endpoint)
        held = http.post(f"/v2/{endpoint}/run", json={"input": {"n": 1, "until": str(go)}})
        job_id = held.json()["id"]
    first = WorkerProcess(emu.url, endpoint, key, handler, tmp_path / "w1.log", worker_id="w-lost")
    second = None
    try:
        wait_for(lambda: ledger_counts(ledger)[job_id] == 1, timeout=30)
        assert emu.proc is not None
        emu.proc.kill()
        first.kill9()
        emu.proc.wait(timeout=10)
        restarted = time.monotonic()
        emu.start()
        with emu.http() as http:
            # Still on its (dead) worker's name until that worker is gone (3 s) ...
            assert status(http, endpoint, job_id)["status"] == "IN_PROGRESS"
            go.write_text("")
            second = WorkerProcess(
                emu.url, endpoint, key, handler, tmp_path / "w2.log", worker_id="w-new"
            )
            # ... then queued again, first in line, and run by the new worker.
            wait_for(lambda: status(http, endpoint, job_id)["status"] == "COMPLETED", 60)
            requeued_after = time.monotonic() - restarted
            record = status(http, endpoint, job_id)
            assert record["workerId"] == "w-new" and record["output"] == {"n": 1}
        # At least once when the worker died too: its first run never finished.
        assert ledger_counts(ledger)[job_id] == 2
        assert requeued_after >= 3.0  # not before --worker-gone-seconds
        print(f"\nworker and emulator killed: job COMPLETED {requeued_after:.2f} s after restart")
    finally:
        go.write_text("")
        first.stop()
        if second is not None:
            second.stop()


def test_supervised_workers_do_not_outlive_a_killed_emulator(start_emulator: Any) -> None:
    emu = start_emulator(extra_args=FAST_BROKER)
    with emu.http() as http:
        answer = http.post("/v2/echo/runsync", json={"input": {"before": True}}).json()
        assert answer["status"] == "COMPLETED", answer
    assert emu.proc is not None
    workers = [
        child
        for child in psutil.Process(emu.proc.pid).children()
        if "podbook.worker" in " ".join(child.cmdline())
    ]
    assert workers, "the echo endpoint's supervised worker should be running"
    emu.proc.kill()
    emu.proc.wait(timeout=10)
    _, alive = psutil.wait_procs(workers, timeout=20)
    for orphan in alive:  # clean up after a failure: these are this test's processes
        orphan.kill()
    assert not alive, f"orphaned workers still running: {[p.pid for p in alive]}"
    emu.start()
    with emu.http() as http:  # a fresh supervised worker serves the endpoint again
        answer = http.post("/v2/echo/runsync", json={"input": {"after": True}}).json()
        if answer["status"] != "COMPLETED":
            wait_for(lambda: status(http, "echo", answer["id"])["status"] == "COMPLETED", 30)


def test_writes_of_one_store_transaction_reach_the_file_together(tmp_path: Path) -> None:
    """What ``create_cluster`` relies on: a crash leaves all of a block's writes, or none."""
    from podbook.emulator.store import Store

    store = Store(tmp_path / "state.db")
    reader = sqlite3.connect(tmp_path / "state.db")

    def stored_pods() -> int:
        return reader.execute("SELECT COUNT(*) FROM pods").fetchone()[0]

    with store.transaction():
        store.pods.put("acct", {"id": "m0"})
        with store.transaction():  # a nested block joins the outer one
            store.pods.put("acct", {"id": "m1"})
        store.clusters.put("acct", {"id": "c0", "memberIds": ["m0", "m1"]})
        assert stored_pods() == 0  # another connection (the file after a crash) sees none yet
    assert stored_pods() == 2
    with contextlib.suppress(RuntimeError), store.transaction():
        store.pods.put("acct", {"id": "m2"})
        raise RuntimeError("interrupted")
    assert stored_pods() == 2
    reader.close()
    store.close()


def test_a_handler_endpoints_running_job_is_queued_again_at_once_after_a_kill(
    start_emulator: Any, tmp_path: Path
) -> None:
    # Workers are gone only after 30 s here: the job must not wait for that.
    emu = start_emulator(extra_args=("--worker-poll-seconds", "0.5", "--worker-gone-seconds", "30"))
    handler, ledger = write_ledger_handler(tmp_path)
    go = tmp_path / "go"
    try:
        with emu.http() as http:
            created = http.post(
                "/v2/serverless",
                json={"name": "supervised", "handler": str(handler), "workers": {"max": 1}},
            )
            assert created.status_code == 201, created.text
            endpoint = created.json()["id"]
            job_id = http.post(
                f"/v2/{endpoint}/run", json={"input": {"n": 5, "until": str(go)}}
            ).json()["id"]
            wait_for(lambda: ledger_counts(ledger)[job_id] == 1, timeout=60)
        assert emu.proc is not None
        emu.proc.kill()
        emu.proc.wait(timeout=10)
        restarted = time.monotonic()
        emu.start()
        go.write_text("")
        with emu.http() as http:
            wait_for(lambda: status(http, endpoint, job_id)["status"] == "COMPLETED", 60)
            assert status(http, endpoint, job_id)["output"] == {"n": 5}
        done_after = time.monotonic() - restarted
        assert done_after < 25, done_after  # not held for --worker-gone-seconds (30 s)
        # Its supervised worker stopped with the old process: at least once here.
        assert ledger_counts(ledger)[job_id] == 2
        print(f"\nhandler endpoint: running job COMPLETED {done_after:.2f} s after the restart")
    finally:
        go.write_text("")
