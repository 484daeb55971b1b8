"""Queue benchmark on loopback: ``/runsync`` round trips and a backlog drain, a no-op handler.

Run from the repository root: ``.venv/bin/python bench/jobqueue.py`` (about a minute). The
emulator runs with its default settings, the seed's per-operation rate limits in force (so a
leg sends at most 2,000 ``/runsync`` per endpoint in any 10 s window), and an unmodified
``runpod`` SDK worker (``runpod.serverless.start``, configured by the variables of
``podbook worker-env``) stays connected, idle, to another endpoint of the same emulator during
every measurement. One run measures, side by side:

- ``/runsync`` round trip (p50, p99) and jobs/s, sequential, one keep-alive connection:
  through the emulator + a podbook worker (``podbook worker``, on its push socket, see
  ``docs/queue-push.md``), the same worker on HTTP only (``PODBOOK_WORKER_PUSH=0``), a bare
  httpx take/done loop (the HTTP worker protocol's floor), and the ``runpod`` package's own
  local test server (``--rp_serve_api``: the handler in-process, no queue, no worker),
  in turns of 50 calls, so every leg meets the same load of a shared machine;
- a backlog of 1,000 ``/run`` jobs queued while no worker runs, then drained by the podbook
  worker at concurrency 8.

Every figure comes from this run; the report prints ratios and whether the targets of
issue 12 hold. The requests are sent with bare httpx, so the figures are the service's, not
the client library's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from _common import (
    Emulator,
    Timing,
    clean_env,
    emulator,
    free_port,
    podbook_worker,
    spawn,
    stop_group,
    verdict,
    wait_answering,
    wait_until,
)

TARGET_P50_MS = 2.0  # /runsync p50 through emulator + podbook worker
TARGET_JOBS_PER_S = 450.0  # sequential /runsync through emulator + podbook worker
TARGET_RATIO = 1.6  # its p50 at most this many times the runpod test server's
TARGET_DRAIN_PER_S = 1500.0  # a 1,000-job backlog at concurrency 8
RUNSYNC_WINDOW_LIMIT = 2000  # the seed's /runsync limit per endpoint per 10 s
LEGS = ("push", "http", "bare")  # the emulator's endpoints of the round-trip legs

NOOP_HANDLER = '''
"""A no-op handler: returns its input."""

def noop(job):
    return job["input"]
'''

SDK_WORKER = '''
"""An unmodified runpod worker with a no-op handler: python sdk_worker.py CONCURRENCY [rp args]."""
import sys

import runpod

CONCURRENCY = int(sys.argv.pop(1))


def noop(job):
    return job["input"]


runpod.serverless.start({"handler": noop, "concurrency_modifier": lambda current: CONCURRENCY})
'''

BARE_WORKER = '''
"""The worker protocol's floor: long-poll a take, post the input back as the result; nothing
else (no pings, no stop polls, no handler runner). python bare_worker.py URL ENDPOINT."""
import os
import sys

import httpx

url, endpoint = sys.argv[1], sys.argv[2]
base = f"{url}/v2/{endpoint}"
headers = {"Authorization": os.environ["RUNPOD_AI_API_KEY"]}
with httpx.Client(headers=headers, timeout=120) as http:
    print("serving", flush=True)
    while True:
        taken = http.get(f"{base}/job-take/bare?job_in_progress=0")
        if taken.status_code != 200:
            continue
        job = taken.json()
        http.post(f"{base}/job-done/bare/{job['id']}?isStream=false", json={"output": job["input"]})
'''


# --- timing ----------------------------------------------------------------------------------


def measure(call: Callable[[], object], count: int, warmup: int, budget: float) -> Timing:
    """``warmup`` untimed calls, then up to ``count`` timed ones within ``budget`` seconds."""
    return measure_interleaved({"": call}, count, warmup, budget)[""]


def measure_interleaved(
    calls: dict[str, Callable[[], object]],
    count: int,
    warmup: int,
    budget: float,
    block: int = 50,
) -> dict[str, Timing]:
    """Each call ``warmup`` times untimed, then up to ``count`` timed each, in turns of
    ``block`` calls, within ``budget`` seconds in all: every leg meets the same machine load
    (other processes come and go on a shared machine), so their ratios are fair."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    clock = time.perf_counter
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    deadline = clock() + budget
    while any(len(s) < count for s in seconds.values()) and clock() < deadline:
        for name, call in calls.items():
            taken = seconds[name]
            for _ in range(min(block, count - len(taken))):
                started = clock()
                call()
                taken.append(clock() - started)
    return {name: Timing(taken) for name, taken in seconds.items()}


# --- processes -------------------------------------------------------------------------------


@contextmanager
def bare_worker(emu: Emulator, endpoint_id: str, script: Path) -> Iterator[Any]:
    """The protocol's floor (``BARE_WORKER``) serving ``endpoint_id``."""
    env = clean_env(emu.workdir / "home-bare")
    env["RUNPOD_AI_API_KEY"] = emu.worker_key(endpoint_id)
    log = emu.workdir / "worker-bare.log"
    proc = spawn([sys.executable, str(script), emu.url, endpoint_id], log, env)
    try:
        wait_until(lambda: "serving" in log.read_text(errors="replace"), 30, "the bare worker")
        yield proc
    finally:
        stop_group(proc)


def sdk_worker_env(emu: Emulator, endpoint_id: str, home: Path) -> dict[str, str]:
    """What ``podbook worker-env`` prints, as an environment (fresh worker key)."""
    from podbook.worker._env import worker_env

    env = clean_env(home)
    env.update(worker_env(emu.url, endpoint_id, emu.worker_key(endpoint_id)))
    return env


@contextmanager
def sdk_worker(
    emu: Emulator, endpoint_id: str, script: Path, concurrency: int, name: str = "sdk"
) -> Iterator[subprocess.Popen[bytes]]:
    """An unmodified ``runpod.serverless.start`` worker serving ``endpoint_id``."""
    home = emu.workdir / f"home-{name}"
    env = sdk_worker_env(emu, endpoint_id, home)
    proc = spawn(
        [sys.executable, str(script), str(concurrency)],
        emu.workdir / f"worker-{name}.log",
        env,
        cwd=home,
    )
    try:
        with emu.http() as http:

            def connected() -> bool:
                if proc.poll() is not None:
                    raise RuntimeError(f"the SDK worker exited: see worker-{name}.log")
                workers = http.get(f"/v2/{endpoint_id}/health").json()["workers"]
                return bool(workers["idle"] + workers["running"])

            wait_until(connected, 60, "the SDK worker's first call")
        yield proc
    finally:
        stop_group(proc)


@contextmanager
def rp_test_server(workdir: Path, script: Path) -> Iterator[str]:
    """The ``runpod`` package's local test server (``--rp_serve_api``), handler in-process."""
    port = free_port()
    home = workdir / "home-rp-serve"
    log = workdir / "rp-serve.log"
    proc = spawn(
        [sys.executable, str(script), "1", "--rp_serve_api", "--rp_api_host", "127.0.0.1",
         "--rp_api_port", str(port)],
        log, clean_env(home), cwd=home,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_answering(proc, url + "/openapi.json", log, "the runpod test server", 60)
        yield url
    finally:
        stop_group(proc)


# --- measurements ----------------------------------------------------------------------------


def runsync_caller(
    http: httpx.Client, path: str, timings: list[tuple[float, float]] | None = None
) -> Callable[[], object]:
    """One ``/runsync`` with a small input; checks that the job completed with its input.
    The job's ``delayTime`` and ``executionTime`` (ms) go into ``timings`` when given."""
    counter = iter(range(10**9))

    def call() -> object:
        n = next(counter)
        response = http.post(path, json={"input": {"n": n}})
        response.raise_for_status()
        body = response.json()
        if body.get("status") != "COMPLETED" or body.get("output") != {"n": n}:
            raise RuntimeError(f"/runsync did not complete with its input: {str(body)[:300]}")
        if timings is not None:
            timings.append(
                (float(body.get("delayTime") or 0), float(body.get("executionTime") or 0))
            )
        return body

    return call


def get_caller(http: httpx.Client, path: str) -> Callable[[], object]:
    """One GET of ``path`` that must answer 200."""

    def call() -> object:
        response = http.get(path)
        response.raise_for_status()
        return response

    return call


def queue_backlog(emu: Emulator, endpoint_id: str, count: int) -> list[str]:
    """Submit ``count`` ``/run`` jobs (no worker is serving); their ids."""
    with emu.http() as http:
        ids = []
        for n in range(count):
            response = http.post(f"/v2/{endpoint_id}/run", json={"input": {"n": n}})
            response.raise_for_status()
            ids.append(response.json()["id"])
    return ids


@dataclass(frozen=True)
class Drain:
    """How a backlog drained: jobs completed in ``seconds`` (from the first take)."""

    completed: int
    total: int
    seconds: float

    @property
    def rate(self) -> float:
        """Jobs per second."""
        return self.completed / self.seconds if self.seconds > 0 else 0.0


def time_drain(emu: Emulator, endpoint_id: str, total: int, limit: float) -> Drain:
    """Watch ``/health`` until ``total`` jobs completed or ``limit`` seconds after the first
    job left the queue. The clock starts when the queue first shrinks (worker start-up is not
    counted)."""
    with emu.http() as http:

        def health() -> dict[str, Any]:
            response = http.get(f"/v2/{endpoint_id}/health")
            response.raise_for_status()
            return response.json()["jobs"]

        started = None
        deadline = time.monotonic() + 120
        while started is None:
            jobs = health()
            if jobs["inQueue"] < total or jobs["completed"] > 0:
                started = time.monotonic()
            elif time.monotonic() > deadline:
                raise RuntimeError("no worker took a job from the backlog within 120 s")
            else:
                time.sleep(0.002)
        while True:
            jobs = health()
            now = time.monotonic()
            if jobs["completed"] + jobs["failed"] >= total or now - started >= limit:
                if jobs["failed"]:
                    raise RuntimeError(f"{jobs['failed']} backlog jobs failed")
                return Drain(jobs["completed"], total, now - started)
            time.sleep(0.005)


# --- report ----------------------------------------------------------------------------------


def row(label: str, timing: Timing) -> str:
    """One line of the round-trip table."""
    return (
        f"  {label:<38} p50 {timing.p50:8.2f} ms   p99 {timing.p99:8.2f} ms"
        f"   {timing.rate:8.1f} jobs/s   (n={len(timing.seconds)})"
    )


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1500, help="timed /runsync per leg")
    parser.add_argument("--backlog", type=int, default=1000, help="jobs in the backlog")
    parser.add_argument("--concurrency", type=int, default=8, help="worker slots for the drain")
    args = parser.parse_args(argv)
    warmup = 100
    if args.runs + warmup > RUNSYNC_WINDOW_LIMIT:
        parser.error(f"--runs at most {RUNSYNC_WINDOW_LIMIT - warmup} (the seed's rate limit)")

    with tempfile.TemporaryDirectory(prefix="podbook-bench-queue-") as tmp:
        workdir = Path(tmp)
        handler = workdir / "noop_handler.py"
        handler.write_text(NOOP_HANDLER)
        sdk_script = workdir / "sdk_worker.py"
        sdk_script.write_text(SDK_WORKER)
        bare_script = workdir / "bare_worker.py"
        bare_script.write_text(BARE_WORKER)
        noop = f"{handler}:noop"
        print("podbook queue benchmark — one run, no-op handler, loopback, 2 cores shared")
        print(f"  python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")

        with (
            emulator(workdir) as emu,
            sdk_worker(emu, emu.create_endpoint("bench-idle-sdk"), sdk_script, 1, "idle-sdk"),
            rp_test_server(workdir, sdk_script) as rp_url,
        ):
            # 1. /runsync round trips, sequential, the legs in turns (an endpoint each).
            ep_push, ep_http, ep_bare = (emu.create_endpoint(f"bench-{leg}") for leg in LEGS)
            job_times: list[tuple[float, float]] = []
            with (
                podbook_worker(emu, ep_push, noop, 1, "push"),
                podbook_worker(emu, ep_http, noop, 1, "http", {"PODBOOK_WORKER_PUSH": "0"}),
                bare_worker(emu, ep_bare, bare_script),
                emu.http() as http,
                httpx.Client(base_url=rp_url, timeout=60) as rp_http,
            ):
                legs = {
                    "push": runsync_caller(http, f"/v2/{ep_push}/runsync?wait=60000", job_times),
                    "http": runsync_caller(http, f"/v2/{ep_http}/runsync?wait=60000"),
                    "bare": runsync_caller(http, f"/v2/{ep_bare}/runsync?wait=60000"),
                    "rp": runsync_caller(rp_http, "/runsync"),
                }
                timings = measure_interleaved(legs, args.runs, warmup=warmup, budget=120)
                del job_times[:warmup]
                healthz = measure(get_caller(http, "/healthz"), 500, warmup=50, budget=20)

            # 2. A backlog of jobs queued before any worker runs, then drained.
            ep_drain = emu.create_endpoint("bench-drain")
            queue_backlog(emu, ep_drain, args.backlog)
            with podbook_worker(emu, ep_drain, noop, args.concurrency, "drain"):
                drain = time_drain(emu, ep_drain, args.backlog, limit=300)
            load = os.getloadavg()

    push_rt, http_rt, bare_rt, rp_rt = (timings[leg] for leg in ("push", "http", "bare", "rp"))
    report(push_rt, http_rt, bare_rt, rp_rt, healthz, job_times, drain, args, load)
    return 0


def report(
    push_rt: Timing,
    http_rt: Timing,
    bare_rt: Timing,
    rp_rt: Timing,
    healthz: Timing,
    job_times: list[tuple[float, float]],
    drain: Drain,
    args: argparse.Namespace,
    load: tuple[float, float, float],
) -> None:
    """Print the figures, their ratios and the targets' verdicts."""
    print("/runsync round trip, sequential, one keep-alive connection (bare httpx), the legs")
    print("in turns of 50; an unmodified runpod SDK worker idles on another endpoint:")
    print(row("emulator + podbook worker (push)", push_rt))
    print(row("emulator + podbook worker (HTTP only)", http_rt))
    print(row("emulator + bare httpx worker (HTTP floor)", bare_rt))
    print(row("runpod test server (no queue)", rp_rt))
    ratio = push_rt.p50 / rp_rt.p50
    print(
        f"  push vs HTTP only: p50 {http_rt.p50 / push_rt.p50:.2f}x lower, "
        f"{push_rt.rate / http_rt.rate:.2f}x the jobs/s;  vs the HTTP floor: p50 "
        f"{bare_rt.p50 / push_rt.p50:.2f}x lower;  vs the runpod test server: p50 ratio "
        f"{ratio:.2f}, jobs/s ratio {push_rt.rate / rp_rt.rate:.2f}"
    )
    delay_ms = statistics.median(t[0] for t in job_times)
    exec_ms = statistics.median(t[1] for t in job_times)
    print(
        f"  where a push round trip goes (p50): GET /healthz {healthz.p50:.2f} ms (HTTP + "
        f"framework floor); job delayTime {delay_ms:.1f} ms (queued → pushed to the worker), "
        f"executionTime {exec_ms:.1f} ms (pushed → result acknowledged)"
    )
    print(f"  machine load average while measuring: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    print()
    print(f"backlog of {args.backlog:,} /run jobs, drained by the podbook worker:")
    print(
        f"  concurrency {args.concurrency}: {drain.completed:>6,} jobs in {drain.seconds:7.2f} s"
        f"   {drain.rate:8.1f} jobs/s"
    )
    print()
    checks = [
        (
            f"/runsync p50 <= {TARGET_P50_MS:g} ms",
            f"{push_rt.p50:.2f} ms",
            push_rt.p50 <= TARGET_P50_MS,
        ),
        (
            f"/runsync >= {TARGET_JOBS_PER_S:g} jobs/s sequential",
            f"{push_rt.rate:.0f} jobs/s",
            push_rt.rate >= TARGET_JOBS_PER_S,
        ),
        (
            f"p50 <= {TARGET_RATIO:g}x the runpod test server's",
            f"{ratio:.2f}x",
            ratio <= TARGET_RATIO,
        ),
        (
            f"backlog of {args.backlog:,} drains >= {TARGET_DRAIN_PER_S:g} jobs/s "
            f"at concurrency {args.concurrency}",
            f"{drain.rate:.0f} jobs/s",
            drain.rate >= TARGET_DRAIN_PER_S
            and drain.completed >= args.backlog
            and args.backlog >= 1000
            and args.concurrency == 8,
        ),
    ]
    print("targets (issue 12):")
    for what, figure, ok in checks:
        print(f"  {what:<58} {figure:>12}  {verdict(ok)}")


if __name__ == "__main__":
    raise SystemExit(main())
