"""Queue benchmark on loopback: ``/runsync`` round trips and a backlog drain, a no-op handler.

Run: ``.venv/bin/python bench/queue.py`` (about two minutes). One run measures, side by side:

- ``/runsync`` round trip (p50, p99) and jobs/s, sequential, one keep-alive connection:
  through the emulator + a podbook worker (``podbook worker``), through the emulator + an
  unmodified ``runpod`` SDK worker (``runpod.serverless.start``, pointed at the emulator by
  the variables of ``podbook worker-env``), and against the ``runpod`` package's own local
  test server (``--rp_serve_api``: the handler in-process, no queue, no worker protocol);
- a backlog of 1,000 ``/run`` jobs queued while no worker runs, then drained by the podbook
  worker and by the SDK worker at the same concurrency. The SDK worker takes about a second
  per job per slot, so its drain is timed for ``--sdk-seconds`` and its rate extrapolated
  (the report says so).

Every figure comes from this run; the report prints ratios and the targets of issue 3 §5.
The emulator's per-operation rate limits are raised for the run (``--queue-rate-limit``),
since 200 jobs/s is the seed's ``/runsync`` limit itself. The requests are sent with bare
httpx, so the figures are the service's, not the client library's.
"""

from __future__ import annotations

# This file is named like the standard library's ``queue``: drop its folder from the import
# path before anything imports ``queue`` (concurrent.futures, logging, ...).
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402


def _load_common() -> Any:
    """``bench/_common.py`` by file path (this folder is off the import path, see above)."""
    if "_common" not in sys.modules:
        spec = importlib.util.spec_from_file_location("_common", HERE / "_common.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["_common"] = module
        spec.loader.exec_module(module)
    return sys.modules["_common"]


_common = _load_common()
Emulator = _common.Emulator
clean_env, free_port, spawn = _common.clean_env, _common.free_port, _common.spawn
stop_group, wait_until = _common.stop_group, _common.wait_until
podbook_worker = _common.podbook_worker

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"}
# Every queue operation's limit raised far above what one run sends (per 10 s window).
UNLIMITED_QUEUE = [
    arg
    for op in ("run", "runsync", "status", "stream")
    for arg in ("--queue-rate-limit", f"{op}=100000000")
]

TARGET_P50_MS = 5.0  # /runsync p50 through emulator + podbook worker
TARGET_JOBS_PER_S = 200.0  # sequential /runsync through emulator + podbook worker
TARGET_DRAIN_RATIO = 20.0  # backlog drains at least 20x faster than with the SDK worker

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


@dataclass(frozen=True)
class Timing:
    """Per-request latencies of one sequential loop."""

    seconds: list[float]

    @property
    def rate(self) -> float:
        """Requests per second over the whole loop."""
        return len(self.seconds) / sum(self.seconds)

    def percentile(self, fraction: float) -> float:
        """Latency at ``fraction`` (0..1) in ms."""
        return float(_common.percentile_ms(self.seconds, fraction))

    @property
    def p50(self) -> float:
        """Median latency in ms."""
        return statistics.median(self.seconds) * 1000

    @property
    def p99(self) -> float:
        """99th percentile latency in ms."""
        return self.percentile(0.99)


def measure(call: Callable[[], object], count: int, warmup: int, budget: float) -> Timing:
    """``warmup`` untimed calls, then up to ``count`` timed ones within ``budget`` seconds."""
    for _ in range(warmup):
        call()
    clock = time.perf_counter
    seconds: list[float] = []
    deadline = clock() + budget
    while len(seconds) < count and clock() < deadline:
        started = clock()
        call()
        seconds.append(clock() - started)
    return Timing(seconds)


# --- processes -------------------------------------------------------------------------------


@contextmanager
def emulator(workdir: Path, extra: list[str] | None = None) -> Iterator[Emulator]:
    """A real emulator process (see ``bench/_common.py``) with every queue limit raised."""
    with _common.emulator(workdir, [*UNLIMITED_QUEUE, *(extra or [])]) as emu:
        yield emu


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
    from podbook.worker.env import worker_env

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

    def answers() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"rp_serve_api exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            return httpx.get(url + "/openapi.json", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(answers, 60, "the runpod test server")
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


def verdict(ok: bool) -> str:
    """``met`` / ``MISSED``."""
    return "met" if ok else "MISSED"


def row(label: str, timing: Timing) -> str:
    """One line of the round-trip table."""
    return (
        f"  {label:<38} p50 {timing.p50:8.2f} ms   p99 {timing.p99:8.2f} ms"
        f"   {timing.rate:8.1f} jobs/s   (n={len(timing.seconds)})"
    )


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="timed /runsync per podbook leg")
    parser.add_argument("--sdk-runs", type=int, default=60, help="timed /runsync, SDK worker")
    parser.add_argument("--backlog", type=int, default=1000, help="jobs in the backlog")
    parser.add_argument("--concurrency", type=int, default=4, help="worker slots for the drain")
    parser.add_argument(
        "--sdk-seconds", type=float, default=20.0, help="how long the SDK worker's drain is timed"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="podbook-bench-queue-") as tmp:
        workdir = Path(tmp)
        handler = workdir / "noop_handler.py"
        handler.write_text(NOOP_HANDLER)
        sdk_script = workdir / "sdk_worker.py"
        sdk_script.write_text(SDK_WORKER)
        bare_script = workdir / "bare_worker.py"
        bare_script.write_text(BARE_WORKER)
        print("podbook queue benchmark — one run, no-op handler, loopback, 2 cores shared")
        print(f"  python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")

        with emulator(workdir) as emu:
            # 1. /runsync round trips, sequential.
            ep_podbook = emu.create_endpoint("bench-pb")
            job_times: list[tuple[float, float]] = []
            with podbook_worker(emu, ep_podbook, f"{handler}:noop", 1), emu.http() as http:
                call = runsync_caller(http, f"/v2/{ep_podbook}/runsync?wait=60000", job_times)
                podbook_rt = measure(call, args.runs, warmup=100, budget=60)
                del job_times[:100]  # the warm-up's
                # The layers under a round trip: bare HTTP to the emulator, a keyed queue read.
                healthz = measure(get_caller(http, "/healthz"), 500, warmup=50, budget=20)
                health = measure(get_caller(http, f"/v2/{ep_podbook}/health"), 500, 50, 20)

            ep_bare = emu.create_endpoint("bench-bare")
            with bare_worker(emu, ep_bare, bare_script), emu.http() as http:
                call = runsync_caller(http, f"/v2/{ep_bare}/runsync?wait=60000")
                bare_rt = measure(call, args.runs, warmup=100, budget=60)

            ep_sdk = emu.create_endpoint("bench-sdk")
            with sdk_worker(emu, ep_sdk, sdk_script, 1), emu.http() as http:
                call = runsync_caller(http, f"/v2/{ep_sdk}/runsync?wait=120000")
                sdk_rt = measure(call, args.sdk_runs, warmup=3, budget=60)

            # 2. A backlog of jobs queued before any worker runs, then drained.
            ep_drain_pb = emu.create_endpoint("bench-drain-pb")
            queue_backlog(emu, ep_drain_pb, args.backlog)
            with podbook_worker(emu, ep_drain_pb, f"{handler}:noop", args.concurrency, "drain-pb"):
                drain_pb = time_drain(emu, ep_drain_pb, args.backlog, limit=300)

            ep_drain_sdk = emu.create_endpoint("bench-drain-sdk")
            queue_backlog(emu, ep_drain_sdk, args.backlog)
            with sdk_worker(emu, ep_drain_sdk, sdk_script, args.concurrency, "drain-sdk"):
                drain_sdk = time_drain(emu, ep_drain_sdk, args.backlog, limit=args.sdk_seconds)
            with emu.http() as http:
                http.post(f"/v2/{ep_drain_sdk}/purge-queue")

        with rp_test_server(workdir, sdk_script) as url, httpx.Client(timeout=60) as http:
            call = runsync_caller(http, f"{url}/runsync")
            rp_rt = measure(call, args.runs, warmup=50, budget=60)

    print("/runsync round trip, sequential, one keep-alive connection (bare httpx):")
    print(row("emulator + podbook worker", podbook_rt))
    print(row("emulator + bare httpx worker (floor)", bare_rt))
    print(row("emulator + runpod SDK worker", sdk_rt))
    print(row("runpod test server (no queue)", rp_rt))
    print(
        f"  podbook vs SDK worker: p50 {sdk_rt.p50 / podbook_rt.p50:.1f}x lower, "
        f"{podbook_rt.rate / sdk_rt.rate:.1f}x the jobs/s;  "
        f"vs the runpod test server: p50 ratio {podbook_rt.p50 / rp_rt.p50:.2f}, "
        f"jobs/s ratio {podbook_rt.rate / rp_rt.rate:.2f}"
    )
    print(
        f"  target: p50 <= {TARGET_P50_MS:.0f} ms → {podbook_rt.p50:.2f} ms "
        f"{verdict(podbook_rt.p50 <= TARGET_P50_MS)};  >= {TARGET_JOBS_PER_S:.0f} jobs/s → "
        f"{podbook_rt.rate:.0f} {verdict(podbook_rt.rate >= TARGET_JOBS_PER_S)}"
    )
    delay_ms = statistics.median(t[0] for t in job_times)
    exec_ms = statistics.median(t[1] for t in job_times)
    print(
        "  where a podbook round trip goes (p50): "
        f"GET /healthz {healthz.p50:.2f} ms (HTTP + framework floor), "
        f"GET /health {health.p50:.2f} ms (+ key check, rate limit, queue read); "
        f"job delayTime {delay_ms:.1f} ms (queued → taken by the long-polling worker), "
        f"executionTime {exec_ms:.1f} ms (taken → result posted)"
    )
    print(
        f"  layers (p50): emulator + the protocol's floor (a bare take/done loop) "
        f"{bare_rt.p50:.2f} ms = HTTP floor {healthz.p50:.2f} ms + broker and the worker's two "
        f"HTTP calls {bare_rt.p50 - healthz.p50:.2f} ms; the podbook worker runner adds "
        f"{podbook_rt.p50 - bare_rt.p50:+.2f} ms"
    )
    load = os.getloadavg()
    print(f"  machine load average while measuring: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    print()
    print(f"backlog of {args.backlog:,} /run jobs, drained at concurrency {args.concurrency}:")
    print(
        f"  podbook worker        {drain_pb.completed:>6,} jobs in {drain_pb.seconds:7.2f} s"
        f"   {drain_pb.rate:8.1f} jobs/s"
    )
    projected = args.backlog / drain_sdk.rate if drain_sdk.rate else float("inf")
    sdk_note = (
        ""
        if drain_sdk.completed >= args.backlog
        else f"   (timed {args.sdk_seconds:.0f} s; all {args.backlog:,} would take ≈ {projected:.0f} s)"
    )
    print(
        f"  runpod SDK worker     {drain_sdk.completed:>6,} jobs in {drain_sdk.seconds:7.2f} s"
        f"   {drain_sdk.rate:8.1f} jobs/s{sdk_note}"
    )
    ratio = drain_pb.rate / drain_sdk.rate if drain_sdk.rate else float("inf")
    print(
        f"  podbook drains {ratio:.0f}x faster;  target >= {TARGET_DRAIN_RATIO:.0f}x → "
        f"{verdict(ratio >= TARGET_DRAIN_RATIO)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
