"""A bounded schemathesis pass (``scripts/conformance.py``) in the normal test stage.

The script starts its own emulator (fuzzing creates and deletes many records, which must
not disturb the session emulator other tests share), seeds one record of each kind and runs
the REST reference document and the emulator's queue document with few examples per
operation: no 5xx, documented statuses and content types, responses valid against their
schemas, schema-violating requests refused. ``make conformance`` runs the long pass.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "conformance.py"


@pytest.mark.timeout(600)
def test_bounded_conformance_pass_finds_nothing(tmp_path: Path) -> None:
    # A fixed seed keeps CI reproducible; `make conformance` explores with fresh seeds.
    command = [sys.executable, str(SCRIPT), "--max-examples", "5", "--seed", "20261122"]
    command += ["--keep", str(tmp_path)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=580, cwd=ROOT)
    figures = [line for line in proc.stdout.splitlines() if "operations" in line]
    print("\n".join(figures))
    assert proc.returncode == 0, proc.stdout[-15000:] + proc.stderr[-3000:]
    rest, queue = figures[0], figures[1]
    assert rest.startswith("REST (reference): ") and "0 failures" in rest
    assert int(rest.split(": ")[1].split()[0]) >= 48  # of the reference's 53, 2 left out
    assert queue.startswith("queue (emulator): 15 operations") and "0 failures" in queue
