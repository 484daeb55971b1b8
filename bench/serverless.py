"""Serverless benchmark: endpoints whose workers the emulator starts itself (a start command),
a ``podbook worker`` handler beside an unmodified ``runpod`` SDK handler file.

Run: ``.venv/bin/python bench/serverless.py`` (about three minutes). It starts one emulator on
a free loopback port with a temporary home (simulated pods: only the serverless workers run)
and creates queue endpoints whose start command (``args``) is either ``<python> -m podbook
worker handler.py`` or ``<python> handler.py`` (``runpod.serverless.start``); the emulator
starts, scales and stops their workers. The handler records ``time.time()`` on entry, the
start of its process (``/proc/self/stat``) and the moment its file began to run, and returns
them, so every figure is "submitted -> handler entered", measured on one clock:

- **cold start**: ``--cold`` jobs per worker kind (``/runsync``, the kinds in turns), each on
  an endpoint scaled to zero (``workers.min`` 0, ``max`` 1, ``idleTimeout`` 1 s; the next job
  is sent once ``/health`` counts no worker and no worker process is left: the emulator
  starts a worker through ``/bin/sh -c``, whose exit can come before its worker's), p50 and
  p90; beside it the emulator's own logged cold start (``worker WID ready X s after its
  start (cold start)``: from the worker's start to its first call), the job's
  ``delayTime``, and where the time went after the submission: the worker's process started
  (the autoscaler's reaction), its handler file began to run (for the podbook worker after
  podbook's imports, for the SDK file before ``import runpod``), the handler entered;
- **warm**: on endpoints that keep one worker (``workers.min`` 1), a first job per kind not
  counted, then ``--warm`` jobs per kind in turns, each sent 1.5 s after the kind's previous
  one ended (the worker idle, waiting for its next job), and half as many back to back (each
  sent as the previous one ended), p50 and p90. Back to back the SDK worker's next job
  waits: with its default concurrency of 1 it asks for the next job only after sleeping one
  second once it took one (``JobScaler.get_jobs``), here as on the service;
- **drain**: ``--jobs`` jobs of a trivial handler (podbook worker) with ``workers.max`` 1, 2
  and 3, ``--rounds`` times each, the endpoints in turns so that each meets the same load.
  Their workers are started and idle first (``min`` = ``max``: the figure is the drain, not
  the cold start or the scaling rule); each worker holds a gate job while the backlog is
  queued with ``/run``; the gate opens and the figure is the time from then to the last
  job's handler entry: jobs/s (the median round, and the range), the ratio to ``max`` 1, the
  jobs each worker ran, and the CPU (in cores) the emulator, its workers, this script
  (``/health`` polls) and every other process of the machine used meanwhile. Beside them,
  in the same rounds, the comparison that shows where the drain stops growing: the backlog
  split between two emulators with one worker each, drained at once, against ``max`` 2 on
  one emulator. The SDK worker is left out of the drain: its one-second sleep between jobs
  (above) makes it about one job a second per worker.

The queue's per-endpoint rate limits are raised (``--queue-rate-limit``): the figures are
the workers' and the broker's, not the seed's limits.

Targets (issue 20 §4), printed met or MISSED beside the figures: the podbook worker's cold
start p50 <= 1.0 s; the drain grows with workers: each median above the one of a worker
fewer, and the slowest round of ``max`` 3 above the fastest of ``max`` 1. Printed beside
it, no verdict: the speed-up the cores would allow as this machine shows CPU (min(N, the
cores the other processes left / the cores ``max`` 1 used)), and the split drain's ratio.
The load average is printed at the start and the end: the machine is shared.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
from _common import Emulator, emulator, percentile_ms, queue_limits, verdict, wait_until

TARGET_COLD_P50_S = 1.0
QUEUE_LIMITS = queue_limits(("run", "runsync", "status"), 1_000_000, 1000)
IDLE_GAP = 1.5  # seconds a warm worker waits between two jobs (the SDK sleeps 1 s after one)
DRAIN_WORKERS = (1, 2, 3)
KINDS = {"podbook": "podbook worker", "sdk": "runpod SDK"}
HANDLER_FILES = {"podbook": "podbook_handler.py", "sdk": "sdk_handler.py"}

HANDLER = '''\
"""Records when its process started, when this file began to run and when a job entered."""
import time

FILE_RUN = time.time()

import os


def _process_start() -> float:
    """This process's start (epoch seconds, 10 ms resolution) from /proc/self/stat."""
    with open("/proc/self/stat") as stat:
        ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
    age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    return time.time() - age


PROCESS = _process_start()
JOBS = 0


def handler(job):
    entered = time.time()
    global JOBS
    JOBS += 1
    gate = job["input"].get("gate")
    while gate and not os.path.exists(gate):  # hold the worker until the gate opens
        time.sleep(0.001)
    return {"entered": entered, "file": FILE_RUN, "process": PROCESS, "jobs": JOBS}
'''
SDK_TAIL = '\nimport runpod\n\nrunpod.serverless.start({"handler": handler})\n'
READY = re.compile(r"worker (\S+) ready ([0-9.]+) s after its start \(cold start\)")


@dataclass
class Sample:
    """One job: when it was submitted and what its handler recorded (epoch seconds)."""

    submitted: float
    entered: float
    file_run: float
    process: float
    jobs: int
    worker: str
    delay_ms: int

    @property
    def latency(self) -> float:
        """Submitted -> handler entered, seconds."""
        return self.entered - self.submitted


@dataclass
class Drain:
    """One drain: its workers, duration, jobs per worker and CPU use (cores)."""

    workers: int
    seconds: float
    jobs: int
    per_worker: list[int]
    cpu: dict[str, float]
    rates: tuple[float, ...] = ()
    """Of a summary (:func:`median_drain`): the jobs/s of each round."""

    @property
    def rate(self) -> float:
        """Jobs a second."""
        return self.jobs / self.seconds


# --- endpoints and jobs ---------------------------------------------------------------------


def commands(root: Path) -> dict[str, str]:
    """The start command of each worker kind (its handler file written under ``root``)."""
    podbook, sdk = root / HANDLER_FILES["podbook"], root / HANDLER_FILES["sdk"]
    podbook.write_text(HANDLER)
    sdk.write_text(HANDLER + SDK_TAIL)
    return {
        "podbook": f"{sys.executable} -m podbook worker {podbook}",
        "sdk": f"{sys.executable} {sdk}",
    }


def create_endpoint(http: httpx.Client, name: str, args: str, **workers: int) -> str:
    """A queue endpoint with the start command ``args``; its id."""
    body = {"name": name, "args": args, "workers": workers}
    created = http.post("/v2/serverless", json=body)
    created.raise_for_status()
    return str(created.json()["id"])


def health(http: httpx.Client, endpoint_id: str) -> dict[str, Any]:
    """The endpoint's ``/health`` body."""
    answer = http.get(f"/v2/{endpoint_id}/health")
    answer.raise_for_status()
    return dict(answer.json())


def finished(http: httpx.Client, endpoint_id: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The job's terminal status (``answer`` itself when ``/runsync`` already has it)."""
    while answer["status"] in ("IN_QUEUE", "IN_PROGRESS"):
        time.sleep(0.05)
        answer = http.get(f"/v2/{endpoint_id}/status/{answer['id']}").json()
    if answer["status"] != "COMPLETED":
        raise RuntimeError(f"job {answer.get('id')} ended {answer['status']}: {answer}")
    return answer


def sample_of(submitted: float, done: dict[str, Any]) -> Sample:
    """A :class:`Sample` from a completed job's status."""
    out = done["output"]
    return Sample(
        submitted=submitted,
        entered=out["entered"],
        file_run=out["file"],
        process=out["process"],
        jobs=out["jobs"],
        worker=str(done.get("workerId")),
        delay_ms=int(done["delayTime"]),
    )


def one_job(http: httpx.Client, endpoint_id: str) -> Sample:
    """Submit one job (``/runsync``) and wait for its result."""
    submitted = time.time()
    answer = http.post(f"/v2/{endpoint_id}/runsync", json={"input": {}})
    answer.raise_for_status()
    return sample_of(submitted, finished(http, endpoint_id, answer.json()))


def worker_processes(root: Path) -> list[psutil.Process]:
    """The live processes of this run's workers: those whose command line names a handler
    file under ``root`` (the emulator starts each through ``/bin/sh -c``, which may exit
    before the worker it started; a multiprocessing child of the SDK has its parent's
    command line)."""
    handlers = {str(root / name) for name in HANDLER_FILES.values()}
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        info = process.info
        if info["status"] != psutil.STATUS_ZOMBIE and handlers & set(info["cmdline"] or ()):
            found.append(process)
    return found


def scaled_to_zero(http: httpx.Client, endpoint_ids: list[str], root: Path) -> bool:
    """No worker of the endpoints counted by ``/health`` and no worker process left."""
    for endpoint_id in endpoint_ids:
        workers = health(http, endpoint_id)["workers"]
        if workers["idle"] + workers["running"] + workers["initializing"]:
            return False
    return not worker_processes(root)


def logged_cold_starts(emu: Emulator) -> dict[str, float]:
    """The cold starts the emulator logged, seconds by worker id."""
    text = (emu.workdir / "emulator.log").read_text(errors="replace")
    return {worker: float(seconds) for worker, seconds in READY.findall(text)}


# --- the measurements -----------------------------------------------------------------------


def cold_starts(
    emu: Emulator, http: httpx.Client, cmds: dict[str, str], count: int, root: Path
) -> dict[str, list[Sample]]:
    """``count`` cold starts per kind, in turns, each once no worker (process) is left."""
    ids = {
        kind: create_endpoint(http, f"bench-cold-{kind}", cmd, min=0, max=1, idleTimeout=1)
        for kind, cmd in cmds.items()
    }
    samples: dict[str, list[Sample]] = {kind: [] for kind in cmds}
    try:
        for _ in range(count):
            for kind, endpoint_id in ids.items():
                wait_until(
                    lambda: scaled_to_zero(http, list(ids.values()), root), 60, "scale to zero"
                )
                sample = one_job(http, endpoint_id)
                if sample.jobs != 1:
                    raise RuntimeError(f"{kind}: job ran on a worker that had run jobs before")
                samples[kind].append(sample)
        workers = {s.worker for runs in samples.values() for s in runs}
        with contextlib.suppress(RuntimeError):  # logged at the autoscaler's next tick
            wait_until(lambda: workers <= logged_cold_starts(emu).keys(), 5, "logged")
    finally:
        for endpoint_id in ids.values():
            http.delete(f"/v2/serverless/{endpoint_id}")
    return samples


def warm_jobs(
    http: httpx.Client, cmds: dict[str, str], count: int, root: Path
) -> tuple[dict[str, list[Sample]], dict[str, list[Sample]]]:
    """On endpoints that keep one worker (``workers.min`` 1), per kind, in turns: ``count``
    jobs each sent ``IDLE_GAP`` s after the kind's previous one ended (the worker idle, waiting
    for a job), and ``count // 2`` (at least 3) sent back to back."""
    wait_until(lambda: not worker_processes(root), 60, "the earlier workers to end")
    ids = {
        kind: create_endpoint(http, f"bench-warm-{kind}", cmd, min=1, max=1, idleTimeout=60)
        for kind, cmd in cmds.items()
    }
    idle: dict[str, list[Sample]] = {kind: [] for kind in cmds}
    back_to_back: dict[str, list[Sample]] = {kind: [] for kind in cmds}
    try:
        for endpoint_id in ids.values():
            wait_until(
                lambda endpoint_id=endpoint_id: health(http, endpoint_id)["workers"]["idle"] == 1,
                60,
                "a warm worker",
            )
        ended = dict.fromkeys(cmds, 0.0)
        for kind, endpoint_id in ids.items():
            one_job(http, endpoint_id)  # the worker's first job is not counted
            ended[kind] = time.monotonic()
        for _ in range(count):
            for kind, endpoint_id in ids.items():
                time.sleep(max(0.0, ended[kind] + IDLE_GAP - time.monotonic()))
                idle[kind].append(one_job(http, endpoint_id))
                ended[kind] = time.monotonic()
        for kind, endpoint_id in ids.items():
            back_to_back[kind] = [one_job(http, endpoint_id) for _ in range(max(3, count // 2))]
    finally:
        for endpoint_id in ids.values():
            http.delete(f"/v2/serverless/{endpoint_id}")
    return idle, back_to_back


def cpu_seconds(emus: list[Emulator], root: Path) -> dict[str, float]:
    """CPU seconds used so far by the emulators, their workers, this process and the
    machine."""

    def used(process: psutil.Process) -> float:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            return 0.0
        return float(times.user + times.system)

    machine = psutil.cpu_times()  # on Linux, guest time is inside user: not added again
    busy = ("user", "nice", "system", "irq", "softirq", "steal")
    return {
        "emulator": sum(used(psutil.Process(emu.proc.pid)) for emu in emus),
        "workers": sum(used(p) for p in worker_processes(root)),
        "bench": used(psutil.Process()),
        "machine": sum(getattr(machine, name, 0.0) for name in busy),
    }


def cores_used(before: dict[str, float], after: dict[str, float], wall: float) -> dict[str, float]:
    """Cores each part used between two :func:`cpu_seconds` (``others``: the rest of the
    machine)."""
    cores = {part: (after[part] - before[part]) / wall for part in before}
    ours = cores["emulator"] + cores["workers"] + cores["bench"]
    cores["others"] = max(0.0, cores.pop("machine") - ours)
    return cores


@dataclass
class Place:
    """An endpoint to drain: its emulator, a client of it, its id and its workers."""

    emu: Emulator
    http: httpx.Client
    endpoint_id: str
    workers: int


def drain_places(
    emu: Emulator, http: httpx.Client, emu2: Emulator, http2: httpx.Client, cmd: str, root: Path
) -> tuple[dict[int, Place], list[Place]]:
    """An endpoint per number of workers on the first emulator (``min`` = ``max``: the figure
    is the drain, not the cold start or the scaling rule); for the split drain, its one-worker
    endpoint and one of one worker on the second emulator. Created once the earlier workers
    are gone."""
    wait_until(lambda: not worker_processes(root), 60, "the earlier workers to end")
    places = {
        n: Place(
            emu,
            http,
            create_endpoint(http, f"bench-drain-{n}", cmd, min=n, max=n, idleTimeout=600),
            n,
        )
        for n in DRAIN_WORKERS
    }
    second = create_endpoint(http2, "bench-drain-split", cmd, min=1, max=1, idleTimeout=600)
    return places, [places[1], Place(emu2, http2, second, 1)]


def drains(
    places: dict[int, Place], split: list[Place], jobs: int, rounds: int, root: Path
) -> dict[str, list[Drain]]:
    """``rounds`` drains of ``jobs`` jobs per place (the places in turns, so each meets the
    same load), and as many of the two ``split`` places at once (``jobs`` / 2 each)."""
    runs: dict[str, list[Drain]] = {str(n): [] for n in places} | {"split": []}
    for place in [*places.values(), *split]:
        wait_until(
            lambda place=place: (
                health(place.http, place.endpoint_id)["workers"]["idle"] == place.workers
            ),
            90,
            f"{place.workers} idle workers",
        )
    for round_ in range(rounds):
        for n, place in places.items():
            runs[str(n)].append(drain([place], jobs, root / f"gate-{n}-{round_}"))
        runs["split"].append(drain(split, jobs, root / f"gate-split-{round_}"))
    return runs


def drain(places: list[Place], jobs: int, gate: Path) -> Drain:
    """``jobs`` queued (shared out between ``places``) behind their idle workers, each
    holding a gate job (it waits for the file ``gate``); the time from opening the gate to
    the last job's handler entry."""
    completed = [health(p.http, p.endpoint_id)["jobs"]["completed"] for p in places]
    for place in places:
        for _ in range(place.workers):
            held = place.http.post(
                f"/v2/{place.endpoint_id}/run", json={"input": {"gate": str(gate)}}
            )
            held.raise_for_status()
    for place in places:
        wait_until(
            lambda place=place: (
                health(place.http, place.endpoint_id)["workers"]["running"] == place.workers
            ),
            30,
            "every worker holding a gate job",
        )
    share = [jobs // len(places) + (i < jobs % len(places)) for i in range(len(places))]
    ids: list[list[str]] = []
    for place, count in zip(places, share, strict=True):
        ids.append([])
        for index in range(count):
            queued = place.http.post(f"/v2/{place.endpoint_id}/run", json={"input": {"i": index}})
            queued.raise_for_status()
            ids[-1].append(queued.json()["id"])
    root = gate.parent
    emus = [place.emu for place in places]
    before = cpu_seconds(emus, root)
    opened = time.time()
    gate.touch()
    for place, done_before, count in zip(places, completed, share, strict=True):
        wait_until(
            lambda place=place, target=done_before + place.workers + count: (
                health(place.http, place.endpoint_id)["jobs"]["completed"] >= target
            ),
            300,
            f"{count} jobs drained",
        )
    cpu = cores_used(before, cpu_seconds(emus, root), time.time() - opened)
    samples = [
        sample_of(
            opened,
            finished(
                place.http,
                place.endpoint_id,
                place.http.get(f"/v2/{place.endpoint_id}/status/{job}").json(),
            ),
        )
        for place, place_ids in zip(places, ids, strict=True)
        for job in place_ids
    ]
    seconds = max(s.entered for s in samples) - opened
    per_worker = sorted(Counter(s.worker for s in samples).values(), reverse=True)
    return Drain(sum(p.workers for p in places), seconds, jobs, per_worker, cpu)


def median_drain(runs: list[Drain]) -> Drain:
    """One drain for the rounds: the median duration, the jobs per worker summed, the cores
    used averaged."""
    per_worker = [0] * max(len(run.per_worker) for run in runs)
    for run in runs:
        for index, count in enumerate(run.per_worker):
            per_worker[index] += count
    cpu = {part: statistics.mean(run.cpu[part] for run in runs) for part in runs[0].cpu}
    seconds = statistics.median(run.seconds for run in runs)
    rates = tuple(run.rate for run in runs)
    return Drain(runs[0].workers, seconds, runs[0].jobs, per_worker, cpu, rates)


# --- the report -----------------------------------------------------------------------------


def p50(seconds: list[float]) -> float:
    """The median, seconds."""
    return percentile_ms(seconds, 0.5) / 1000


def p90(seconds: list[float]) -> float:
    """The 90th percentile, seconds."""
    return percentile_ms(seconds, 0.9) / 1000


def core_ceiling(base: Drain, run: Drain, cores: int) -> float:
    """The speed-up over ``base`` the machine's cores would allow ``run``, as this machine
    shows CPU: min(its workers / base's, the cores the other processes left / the cores
    ``base`` used)."""
    ours = base.cpu["emulator"] + base.cpu["workers"] + base.cpu["bench"]
    free = max(0.0, cores - run.cpu["others"])
    return min(run.workers / base.workers, free / ours if ours else float("inf"))


def shown(value: float) -> str:
    """Three significant digits, no exponent."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def print_latencies(title: str, samples: dict[str, list[Sample]], emu: Emulator | None) -> None:
    """p50 (p90) of submitted -> handler entered per kind; for cold starts (``emu`` given:
    its log) the emulator's logged cold start and where the time went."""
    count = len(next(iter(samples.values())))
    print(f"submitted -> handler entered, {title}, p50 (p90) over {count} jobs per kind:")
    logged = logged_cold_starts(emu) if emu is not None else {}
    sdk = p50([s.latency for s in samples["sdk"]])
    unit, scale = ("s", 1.0) if emu is not None else ("ms", 1000.0)
    for kind, runs in samples.items():
        latency = [s.latency for s in runs]
        median, high = shown(p50(latency) * scale), shown(p90(latency) * scale)
        line = f"  {KINDS[kind]:15s} {median} {unit} ({high} {unit})"
        if kind != "sdk":
            line += f", {shown(p50(latency) / sdk)}x the SDK's"
        if emu is None:
            print(line)
            continue
        ready = [logged[s.worker] for s in runs if s.worker in logged]
        print(
            f"{line}; the emulator's logged cold start {p50(ready):.2f} s ({len(ready)} of"
            f" {len(runs)} logged); delayTime {p50([s.delay_ms / 1000 for s in runs]):.2f} s"
        )
        print(
            f"  {'':15s} after the submission: process started"
            f" +{p50([s.process - s.submitted for s in runs]):.2f} s, handler file run"
            f" +{p50([s.file_run - s.submitted for s in runs]):.2f} s, handler entered"
            f" +{median} s"
        )


def drain_line(label: str, run: Drain, base: Drain, cores: int) -> str:
    """One drain's figures (the median of its rounds)."""
    cpu = run.cpu
    idle = max(0.0, cores - sum(cpu.values()))
    return (
        f"  {label}: {run.seconds:.3f} s, {run.rate:,.0f} jobs/s"
        f" ({min(run.rates):,.0f}-{max(run.rates):,.0f}),"
        f" {run.rate / base.rate:.2f}x max {base.workers}; jobs per worker"
        f" {'/'.join(map(str, run.per_worker))}; cores used: emulator {cpu['emulator']:.2f},"
        f" workers {cpu['workers']:.2f}, bench {cpu['bench']:.2f},"
        f" other processes {cpu['others']:.2f}, idle {idle:.2f}"
    )


def print_drains(runs: dict[str, list[Drain]], cores: int) -> dict[str, Drain]:
    """The drains side by side (the median of the rounds); returns them by name."""
    drained = {name: median_drain(rounds) for name, rounds in runs.items()}
    base = drained[str(DRAIN_WORKERS[0])]
    print(
        f"drain of {base.jobs} queued jobs, trivial handler, podbook worker (the workers started"
        f" and idle first, min = max), median of {len(base.rates)} rounds (range):"
    )
    for n in DRAIN_WORKERS:
        print(drain_line(f"max {n}", drained[str(n)], base, cores))
    print(
        drain_line("max 1 on each of two emulators, at once", drained["split"], base, cores)
        + f"; {drained['split'].rate / drained['2'].rate:.2f}x max 2 on one emulator"
    )
    return drained


def grows(drained: dict[str, Drain]) -> bool:
    """Whether the drain grows with workers: each median above the one of a worker fewer,
    and the slowest round of the most workers above the fastest of one worker (beyond the
    rounds' noise)."""
    runs = [drained[str(n)] for n in DRAIN_WORKERS]
    rising = all(more.rate > fewer.rate for fewer, more in itertools.pairwise(runs))
    return rising and min(runs[-1].rates) > max(runs[0].rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=500, help="jobs per drain (default 500)")
    parser.add_argument("--cold", type=int, default=7, help="cold starts per kind (default 7)")
    parser.add_argument("--warm", type=int, default=20, help="warm jobs per kind (default 20)")
    parser.add_argument(
        "--rounds", type=int, default=5, help="drains per number of workers (default 5)"
    )
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(
        f"serverless bench: load average {os.getloadavg()[0]:.2f} at start, {cores} cores;"
        f" {args.cold} cold starts and {args.warm} warm jobs per worker kind,"
        f" {args.rounds} drains of {args.jobs} jobs per number of workers"
    )
    with tempfile.TemporaryDirectory(prefix="podbook-bench-serverless-") as tmp:
        root = Path(tmp)
        cmds = commands(root)
        with contextlib.ExitStack() as stack:
            emu = stack.enter_context(emulator(root, QUEUE_LIMITS))
            http = stack.enter_context(emu.http())
            (root / "second").mkdir()
            emu2 = stack.enter_context(emulator(root / "second", QUEUE_LIMITS))
            http2 = stack.enter_context(emu2.http())
            cold = cold_starts(emu, http, cmds, args.cold, root)
            warm, back_to_back = warm_jobs(http, cmds, args.warm, root)
            places, split = drain_places(emu, http, emu2, http2, cmds["podbook"], root)
            try:
                drained = drains(places, split, args.jobs, args.rounds, root)
            finally:
                for place in [*places.values(), split[1]]:
                    place.http.delete(f"/v2/serverless/{place.endpoint_id}")
            print()
            print_latencies("cold (the endpoint scaled to zero before each)", cold, emu)
            print_latencies(f"warm (the worker idle {IDLE_GAP} s since its last job)", warm, None)
            print_latencies(
                "warm, back to back (each job sent as the last one ended)", back_to_back, None
            )
            print()
            summary = print_drains(drained, cores)
    cold_p50 = p50([s.latency for s in cold["podbook"]])
    print()
    print("targets:")
    print(
        f"  podbook worker cold start p50 {cold_p50:.2f} s"
        f" (<= {TARGET_COLD_P50_S:.1f} s: {verdict(cold_p50 <= TARGET_COLD_P50_S)})"
    )
    base = summary[str(DRAIN_WORKERS[0])]
    ratios = ", ".join(
        f"max {n} {summary[str(n)].rate / base.rate:.2f}x"
        f" (the cores as shown would allow {core_ceiling(base, summary[str(n)], cores):.2f}x)"
        for n in DRAIN_WORKERS[1:]
    )
    print(
        f"  drain grows with workers: {ratios} ({verdict(grows(summary))}); where it stops:"
        f" two emulators with one worker each drain"
        f" {summary['split'].rate / summary['2'].rate:.2f}x as fast as one with two"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
