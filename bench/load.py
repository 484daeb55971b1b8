"""Load test on loopback: 200 clients at the seed's queue limits, 50 live panels in a kernel.

Run: ``.venv/bin/python bench/load.py`` (60 s of load, about 1.5 minutes in all;
``--duration``/``--clients`` shorten it). One run, against a real emulator process with its
default (the seed's) queue rate limits and real ``podbook worker`` processes whose handler
records every execution in a file:

- half the clients submit ``/run`` jobs, paced together at ``--overdrive`` times the seed's
  ``/run`` rate (1,000 per 10 s), the other half ``/runsync`` jobs, paced at ``--overdrive``
  times its rate (2,000 per 10 s) or as fast as the workers answer; every client honours
  ``Retry-After``;
- a real IPython kernel (``jupyter_client``, its own process) with ``%load_ext podbook``:
  the time to run a trivial cell, first with no panel, then with 50 live pod panels
  registered with the refresher, under the same load.

It prints the figures side by side and checks the promises of issue 5 §3, exiting 1 when one
is broken: every accepted job ran exactly once (the handler's record) and completed (a
``/runsync`` in its answer; ``/run`` jobs by the endpoint's health after the drain and a
sample read back by ``/status``), no 5xx and no dropped connection, every 429 carries
``Retry-After`` and came only beyond the documented limits (the rate window it fell in already
held the limit's worth of accepted requests, both processes reading the same monotonic clock;
or the clients had the limit's worth in flight), and the panels stayed connected and
refreshing. The emulator's resident memory (after warm-up, during, at the end), the CPU each
process spent and the cell latency ratio are figures, not pass/fail. The emulator holds every
result for its retention (a ``/run`` one 30 min), so within 60 s its memory grows with the
results; ``--retention-scale 0.02`` (36 s) shows the plateau once results expire as fast as
they come.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import ssl
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import httpx
import psutil

# The seed's queue limits (interface.md, "Queue endpoint rate limits"): per 10 s, at once.
SEED_LIMITS = {"run": (1000, 200), "runsync": (2000, 400)}
WINDOW_SECONDS = 10.0
PANELS = 50
SAMPLE_READS = 200  # /run results read back after the drain
RUN_RETENTION_S = 1800.0  # the seed: a /run result is kept 30 min
GPU = "NVIDIA GeForce RTX 4090"

RECORD_HANDLER = '''
"""Returns its input; appends the job's id to {log!r} first (one line per execution)."""


def record(job):
    with open({log!r}, "a", encoding="utf-8") as out:
        out.write(job["id"] + "\\n")
    return job["input"]
'''


# --- the load --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One request: operation, monotonic send/receive times, status (0: transport error)."""

    op: str
    sent: float
    received: float
    status: int
    retry_after: str | None = None
    reason: str = ""
    job_id: str | None = None
    finished: bool = False
    n: int = 0


@dataclass
class LoadState:
    """What the clients share: outcomes, requests in flight (now and at most) per operation."""

    outcomes: list[Outcome] = field(default_factory=list)
    in_flight: Counter[str] = field(default_factory=Counter)
    peak: Counter[str] = field(default_factory=Counter)
    wrong_output: int = 0


def outcome_of(op: str, sent: float, response: httpx.Response, n: int, state: LoadState) -> Outcome:
    """Classify a response; a /runsync that finished must carry its input back."""
    received = time.monotonic()
    status = response.status_code
    if status == 429:
        text = response.text
        reason = "concurrent" if "concurrent" in text else "rate"
        return Outcome(op, sent, received, status, response.headers.get("Retry-After"), reason)
    if not 200 <= status < 300:
        return Outcome(op, sent, received, status, reason=response.text[:200])
    body = response.json()
    finished = body.get("status") == "COMPLETED"
    if finished and body.get("output") != {"n": n}:
        state.wrong_output += 1
    return Outcome(op, sent, received, status, job_id=body.get("id"), finished=finished, n=n)


async def client(
    url: str, key: str, path: str, op: str, interval: float, start: float, stop: float,
    state: LoadState, first: int, tls: ssl.SSLContext,
) -> None:  # fmt: skip
    """One client: a request every ``interval`` s (or as fast as answered) until ``stop``.
    ``tls``: one context for all (plain HTTP needs none, but httpx builds one per client,
    about 30 ms of CPU each)."""
    headers = {"Authorization": f"Bearer {key}"}
    n = first
    next_at = start
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=180, verify=tls) as http:
        while next_at < stop:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            n += 1
            sent = time.monotonic()
            state.in_flight[op] += 1
            state.peak[op] = max(state.peak[op], state.in_flight[op])
            try:
                response = await http.post(path, json={"input": {"n": n}})
                outcome = outcome_of(op, sent, response, n, state)
            except httpx.HTTPError as err:
                outcome = Outcome(op, sent, time.monotonic(), 0, reason=type(err).__name__)
            finally:
                state.in_flight[op] -= 1
            state.outcomes.append(outcome)
            next_at = max(next_at + interval, outcome.received)
            if outcome.status == 429 and outcome.retry_after is not None:
                next_at = max(next_at, outcome.received + float(outcome.retry_after))


async def run_load(
    url: str, key: str, endpoint_id: str, clients: int, duration: float, overdrive: float,
    state: LoadState,
) -> LoadState:  # fmt: skip
    """``clients`` clients (half /run, half /runsync) for ``duration`` seconds."""
    start = time.monotonic() + 0.5
    stop = start + duration
    per_op = {"run": clients - clients // 2, "runsync": clients // 2}
    tls = ssl.create_default_context()
    tasks = []
    for op, count in per_op.items():
        rate_per_s = overdrive * SEED_LIMITS[op][0] / WINDOW_SECONDS
        interval = count / rate_per_s
        for i in range(count):
            offset = start + interval * i / max(count, 1)  # spread the clients' first sends
            path = f"/v2/{endpoint_id}/{op}"
            tasks.append(client(url, key, path, op, interval, offset, stop, state, i * 10**6, tls))
    await asyncio.gather(*tasks)
    return state


# --- the checks ------------------------------------------------------------------------------


def window_of(moment: float) -> int:
    """The emulator's 10-s rate window holding ``moment`` (its windows start at multiples)."""
    return math.floor(moment / WINDOW_SECONDS)


@dataclass
class OpReport:
    """The figures and broken promises of one operation."""

    op: str
    sent: int = 0
    accepted: int = 0
    rate_429: int = 0
    concurrent_429: int = 0
    server_errors: int = 0
    transport_errors: int = 0
    other: Counter[int] = field(default_factory=Counter)
    max_window: int = 0
    problems: list[str] = field(default_factory=list)


def check_op(state: LoadState, op: str) -> OpReport:
    """Count one operation's outcomes; every 429 must come beyond a documented limit."""
    rate, concurrent = SEED_LIMITS[op]
    mine = [o for o in state.outcomes if o.op == op]
    report = OpReport(op, sent=len(mine))
    could_be_in: Counter[int] = Counter()  # accepted requests the server may have counted in W
    surely_in: Counter[int] = Counter()
    for o in mine:
        if 200 <= o.status < 300:
            report.accepted += 1
            first, last = window_of(o.sent), window_of(o.received)
            for w in range(first, last + 1):
                could_be_in[w] += 1
            if first == last:
                surely_in[first] += 1
    report.max_window = max(surely_in.values(), default=0)
    for o in mine:
        if o.status == 0:
            report.transport_errors += 1
            report.problems.append(f"/{op}: connection failed ({o.reason})")
        elif o.status >= 500:
            report.server_errors += 1
            report.problems.append(f"/{op}: {o.status} {o.reason}")
        elif o.status == 429:
            if not (o.retry_after or "").strip().isdigit():
                report.problems.append(f"/{op}: 429 without a Retry-After in seconds")
            if o.reason == "concurrent":
                report.concurrent_429 += 1
                if state.peak[op] < concurrent:
                    report.problems.append(
                        f"/{op}: 429 'too many at once' with at most {state.peak[op]} in flight "
                        f"(limit {concurrent})"
                    )
                continue
            report.rate_429 += 1
            windows = range(window_of(o.sent), window_of(o.received) + 1)
            if max(could_be_in[w] for w in windows) < rate:
                report.problems.append(
                    f"/{op}: 429 in a window with at most {max(could_be_in[w] for w in windows)}"
                    f" accepted requests (limit {rate} per 10 s)"
                )
        elif not 200 <= o.status < 300:
            report.other[o.status] += 1
            report.problems.append(f"/{op}: unexpected {o.status} {o.reason}")
    return report


def check_executions(state: LoadState, log: Path) -> tuple[int, list[str]]:
    """Every accepted job ran exactly once; nothing ran that was not accepted."""
    accepted = Counter(o.job_id for o in state.outcomes if o.job_id)
    ran = Counter(log.read_text().split()) if log.exists() else Counter()
    problems = []
    lost = [j for j in accepted if ran[j] == 0]
    twice = [j for j, count in ran.items() if count > 1]
    strangers = [j for j in ran if j not in accepted]
    if lost:
        problems.append(f"{len(lost)} accepted jobs never ran (e.g. {lost[0]})")
    if twice:
        problems.append(f"{len(twice)} jobs ran more than once (e.g. {twice[0]})")
    if strangers:
        problems.append(f"{len(strangers)} jobs ran that no client saw accepted")
    if state.wrong_output:
        problems.append(f"{state.wrong_output} /runsync results did not carry their input back")
    return sum(ran.values()), problems


def check_results(
    emu: Any, endpoint_id: str, state: LoadState, jobs: dict[str, int], scale: float
) -> list[str]:
    """After the drain: nothing queued, running or failed; the /run jobs still within their
    retention (30 min x ``scale``) are counted completed, and a sample of them reads back
    COMPLETED with its input as output. (A /runsync result is kept 1 min x ``scale``: those
    were checked in their answers.) Adds ``readBack`` (results read) to ``jobs``."""
    problems = []
    if jobs["failed"] or jobs["inQueue"] or jobs["inProgress"]:
        problems.append(f"after the drain the endpoint's health reads {jobs}")
    # A job finishes after it was accepted, so one accepted since ``kept_since`` is still kept.
    kept_since = time.monotonic() - RUN_RETENTION_S * scale + 5.0
    kept = [o for o in state.outcomes if o.job_id and not o.finished and o.received > kept_since]
    if jobs["completed"] < len(kept):
        problems.append(f"health counts {jobs['completed']} completed of {len(kept)} /run jobs")
    sample = kept[:: max(1, len(kept) // SAMPLE_READS)]
    with emu.http() as http:
        for o in sample:
            for _ in range(20):  # a 429 here would only mean reading too fast: wait, retry
                response = http.get(f"/v2/{endpoint_id}/status/{o.job_id}")
                if response.status_code != 429:
                    break
                time.sleep(float(response.headers.get("Retry-After", "1")))
            body = response.json() if response.status_code == 200 else {}
            if body.get("status") != "COMPLETED" or body.get("output") != {"n": o.n}:
                problems.append(f"job {o.job_id} reads {response.status_code} {str(body)[:120]}")
    jobs["readBack"] = len(sample)
    return problems


def drain(emu: Any, endpoint_id: str, timeout: float) -> dict[str, int]:
    """Wait until the endpoint has nothing queued or running; its job counts."""
    with emu.http() as http:
        deadline = time.monotonic() + timeout
        while True:
            jobs = http.get(f"/v2/{endpoint_id}/health").json()["jobs"]
            if jobs["inQueue"] == 0 and jobs["inProgress"] == 0 or time.monotonic() > deadline:
                return jobs
            time.sleep(0.2)


# --- the kernel probe (its own process: ``load.py --probe``) ---------------------------------

SHOW_PANELS = """
from IPython.display import display
from podbook.notebook.pods.views import pod_panel
_pb = get_ipython().magics_manager.registry["PodMagics"].session
for _id in {ids!r}:
    display(pod_panel(_pb, _pb.client.pods.get(_id)))
"""
PANEL_STATE = (
    "(len(_pb.refresher.panels), _pb.refresher.ticks, _pb.refresher.running, "
    "sorted(set(p.connection for p in _pb.refresher.panels)), "
    "sorted(set(p.error for p in _pb.refresher.panels)))"
)


def execute(kc: Any, code: str, expressions: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``code`` in the kernel; its execute_reply content (raises on an error)."""
    msg_id = kc.execute(code, store_history=False, user_expressions=expressions or {})
    while True:
        reply = kc.get_shell_msg(timeout=120)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    content = reply["content"]
    if content["status"] != "ok":
        raise RuntimeError(f"kernel cell failed: {content.get('ename')}: {content.get('evalue')}")
    drain_iopub(kc)
    return content


def drain_iopub(kc: Any) -> None:
    """Read what the kernel published (panel updates pile up otherwise)."""
    while kc.iopub_channel.msg_ready():
        kc.get_iopub_msg(timeout=1)


def panel_state(kc: Any) -> tuple[int, int, bool, list[str], list[str]]:
    """(panels, refresher ticks, refresher running, connections, errors) in the kernel."""
    content = execute(kc, "", {"state": PANEL_STATE})
    value = content["user_expressions"]["state"]
    if value["status"] != "ok":
        raise RuntimeError(f"could not read the refresher: {value.get('evalue')}")
    return eval(value["data"]["text/plain"], {})  # noqa: S307 - a tuple of literals


def time_cells(kc: Any, seconds: float) -> list[float]:
    """Run a trivial cell again and again for ``seconds``; each round trip in seconds."""
    times = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        execute(kc, "pass")
        times.append(time.perf_counter() - started)
        time.sleep(0.02)
    return times


def wait_for_panels(kc: Any, count: int) -> int:
    """Wait until the kernel's refresher holds ``count`` panels; its tick counter then."""
    deadline = time.monotonic() + 60
    while True:
        held, ticks, *_ = panel_state(kc)
        if held == count or time.monotonic() > deadline:
            return ticks
        time.sleep(0.1)


def probe(args: argparse.Namespace) -> int:
    """Kernel side: wait for "go", then twice: time cells with no panel, show the panels,
    time cells again (and close them between the rounds). Alternating spreads any drift of
    the load over both sides."""
    from jupyter_client.manager import start_new_kernel

    env = _common.clean_env(Path(args.probe_home))
    env.update(PODBOOK_URL=args.url, RUNPOD_API_KEY=os.environ["PODBOOK_LOAD_KEY"])
    env["PODBOOK_HOME"] = str(Path(args.probe_home) / "podbook-home")
    km, kc = start_new_kernel(startup_timeout=120, env=env)
    try:
        execute(kc, "%load_ext podbook")
        execute(kc, f"%config PodMagics.refresh_interval = {args.refresh_interval}")
        print("ready", flush=True)
        go = sys.stdin.readline().split()
        seconds, ids = float(go[1]) / 2, go[2:]
        without: list[float] = []
        with_panels: list[float] = []
        ticks = 0
        for round_ in range(2):
            without += time_cells(kc, seconds)
            execute(kc, SHOW_PANELS.format(ids=ids))
            ticks_before = wait_for_panels(kc, len(ids))
            with_panels += time_cells(kc, seconds)
            count, ticks_after, running, connections, errors = panel_state(kc)
            ticks += ticks_after - ticks_before
            if round_ == 0:
                execute(kc, "for _p in _pb.refresher.panels: _p.close()")
                wait_for_panels(kc, 0)
        result = {
            "without": without, "with": with_panels, "panels": count, "ticks": ticks,
            "running": running, "connections": connections, "errors": errors,
        }  # fmt: skip
        print(json.dumps(result), flush=True)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return 0


def start_probe(emu: Any, workdir: Path, refresh_interval: float) -> subprocess.Popen[str]:
    """``load.py --probe``: a kernel driven from its own process (this one runs the load)."""
    env = {**os.environ, "PODBOOK_LOAD_KEY": emu.api_key, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, __file__, "--probe", "--url", emu.url]
    command += ["--refresh-interval", str(refresh_interval)]
    command += ["--probe-home", str(workdir / "probe")]
    with (workdir / "probe.log").open("w") as err:
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
            env=env, start_new_session=True,
        )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "ready":
        _common.stop_group(proc)
        raise RuntimeError(f"the kernel probe did not start: {(workdir / 'probe.log').read_text()}")
    return proc


def create_pods(emu: Any, count: int) -> list[str]:
    """``count`` pods for the panels to watch; their ids."""
    ids = []
    with emu.http() as http:
        for i in range(count):
            body = {"name": f"load-{i}", "image": "runpod/pytorch:latest", "gpu": {"id": GPU}}
            response = http.post("/v2/pods", json=body)
            response.raise_for_status()
            ids.append(response.json()["id"])
    return ids


# --- the run ---------------------------------------------------------------------------------


def ratio(a: float, b: float) -> str:
    """``a / b`` as ``1.23x`` (``n/a`` when ``b`` is zero)."""
    return f"{a / b:.2f}x" if b else "n/a"


def print_op(report: OpReport, duration: float) -> None:
    """One operation's line."""
    rate, concurrent = SEED_LIMITS[report.op]
    print(
        f"  /{report.op:<8} sent {report.sent:>6,}  accepted {report.accepted:>6,} "
        f"({report.accepted / duration:6.1f}/s; limit {rate / WINDOW_SECONDS:.0f}/s = "
        f"{ratio(report.accepted / duration, rate / WINDOW_SECONDS)})  "
        f"429 rate {report.rate_429:>5,}  429 at-once {report.concurrent_429}  "
        f"5xx {report.server_errors}  dropped {report.transport_errors}  "
        f"busiest window {report.max_window:,}/{rate:,}"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the load and the kernel probe, print the figures, check the promises."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--clients", type=int, default=200, help="concurrent clients")
    parser.add_argument("--overdrive", type=float, default=1.2, help="offered load / limit")
    parser.add_argument("--workers", type=int, default=2, help="podbook worker processes")
    parser.add_argument("--concurrency", type=int, default=4, help="slots per worker")
    parser.add_argument("--panels", type=int, default=PANELS, help="live pod panels")
    parser.add_argument(
        "--retention-scale",
        type=float,
        default=1.0,
        help="the emulator's --queue-time-scale: 0.02 keeps a /run result 36 s instead of "
        "30 min, so that the memory reaches its plateau within the run",
    )
    parser.add_argument(
        "--refresh-interval",
        type=float,
        default=1.0,
        help="the panels' base refresh pause in s (the default of PodMagics is 2)",
    )
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--probe-home", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        return probe(args)

    with tempfile.TemporaryDirectory(prefix="podbook-bench-load-") as tmp:
        workdir = Path(tmp)
        log = workdir / "executions.txt"
        handler = workdir / "record_handler.py"
        handler.write_text(RECORD_HANDLER.format(log=str(log)))
        print(
            f"podbook load test — {args.clients} clients, {args.duration:.0f} s, "
            f"{args.panels} live panels, loopback, {os.cpu_count()} CPUs shared; a /run result "
            f"is kept {RUN_RETENTION_S * args.retention_scale:,.0f} s (x{args.retention_scale:g} "
            "the seed's 30 min)"
        )
        with contextlib.ExitStack() as stack:
            scale = ["--queue-time-scale", str(args.retention_scale)]
            emu = stack.enter_context(_common.emulator(workdir, scale))
            endpoint_id = emu.create_endpoint("load")
            pod_ids = create_pods(emu, args.panels)
            workers = [
                stack.enter_context(
                    _common.podbook_worker(
                        emu, endpoint_id, f"{handler}:record", args.concurrency, f"w{i}"
                    )
                )
                for i in range(args.workers)
            ]
            probe_proc = start_probe(emu, workdir, args.refresh_interval)
            stack.callback(_common.stop_group, probe_proc)
            processes = {
                "emulator": [emu.proc.pid],
                "podbook workers": [w.pid for w in workers],
                "load clients (this process)": [os.getpid()],
                "kernel and its driver": [probe_proc.pid],
            }
            return measure(args, emu, endpoint_id, pod_ids, probe_proc, log, processes)


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds so far of ``pids`` (this process alone; any other with its
    live children)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(pid)
            family = process.children(recursive=True) if pid != os.getpid() else []
            for each in [process, *family]:
                with contextlib.suppress(psutil.Error):
                    times = each.cpu_times()
                    total += times.user + times.system
    return total


@dataclass
class Samples:
    """The emulator's resident memory (MB) after warm-up, at the end of the load and after
    the drain; CPU seconds each group of processes spent during the load."""

    warm: float = 0.0
    end: float = 0.0
    drained: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    series: list[float] = field(default_factory=list)
    accepted_warm: int = 0


def measure(
    args: argparse.Namespace, emu: Any, endpoint_id: str, pod_ids: list[str],
    probe_proc: subprocess.Popen[str], log: Path, processes: dict[str, list[int]],
) -> int:  # fmt: skip
    """The load, with the memory samples and the probe's go signal on a timer beside it."""
    memory = Samples()
    cpu_before = {name: cpu_seconds(pids) for name, pids in processes.items()}
    warm_up = args.duration * 0.2
    cell_seconds = args.duration * 0.3

    state = LoadState()

    async def timers() -> None:
        await asyncio.sleep(0.5 + warm_up)
        memory.warm = emu.resident_mb()
        memory.accepted_warm = sum(1 for o in state.outcomes if o.job_id)
        assert probe_proc.stdin is not None
        probe_proc.stdin.write(f"go {cell_seconds} {' '.join(pod_ids)}\n")
        probe_proc.stdin.flush()
        while True:  # the curve between the two samples (cancelled when the load ends)
            memory.series.append(emu.resident_mb())
            await asyncio.sleep(args.duration / 8)

    async def both() -> LoadState:
        timer = asyncio.create_task(timers())
        await run_load(
            emu.url, emu.api_key, endpoint_id, args.clients, args.duration, args.overdrive,
            state,
        )  # fmt: skip
        timer.cancel()
        memory.end = emu.resident_mb()
        for name, pids in processes.items():
            memory.cpu[name] = cpu_seconds(pids) - cpu_before[name]
        return state

    state = asyncio.run(both())
    assert probe_proc.stdout is not None
    probe_line = probe_proc.stdout.readline()
    jobs = drain(emu, endpoint_id, timeout=max(120.0, args.duration * 2))
    memory.drained = emu.resident_mb()
    reports = [check_op(state, op) for op in SEED_LIMITS]
    executed, job_problems = check_executions(state, log)
    job_problems += check_results(emu, endpoint_id, state, jobs, args.retention_scale)
    return report(args, state, reports, executed, job_problems, jobs, memory, probe_line)


def report(
    args: argparse.Namespace, state: LoadState, reports: list[OpReport], executed: int,
    job_problems: list[str], jobs: dict[str, int], memory: Samples, probe_line: str,
) -> int:  # fmt: skip
    """Print the figures; 1 when a promise is broken."""
    duration = args.duration
    print(f"\nrequests over {duration:.0f} s (offered at {args.overdrive:.1f}x each limit):")
    for op_report in reports:
        print_op(op_report, duration)
    accepted = sum(r.accepted for r in reports)
    runsync_done = [o for o in state.outcomes if o.op == "runsync" and o.finished]
    latencies = [o.received - o.sent for o in runsync_done]
    print(
        f"  /runsync answered COMPLETED within its wait: {len(runsync_done):,}, round trip p50 "
        f"{_common.percentile_ms(latencies, 0.5):.1f} ms, p99 "
        f"{_common.percentile_ms(latencies, 0.99):.1f} ms"
    )
    print(
        f"\njobs: {accepted:,} accepted, {executed:,} executions recorded by the handler, "
        f"endpoint health after the drain: completed {jobs['completed']:,}, failed "
        f"{jobs['failed']}, in queue {jobs['inQueue']}, in progress {jobs['inProgress']} "
        f"(a /runsync result is kept {60 * args.retention_scale:g} s, a /run one "
        f"{RUN_RETENTION_S * args.retention_scale:g} s);\n  {jobs.get('readBack', 0)} /run results read "
        "back by /status after the drain"
    )
    growth = memory.end - memory.warm
    print(
        f"\nemulator resident memory: {memory.warm:.1f} MB after {duration * 0.2:.0f} s warm-up, "
        f"{memory.end:.1f} MB at the end of the load ({growth:+.1f} MB, "
        f"{ratio(memory.end, memory.warm)}), {memory.drained:.1f} MB after the drain"
    )
    since_warm = accepted - memory.accepted_warm
    print(
        f"  between: {', '.join(f'{mb:.1f}' for mb in memory.series)} MB; "
        f"{growth * 1000 / since_warm if since_warm else 0:.2f} KB per job accepted after the "
        f"warm-up ({since_warm:,} jobs; a result is held until its retention ends)"
    )
    spent = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in memory.cpu.items())
    print(
        f"CPU seconds during the {duration:.0f} s of load ({os.cpu_count()} cores shared with "
        f"other work): {spent}"
    )
    problems = [p for r in reports for p in r.problems] + job_problems
    problems += report_probe(probe_line, args.panels, args.refresh_interval)
    load = os.getloadavg()
    print(f"\nmachine load average: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    if problems:
        print(f"\nBROKEN PROMISES ({len(problems)}):")
        for problem in sorted(set(problems))[:30]:
            print(f"  - {problem}")
        return 1
    print(
        "\nall promises kept: every accepted job ran exactly once and completed, no 5xx, "
        "no dropped connection, every 429 beyond a documented limit and with Retry-After"
    )
    return 0


def report_probe(line: str, panels: int, refresh: float) -> list[str]:
    """Print the kernel's cell latency without and with the panels; problems found."""
    try:
        probe_result = json.loads(line)
    except ValueError:
        return [f"the kernel probe gave no result: {line[:200]!r}"]
    without, with_panels = probe_result["without"], probe_result["with"]
    p50_without = _common.percentile_ms(without, 0.5)
    p50_with = _common.percentile_ms(with_panels, 0.5)
    p99_without = _common.percentile_ms(without, 0.99)
    p99_with = _common.percentile_ms(with_panels, 0.99)
    print(
        "\nkernel cell latency ('pass', execute request → reply) under the same load, "
        "alternated (none, panels, none, panels):\n"
        f"  no panel        p50 {p50_without:7.2f} ms  p99 {p99_without:7.2f} ms  "
        f"(n={len(without)})\n"
        f"  {probe_result['panels']} live panels  p50 {p50_with:7.2f} ms  p99 {p99_with:7.2f} ms  "
        f"(n={len(with_panels)}; {probe_result['ticks']} refresher ticks meanwhile, base pause {refresh:.1f} s)\n"
        f"  ratio with/without: p50 {ratio(p50_with, p50_without)}, "
        f"p99 {ratio(p99_with, p99_without)}"
    )
    problems = []
    if probe_result["panels"] != panels or not probe_result["running"]:
        problems.append(f"the refresher held {probe_result['panels']} panels, not {panels}")
    if probe_result["ticks"] < 1:
        problems.append("the panels did not refresh while the cells were timed")
    if probe_result["connections"] != ["ok"] or probe_result["errors"] != [""]:
        problems.append(
            f"panels showed {probe_result['connections']} / {probe_result['errors']} under load"
        )
    return problems


if __name__ == "__main__":
    raise SystemExit(main())
