"""Listing many pods: ``GET /v2/pods`` as the account grows (issue 21 §5).

Run: ``.venv/bin/python bench/podlist.py`` (about two minutes). One emulator process
(``--runtime none``, its quotas raised) gets GPU pods created through the REST API up to each
level (500, 5,000 and 10,000 by default); at each level ``GET /v2/pods`` is timed over bare
httpx (``--rounds`` sequential calls after five unmeasured ones, the whole body read) and
through ``podbook.Client`` (``client.pods.list()``: the call and its parse into ``Pod``
models), and printed with the cost per pod.

Targets (issue 21 §5), printed met or MISSED beside the figures: the listing linear (at 5,000
pods at most 12x its time at 500, where linear is 10x), and at the largest level p95 at most 2x
p50.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _common import account_quota, emulator, percentile_ms, verdict
from rest import create_pods

from podbook import Client

QUOTA = [*account_quota(100_000_000), "--max-running-pods", "100000"]
LINEAR_AT_MOST = 12.0  # 5,000 pods at most this times 500 (10x the pods)
TAIL_AT_MOST = 2.0  # p95 at most this times p50 at the largest level


def timed(call: object, rounds: int) -> list[float]:
    """Seconds of each of ``rounds`` calls of ``call`` after five unmeasured ones."""
    for _ in range(5):
        call()  # type: ignore[operator]
    seconds = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()  # type: ignore[operator]
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="500,5000,10000", help="pod counts, ascending")
    parser.add_argument("--rounds", type=int, default=60, help="timed calls per level")
    args = parser.parse_args()
    levels = [int(n) for n in args.levels.split(",")]
    print(f"podlist bench: load average {os.getloadavg()[0]:.2f} at start, {os.cpu_count()} cores")
    rows: dict[int, dict[str, list[float]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="podbook-bench-podlist-") as tmp,
        emulator(Path(tmp), QUOTA) as emu,
        emu.http() as http,
        Client(api_key=emu.api_key, rest_url=emu.url, queue_url=emu.url, v1_url=emu.url) as client,
    ):
        made = 0
        for level in levels:
            create_pods(http, level - made)
            made = level

            def bare() -> None:
                response = http.get("/v2/pods")
                response.raise_for_status()
                _ = response.content

            rows[level] = {
                "bare": timed(bare, args.rounds),
                "client": timed(client.pods.list, max(10, args.rounds // 3)),
            }

    print()
    print("GET /v2/pods, sequential calls: p50 / p95 (p95/p50), per pod at p50")
    for level, figures in rows.items():
        bare, through = figures["bare"], figures["client"]
        p50, p95 = percentile_ms(bare, 0.5), percentile_ms(bare, 0.95)
        client_p50 = percentile_ms(through, 0.5)
        print(
            f"  {level:>7,} pods  bare {p50:8.1f} / {p95:8.1f} ms ({p95 / p50:.2f}x),"
            f" {p50 * 1000 / level:5.1f} us a pod  ·  client.pods.list {client_p50:8.1f} ms,"
            f" {client_p50 * 1000 / level:5.1f} us a pod"
        )
    print()
    first, last = levels[0], levels[-1]
    if 5000 in rows and first < 5000:
        growth = percentile_ms(rows[5000]["bare"], 0.5) / percentile_ms(rows[first]["bare"], 0.5)
        linear = 5000 / first
        print(
            f"5,000 pods against {first:,}: {growth:.1f}x the time for {linear:.0f}x the pods"
            f" (<= {LINEAR_AT_MOST * linear / 10:.0f}x: {verdict(growth <= LINEAR_AT_MOST * linear / 10)})"
        )
    tail = percentile_ms(rows[last]["bare"], 0.95) / percentile_ms(rows[last]["bare"], 0.5)
    print(
        f"{last:,} pods: p95 {tail:.2f}x p50 (<= {TAIL_AT_MOST:.0f}x: {verdict(tail <= TAIL_AT_MOST)})"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
