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


class BackgroundLoop:
    """An asyncio event loop running in a thread of its own, for async objects that a sync
    test keeps alive across calls (a server whose output a task of the loop reads)."""

    def __init__(self) -> None:
        import asyncio
        import threading

        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Any, timeout: float = 120.0) -> Any:
        """Run ``coro`` on the loop and return its result."""
        import asyncio

        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Stop the loop and its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()
