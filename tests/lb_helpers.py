"""Helpers of the load-balancing tests: real ``podbook worker --lb`` processes serving
``lb_sample_app.py``, and waits on conditions (never fixed sleeps)."""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, TypeVar

import httpx
from processes import stop_process, wait_for

HERE = Path(__file__).resolve().parent
SAMPLE_APP = HERE / "lb_sample_app.py"
WSGI_APP = HERE / "lb_wsgi_app.py"
LB_FLAGS = (
    "--lb-health-seconds",
    "0.1",
    "--lb-ready-wait-seconds",
    "5",
    "--lb-timeout-seconds",
    "2",
)
"""Emulator flags of the load-balancing tests: quick polls, a short 524 timeout."""

T = TypeVar("T")


def free_port() -> int:
    """A loopback port free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def create_lb_endpoint(http: httpx.Client, prefix: str = "lb") -> str:
    """A fresh LOAD_BALANCER endpoint; its id."""
    name = f"{prefix}-{secrets.token_hex(4)}"
    response = http.post("/v2/serverless", json={"name": name, "type": "LOAD_BALANCER"})
    assert response.status_code == 201, response.text
    assert response.json()["type"] == "LOAD_BALANCER"
    return response.json()["id"]


def worker_key(http: httpx.Client, endpoint_id: str) -> str:
    """A fresh worker key of ``endpoint_id``."""
    response = http.post(f"/v2/serverless/{endpoint_id}/worker-keys")
    assert response.status_code == 201, response.text
    return response.json()["workerKey"]


def listing(http: httpx.Client, endpoint_id: str) -> dict[str, str]:
    """``{worker_id: status}`` of the endpoint's registered workers."""
    response = http.get(f"/v2/serverless/{endpoint_id}/workers")
    assert response.status_code == 200, response.text
    return {w["id"]: w["status"] for w in response.json()["workers"]}


def worker_env(key: str, **extra: str) -> dict[str, str]:
    """A worker's environment: no user key, the worker key, the given variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "PODBOOK_"))}
    env.update(RUNPOD_AI_API_KEY=key, PYTHONUNBUFFERED="1", **extra)
    return env


class AppWorker:
    """``podbook worker --lb APP --endpoint ID`` as a process, and where it listens."""

    def __init__(
        self,
        emu: Any,
        endpoint_id: str,
        log_dir: Path,
        *,
        name: str | None = None,
        app: Path | str = SAMPLE_APP,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.name = name or "w-" + secrets.token_hex(3)
        self.endpoint_id = endpoint_id
        with emu.http() as http:
            key = worker_key(http, endpoint_id)
        self.log = log_dir / f"{self.name}.log"
        command = [
            sys.executable,
            "-m",
            "podbook",
            "worker",
            "--lb",
            str(app),
            "--endpoint",
            endpoint_id,
            "--url",
            emu.url,
            "--worker-id",
            self.name,
            *args,
        ]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                command,
                env=worker_env(key, WORKER_NAME=self.name, **(env or {})),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.port = 0

    def text(self) -> str:
        """What the process wrote."""
        return self.log.read_text(errors="replace")

    def wait_registered(self, timeout: float = 20.0) -> AppWorker:
        """Wait for its 'serves ... on http://127.0.0.1:PORT' line; learn the port."""

        def port() -> int:
            if self.proc.poll() is not None:
                raise AssertionError(f"worker {self.name} exited: {self.text()}")
            found = re.search(r"serves .* on http://127\.0\.0\.1:(\d+)", self.text())
            return int(found.group(1)) if found else 0

        self.port = wait_for(port, timeout, what=f"worker {self.name} registered")
        return self

    def set_health(self, status: int) -> None:
        """What its ``/ping`` answers from now on (sent to its own port)."""
        response = httpx.post(
            f"http://127.0.0.1:{self.port}/control/health", json={"status": status}, timeout=5
        )
        assert response.status_code == 200, response.text

    def kill9(self) -> None:
        """Gone without a word."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int | None:
        """SIGTERM (SIGKILL after 10 s); the exit code."""
        return stop_process(self.proc)
