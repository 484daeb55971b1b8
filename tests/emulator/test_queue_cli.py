"""``podbook emulator`` queue flags refuse bad values with one line and exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--endpoint", "bad name"], "not a URL-safe id"),
        (["--endpoint", "pods"], "reserved"),
        (["--endpoint", "x=/no/such/handler.py"], "not found"),
        (["--endpoint", "x="], "nothing after '='"),
        (["--queue-rate-limit", "bogus=1"], "OP=RATE[/CONCURRENT]"),
    ],
)
def test_bad_queue_flags(tmp_path: Path, args: list[str], fragment: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "podbook", "emulator", "--port", "0", "--home", str(tmp_path)]
        + args,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.stderr
