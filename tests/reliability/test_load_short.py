"""A short, bounded run of ``bench/load.py`` (issue 5 §3): its own emulator, workers and kernel.

``bench/load.py --duration 10 --clients 50`` must exit 0: every accepted job ran exactly once
and completed, no 5xx, no dropped connection, every 429 beyond a documented limit and with
``Retry-After``, and the 50 live panels stayed connected. The full run (200 clients, 60 s)
is ``make bench``; this one checks that the load test still works and still holds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LOAD = Path(__file__).resolve().parents[2] / "bench" / "load.py"


def test_a_short_load_run_keeps_every_promise(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PODBOOK_", "RUNPOD_"))}
    env.update(HOME=str(tmp_path), PODBOOK_HOME=str(tmp_path / "podbook-home"))
    result = subprocess.run(
        [sys.executable, str(LOAD), "--duration", "10", "--clients", "50"],
        capture_output=True,
        text=True,
        timeout=280,
        env=env,
        cwd=tmp_path,
    )
    print(result.stdout)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "all promises kept" in result.stdout
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    for figure in ("accepted", "emulator resident memory", "kernel cell latency", "ratio"):
        assert figure in result.stdout, figure
