"""A tiny run of ``bench/serverless.py`` (issue 20 §4): its own emulator and scaled workers.

``bench/serverless.py --cold 1 --warm 2 --jobs 20 --rounds 1`` must exit 0 and print every
figure: cold and warm starts of a ``podbook worker`` handler and an unmodified ``runpod`` SDK
handler, the drains with ``max`` 1, 2 and 3 workers and the split one over two emulators, and
the targets. Whether the targets
hold is the full run's to say (``.venv/bin/python bench/serverless.py``), on a quieter
machine: not asserted here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "serverless.py"
TINY = ["--cold", "1", "--warm", "2", "--jobs", "20", "--rounds", "1"]


def test_a_tiny_serverless_bench_run_prints_every_figure(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PODBOOK_", "RUNPOD_"))}
    env |= {"HOME": str(tmp_path), "PODBOOK_HOME": str(tmp_path / "podbook-home")}
    command = [sys.executable, str(BENCH), *TINY]
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=280
    )
    print(result.stdout)
    assert result.returncode == 0 and "Traceback" not in result.stderr, (
        result.stdout[-3000:] + result.stderr[-3000:]
    )
    out = result.stdout
    for figure in ("load average", "logged cold start", "back to back", "podbook worker"):
        assert figure in out, figure
    assert "runpod SDK" in out
    for workers in (1, 2, 3):
        assert f"max {workers}: " in out, workers
    assert "max 1 on each of two emulators, at once: " in out
    assert "cold start p50" in out and "drain grows with workers" in out
    assert out.count(": met)") + out.count("(met)") + out.count("MISSED)") == 2  # per target
