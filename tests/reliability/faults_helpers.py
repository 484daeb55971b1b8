"""Helpers of the fault tests (no tests here): a ledger handler, real worker processes, a
webhook receiver that records every attempt, and a few raw queue calls.

Everything is real: the emulator is a process (``start_emulator`` of ``tests/conftest.py``),
workers are ``python -m podbook worker`` processes, the receiver is an HTTP server on a
loopback port. Only the faults are injected (``kill -9``, a handler that hangs, a receiver
that is down, slow or answers 500).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from processes import stop_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
from test_queue_helpers import (  # noqa: E402  (the queue tests' raw helpers, reused)
    create_endpoint,
    status,
    wait_for,
    worker_key,
)

__all__ = [
    "FAST_BROKER",
    "QUEUE_TIME_SCALE",
    "WebhookReceiver",
    "WorkerProcess",
    "create_endpoint",
    "free_port",
    "ledger_counts",
    "status",
    "wait_for",
    "worker_key",
    "write_ledger_handler",
]

FAST_BROKER = ("--worker-poll-seconds", "0.5", "--worker-gone-seconds", "3")
"""Long-polls of half a second; a worker unheard of for 3 s is gone (generous under load)."""

QUEUE_TIME_SCALE = 0.1
"""``--queue-time-scale`` of the fault tests' shared emulator: queue durations ten times faster."""

LEDGER_HANDLER = '''
import os
import time

LEDGER = {ledger!r}


def handler(job):
    """Append the job id to the ledger (one line per execution), then work a little."""
    fd = os.open(LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (job["id"] + "\\n").encode())
    finally:
        os.close(fd)
    data = job["input"]
    if data.get("hang"):
        while True:
            time.sleep(0.05)
    release = data.get("until")
    while release and not os.path.exists(release):
        time.sleep(0.02)
    time.sleep(data.get("sleep", 0))
    return {{"n": data.get("n")}}
'''


def write_ledger_handler(directory: Path) -> tuple[Path, Path]:
    """A handler file that appends each job id it runs to a ledger; ``(handler, ledger)``."""
    ledger = directory / "ledger.txt"
    handler = directory / "ledger_handler.py"
    handler.write_text(LEDGER_HANDLER.format(ledger=str(ledger)), encoding="utf-8")
    return handler, ledger


def ledger_counts(ledger: Path) -> Counter[str]:
    """How many times each job id was executed."""
    if not ledger.exists():
        return Counter()
    return Counter(line for line in ledger.read_text(encoding="utf-8").splitlines() if line)


class WorkerProcess:
    """``python -m podbook worker HANDLER`` serving one endpoint with a worker key."""

    def __init__(
        self,
        url: str,
        endpoint: str,
        worker_key: str,
        handler: Path,
        log_path: Path,
        *,
        worker_id: str,
        concurrency: int = 1,
    ) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "PODBOOK_"))}
        env.update(
            RUNPOD_AI_API_KEY=worker_key,
            RUNPOD_PING_INTERVAL="300",
            PYTHONUNBUFFERED="1",
        )
        command = [
            sys.executable,
            "-m",
            "podbook",
            "worker",
            str(handler),
            "--endpoint",
            endpoint,
            "--url",
            url,
            "--worker-id",
            worker_id,
            "--concurrency",
            str(concurrency),
        ]
        self.worker_id = worker_id
        self.log_path = log_path
        with log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                command,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.proc.poll() is None

    def kill9(self) -> None:
        """``kill -9`` the worker (no farewell, no result)."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s (test clean-up)."""
        stop_process(self.proc)

    def log(self) -> str:
        """What the worker printed."""
        return self.log_path.read_text(errors="replace")


class WebhookReceiver:
    """A loopback HTTP server that records every webhook attempt with its arrival time.

    ``behaviour(attempt_number) -> (delay_seconds, status)``: how to answer the n-th call
    (from 1). ``attempts`` holds ``(monotonic arrival, monotonic answer, body)``.
    """

    def __init__(self, behaviour: Callable[[int], tuple[float, int]], port: int = 0) -> None:
        self.behaviour = behaviour
        self.attempts: list[tuple[float, float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with receiver._lock:
                    number = len(receiver.attempts) + 1
                    receiver.attempts.append((arrived, arrived, body))
                delay, status = receiver.behaviour(number)
                time.sleep(delay)
                with receiver._lock:
                    receiver.attempts[number - 1] = (arrived, time.monotonic(), body)
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender gave up waiting: that is the point of a slow receiver

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def arrivals(self) -> list[float]:
        """Monotonic arrival time of each attempt."""
        with self._lock:
            return [a[0] for a in self.attempts]

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A loopback port nothing listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
