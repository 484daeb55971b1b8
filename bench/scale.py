"""Cost that stays flat as the work grows: a backlog's drain and ``/health`` (issue 21 §5).

Run: ``.venv/bin/python bench/scale.py`` (100,000 jobs, about four minutes; ``--jobs 1000000``
draws the curve to a million, about thirty-five). One emulator process (``--runtime none``, its
queue rate limits raised: the figures are the queue's, not the seed's limits) and one
``podbook worker`` with a trivial handler:

- **``/health`` as the backlog grows**: with no worker connected, jobs are queued with
  ``/run`` (eight clients at once) and ``/health`` is timed (p50 of 200 calls) at 1,000 jobs
  and at every tenfold up to ``--jobs``; the ratio of the largest to 1,000 jobs;
- **the drain**: the worker starts and empties the backlog; ``/health`` is read every
  0.2 s, and the rate of each tenth of the backlog (jobs/s, from the moments its first and
  last job completed, interpolated between reads) is printed, then the last tenth's rate
  against the first's.

Then the emulator's resident memory: before the jobs, after the drain, and once every result's
retention ran out. The emulator's clock is scaled (``--queue-time-scale``) so that a ``/run``
result's 30 minutes outlast the drain, as they do on the service, and run out soon after it:
a second of retention for every thousand jobs (100 s for 100,000; 18 s at least). With the
retention shorter than the drain, the later tenths would also forget the first results, work
that the first tenths never do and a drain on the service does not see.

Targets (issue 21 §5), printed met or MISSED beside the figures: ``/health`` at most 1.5x from
1,000 to 100,000 jobs (to ``--jobs`` when smaller); the last tenth of the drain at least 0.9x
the first; the memory once the results are forgotten at most 1.25x the memory before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _common import Emulator, emulator, percentile_ms, podbook_worker, queue_limits, verdict

LIMITS = queue_limits(("run", "runsync", "status", "requests"), 100_000_000, 1000)
REST_SECONDS = 3.0
# The longest time to live (7 days; 100 min at the least time scale): queueing a million jobs
# takes longer than the default day (14.4 min), which would expire the first ones before the drain.
TTL_MS = 7 * 24 * 3600 * 1000
RETENTION_S = 30 * 60  # a /run result's retention on the service


def time_scale(jobs: int) -> float:
    """The emulator's time scale for a backlog of ``jobs``: a result kept a second for every
    thousand jobs (at least 18 s), longer than their drain (1,500 to 2,500 jobs/s here)."""
    return max(0.01, jobs / 1000 / RETENTION_S)


HEALTH_FLAT = 1.5  # /health at 100,000 jobs at most this times its cost at 1,000
DRAIN_FLAT = 0.9  # the last tenth of the drain at least this times the first's rate
MEMORY_BACK = 1.25  # memory once the jobs are forgotten at most this times before them
SUBMITTERS = 8
HANDLER = "def handler(job):\n    return {'ok': True}\n"


def queue_jobs(emu: Emulator, endpoint_id: str, count: int) -> None:
    """Queue ``count`` jobs with ``/run``, ``SUBMITTERS`` clients at once."""

    def submit(share: int) -> None:
        with emu.http() as http:
            for index in range(share):
                body = {"input": {"i": index}, "policy": {"ttl": TTL_MS}}
                http.post(f"/v2/{endpoint_id}/run", json=body).raise_for_status()

    shares = [count // SUBMITTERS + (i < count % SUBMITTERS) for i in range(SUBMITTERS)]
    threads = [threading.Thread(target=submit, args=(share,)) for share in shares]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def health_ms(http: httpx.Client, endpoint_id: str, calls: int = 200) -> float:
    """The p50 of ``calls`` ``/health`` calls, ms."""
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        http.get(f"/v2/{endpoint_id}/health").raise_for_status()
        seconds.append(time.perf_counter() - started)
    return percentile_ms(seconds, 0.5)


def jobs_of(http: httpx.Client, endpoint_id: str) -> dict[str, int]:
    """The endpoint's job counts (``/health``)."""
    return dict(http.get(f"/v2/{endpoint_id}/health").json()["jobs"])


def drained(http: httpx.Client, endpoint_id: str, backlog: int) -> int:
    """Jobs of the backlog done so far: neither waiting nor running (a result whose short
    retention ran out leaves the ``completed`` count, not the drain)."""
    counts = jobs_of(http, endpoint_id)
    return backlog - counts["inQueue"] - counts["inProgress"]


def when_reached(reads: list[tuple[float, int]], target: int) -> float:
    """The moment the completed count reached ``target``, interpolated between reads."""
    for (t0, c0), (t1, c1) in zip(reads, reads[1:], strict=False):
        if c0 <= target <= c1:
            return t0 if c1 == c0 else t0 + (t1 - t0) * (target - c0) / (c1 - c0)
    raise ValueError(f"{target} jobs were never reached")


def tenth_rates(reads: list[tuple[float, int]], jobs: int) -> list[float]:
    """The drain rate (jobs/s) of each tenth of the backlog."""
    marks = [when_reached(reads, jobs * k // 10) for k in range(11)]
    return [
        (jobs / 10) / max(end - start, 1e-9) for start, end in zip(marks, marks[1:], strict=False)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=100_000, help="backlog (default 100,000)")
    args = parser.parse_args()
    levels = [n for n in (1_000, 10_000, 100_000, 1_000_000) if n < args.jobs] + [args.jobs]
    scale = time_scale(args.jobs)
    print(
        f"scale bench: load average {os.getloadavg()[0]:.2f} at start, {os.cpu_count()} cores;"
        f" a backlog of {args.jobs:,} jobs, one podbook worker"
    )
    with tempfile.TemporaryDirectory(prefix="podbook-bench-scale-") as tmp:
        root = Path(tmp)
        handler = root / "handler.py"
        handler.write_text(HANDLER)
        extra = [*LIMITS, "--queue-time-scale", str(scale)]
        with emulator(root, extra) as emu, emu.http() as http:
            endpoint_id = emu.create_endpoint("scale")
            start_rss = emu.resident_mb()
            costs: dict[int, float] = {}
            queued = 0
            started = time.monotonic()
            for level in levels:
                queue_jobs(emu, endpoint_id, level - queued)
                queued = level
                costs[level] = health_ms(http, endpoint_id)
                print(f"  {level:>9,} jobs queued: /health p50 {costs[level]:.2f} ms", flush=True)
            print(
                f"queued in {time.monotonic() - started:.0f} s; emulator {emu.resident_mb():.0f} MB"
                f" (at start {start_rss:.0f} MB)"
            )
            reads: list[tuple[float, int]] = [(time.monotonic(), 0)]
            with podbook_worker(emu, endpoint_id, handler, 1):
                said = time.monotonic()
                while reads[-1][1] < args.jobs:
                    time.sleep(0.2)
                    reads.append((time.monotonic(), drained(http, endpoint_id, args.jobs)))
                    if reads[-1][0] - said >= 10:  # progress on a long drain
                        print(f"  drained {reads[-1][1]:,} of {args.jobs:,}", flush=True)
                        said = reads[-1][0]
            after_rss = emu.resident_mb()
            # Once every result's retention ran out, what is left in memory.
            while (left := jobs_of(http, endpoint_id)["completed"]) > 0:
                if time.monotonic() - said >= 10:
                    print(f"  {left:,} results still kept", flush=True)
                    said = time.monotonic()
                time.sleep(0.5)
            time.sleep(REST_SECONDS)  # the emulator at rest: its trim after a burst is done
            forgotten_rss = emu.resident_mb()
    # From the last read before the first job was done (the worker's start-up is not the drain).
    begin = max(i for i, (_, count) in enumerate(reads) if count == 0)
    reads = reads[begin:]
    rates = tenth_rates(reads, args.jobs)
    drain_seconds = reads[-1][0] - reads[0][0]
    print(
        f"drain: {drain_seconds:.1f} s, {args.jobs / drain_seconds:,.0f} jobs/s overall;"
        f" emulator {after_rss:.0f} MB after it"
    )
    print("  jobs/s per tenth of the backlog: " + ", ".join(f"{r:,.0f}" for r in rates))
    retention = RETENTION_S * scale
    if drain_seconds > retention:
        print(
            f"  note: the drain outlasted a result's retention ({retention:.0f} s here): its"
            " later tenths also forgot the first results"
        )
    print(
        f"emulator memory: {start_rss:.0f} MB before the jobs, {after_rss:.0f} MB after the"
        f" drain, {forgotten_rss:.0f} MB once their retention ran out"
        f" ({forgotten_rss / start_rss:.2f}x before)"
    )
    largest = min(100_000, args.jobs)
    health_ratio = costs[largest] / costs[1_000]
    drain_ratio = rates[-1] / rates[0]
    print()
    print("targets:")
    print(
        f"  /health at {largest:,} jobs {health_ratio:.2f}x at 1,000"
        f" (<= {HEALTH_FLAT}x: {verdict(health_ratio <= HEALTH_FLAT)})"
    )
    print(
        f"  the drain's last tenth {drain_ratio:.2f}x its first, median tenth"
        f" {statistics.median(rates):,.0f} jobs/s (>= {DRAIN_FLAT}x:"
        f" {verdict(drain_ratio >= DRAIN_FLAT)})"
    )
    memory_ratio = forgotten_rss / start_rss
    print(
        f"  memory once the results are forgotten {memory_ratio:.2f}x before"
        f" (<= {MEMORY_BACK}x: {verdict(memory_ratio <= MEMORY_BACK)})"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
