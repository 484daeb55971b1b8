"""A small run of ``bench/scale.py`` (issue 21 §5): ``/health``, a drain and memory as the
backlog grows.

``bench/scale.py --jobs 2000`` must exit 0 and print every figure: ``/health`` at 1,000 and
2,000 queued jobs, the rate of each tenth of the drain, the memory before, after and once the
results are forgotten, and a verdict per target. Whether the targets hold is the full run's to
say (``.venv/bin/python bench/scale.py``): not asserted here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "scale.py"


def test_a_small_scale_bench_run_prints_every_figure(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PODBOOK_", "RUNPOD_"))}
    env |= {"HOME": str(tmp_path), "PODBOOK_HOME": str(tmp_path / "podbook-home")}
    result = subprocess.run(
        [sys.executable, str(BENCH), "--jobs", "2000"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=280,
    )
    print(result.stdout)
    assert result.returncode == 0 and "Traceback" not in result.stderr, (
        result.stdout[-3000:] + result.stderr[-3000:]
    )
    out = result.stdout
    for figure in ("1,000 jobs queued: /health p50", "2,000 jobs queued", "per tenth"):
        assert figure in out, figure
    assert "once their retention ran out" in out
    assert out.count(": met)") + out.count(": MISSED)") == 3  # a verdict per target
