"""A small run of ``bench/podlist.py`` (issue 21 §5): ``GET /v2/pods`` as the account grows.

``bench/podlist.py --levels 50,500`` with few rounds must exit 0 and print each level's
figures (bare httpx and the client, per pod) and a verdict per target. Whether the targets
hold is the full run's to say (``.venv/bin/python bench/podlist.py``): not asserted here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "podlist.py"


def test_a_small_podlist_bench_run_prints_every_figure(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PODBOOK_", "RUNPOD_"))}
    env |= {"HOME": str(tmp_path), "PODBOOK_HOME": str(tmp_path / "podbook-home")}
    result = subprocess.run(
        [sys.executable, str(BENCH), "--levels", "50,500", "--rounds", "6"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
    )
    assert result.returncode == 0 and "Traceback" not in result.stderr, (
        result.stdout[-3000:] + result.stderr[-3000:]
    )
    out = result.stdout
    for figure in ("     50 pods  bare", "    500 pods  bare", "client.pods.list", "us a pod"):
        assert figure in out, figure
    assert out.count(": met)") + out.count(": MISSED)") == 1  # the tail (no 5,000 level)
