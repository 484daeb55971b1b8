"""The first magic of a fresh kernel, when no emulator runs yet: how long the user waits.

Each round starts a fresh kernel with a fresh ``PODBOOK_HOME`` (no emulator, no API key),
runs ``%load_ext podbook`` and then ``%pod list``, which starts the embedded emulator and
lists its pods, and times each cell from its request to its reply, as a notebook's cell
timer does. ``%load_ext`` alone is the comparison in the same run (these machines are noisy);
the target is a first magic at p50 of at most 0.6 s.

Run: ``.venv/bin/python bench/firstmagic.py [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import verdict
from jupyter_client import KernelManager

TARGET_SECONDS = 0.6
CELLS = ("%load_ext podbook", "%pod list")


def timed_cell(client: Any, code: str) -> tuple[float, str]:
    """Seconds from the request to the reply of one cell, and its error text if any."""
    started = time.perf_counter()
    msg_id = client.execute(code)
    reply = client.get_shell_msg(timeout=120)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=120)
    elapsed = time.perf_counter() - started
    content = reply["content"]
    error = "" if content["status"] == "ok" else f"{content.get('ename')}: {content.get('evalue')}"
    return elapsed, error


def one_round(folder: Path) -> tuple[float, float]:
    """(load_ext seconds, first magic seconds) in a fresh kernel and a fresh home."""
    home = Path(tempfile.mkdtemp(prefix="home-", dir=folder))
    env = {k: v for k, v in os.environ.items() if k not in {"RUNPOD_API_KEY", "PODBOOK_URL"}}
    env["PODBOOK_HOME"] = str(home)
    manager = KernelManager(kernel_name="python3", transport="ipc", ip=str(home / "kernel"))
    manager.start_kernel(env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        load, error = timed_cell(client, CELLS[0])
        first, error2 = timed_cell(client, CELLS[1])
        if error or error2:
            raise SystemExit(f"a cell failed: {error or error2}")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        _stop_emulator(home)
    return load, first


def _stop_emulator(home: Path) -> None:
    """Stop the emulator the round started (its pid is in ``emulator.json``)."""
    import json

    try:
        pid = json.loads((home / "emulator.json").read_text())["pid"]
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, KeyError):
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    loads: list[float] = []
    firsts: list[float] = []
    with tempfile.TemporaryDirectory(prefix="pb-first-") as folder:
        for number in range(args.rounds):
            load, first = one_round(Path(folder))
            loads.append(load)
            firsts.append(first)
            print(f"round {number + 1}: %load_ext {load:.3f} s, first magic {first:.3f} s")
    load50, first50 = statistics.median(loads), statistics.median(firsts)
    print()
    print(f"{'cell':<34}{'p50':>9}{'max':>9}")
    print(f"{'%load_ext podbook':<34}{load50:>8.3f}s{max(loads):>8.3f}s")
    print(f"{'%pod list (starts the emulator)':<34}{first50:>8.3f}s{max(firsts):>8.3f}s")
    print(f"first magic / %load_ext: {first50 / load50:.1f}x")
    met = verdict(first50 <= TARGET_SECONDS)
    print(f"target: first magic p50 <= {TARGET_SECONDS} s: {met} ({first50:.3f} s)")


if __name__ == "__main__":
    sys.exit(main())
