"""Process helpers shared by the tests' emulator and worker wrappers, and a wait on a
condition."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> int | None:
    """SIGTERM ``proc``, then SIGKILL after ``timeout`` seconds; its exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    return proc.returncode


def wait_for(
    check: Callable[[], Any], timeout: float = 5.0, interval: float = 0.02, what: str = ""
) -> Any:
    """Call ``check`` until it returns something truthy; return that (AssertionError naming
    ``what`` after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what or 'condition'} not met within {timeout} s")
        time.sleep(interval)
