"""Process helpers shared by the tests' emulator and worker wrappers."""

from __future__ import annotations

import signal
import subprocess


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
