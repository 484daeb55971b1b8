"""Helpers shared by the benchmarks in ``bench/``: processes, an emulator and its limits,
workers, percentiles, verdicts.

A benchmark runs as ``python bench/NAME.py``, so this folder is on its import path and it
imports these helpers as ``from _common import ...``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

LISTEN_PREFIX = "podbook emulator listening on "
PODBOOK_WORKER = [sys.executable, "-m", "podbook", "worker"]


# --- figures ---------------------------------------------------------------------------------


def percentile_ms(seconds: list[float], fraction: float) -> float:
    """The ``fraction`` (0..1) percentile of ``seconds``, in ms (nearest rank)."""
    ordered = sorted(seconds)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index] * 1000


@dataclass(frozen=True)
class Timing:
    """Per-request latencies of one sequential loop, in seconds."""

    seconds: list[float]

    @property
    def rate(self) -> float:
        """Requests per second over the whole loop."""
        return len(self.seconds) / sum(self.seconds)

    def percentile(self, fraction: float) -> float:
        """Latency at ``fraction`` (0..1) in ms (nearest rank)."""
        return percentile_ms(self.seconds, fraction)

    @property
    def p50(self) -> float:
        """Median latency in ms."""
        return statistics.median(self.seconds) * 1000

    @property
    def p99(self) -> float:
        """99th percentile latency in ms."""
        return self.percentile(0.99)


def verdict(ok: bool) -> str:
    """``met`` or ``MISSED``: a target's verdict as every benchmark prints it."""
    return "met" if ok else "MISSED"


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (default: this one), MB (10^6 bytes)."""
    return psutil.Process(pid or os.getpid()).memory_info().rss / 1e6


# --- emulator limits -------------------------------------------------------------------------


def account_quota(per_window: int) -> list[str]:
    """``--rate-limit`` arguments: ``per_window`` requests per account per minute, per hour
    and per day (the REST API's quota, raised so a benchmark measures the service, not 429s)."""
    return [f"--rate-limit={window}={per_window}" for window in ("minute", "hour", "day")]


def queue_limits(ops: tuple[str, ...], rate: int, concurrent: int) -> list[str]:
    """``--queue-rate-limit`` arguments: each queue operation of ``ops`` (``run``,
    ``runsync``, ``status``, ...) allowed ``rate`` per endpoint per 10 s, ``concurrent`` at
    once."""
    return [f"--queue-rate-limit={op}={rate}/{concurrent}" for op in ops]


# --- processes -------------------------------------------------------------------------------


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], bool], timeout: float, what: str, every: float = 0.02) -> None:
    """Poll ``check`` until true; raise after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(every)
    raise RuntimeError(f"{what} did not happen within {timeout:.0f} s")


def wait_answering(
    proc: subprocess.Popen[bytes], url: str, log: Path, what: str, timeout: float
) -> None:
    """Poll ``GET url`` until it answers 200; raise with the tail of ``log`` if ``proc`` (the
    server, ``what``) exits first, or after ``timeout`` seconds."""

    def answers() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            return httpx.get(url, timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(answers, timeout, what)


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group of ``proc`` (it was started in its own session), then KILL."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def clean_env(home: Path) -> dict[str, str]:
    """This environment without any RUNPOD_/PODBOOK_ variable, with a HOME of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "PODBOOK_"))}
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def spawn(command: list[str], log: Path, env: dict[str, str], cwd: Path | None = None) -> Any:
    """Start ``command`` in its own session, output to ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )


@dataclass
class Emulator:
    """A running emulator process and a keep-alive HTTP client with the user's key."""

    url: str
    api_key: str
    proc: subprocess.Popen[bytes]
    workdir: Path

    def http(self, key: str | None = None, timeout: float = 60) -> httpx.Client:
        """A keep-alive client with ``key`` (default: the user's)."""
        headers = {"Authorization": f"Bearer {key or self.api_key}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def create_endpoint(self, prefix: str) -> str:
        """A fresh endpoint served by workers that connect on their own; its id."""
        with self.http() as http:
            name = f"{prefix}-{secrets.token_hex(3)}"
            response = http.post("/v2/serverless", json={"name": name})
            response.raise_for_status()
            return str(response.json()["id"])

    def worker_key(self, endpoint_id: str) -> str:
        """A fresh worker key for ``endpoint_id``."""
        with self.http() as http:
            response = http.post(f"/v2/serverless/{endpoint_id}/worker-keys")
            response.raise_for_status()
            return str(response.json()["workerKey"])

    def resident_mb(self) -> float:
        """Resident memory of the emulator and its children, MB (10^6 bytes)."""
        process = psutil.Process(self.proc.pid)
        total = process.memory_info().rss
        total += sum(c.memory_info().rss for c in process.children(recursive=True))
        return total / 1e6


@contextmanager
def emulator(workdir: Path, extra: list[str] | None = None) -> Iterator[Emulator]:
    """A real emulator process on a free loopback port with a temporary database; ``extra``
    are further command-line arguments (``--queue-rate-limit``, ...). Pods are simulated
    (``--runtime none``: the API's cost, not spawned processes) unless ``extra`` names a
    runtime."""
    extra = list(extra or [])
    if "--runtime" not in extra:
        extra += ["--runtime", "none"]
    api_key = "pbk_bench_" + secrets.token_hex(16)
    out_path, log_path = workdir / "emulator.out", workdir / "emulator.log"
    command = [
        sys.executable, "-m", "podbook", "emulator", "--host", "127.0.0.1", "--port", "0",
        "--db", str(workdir / "bench.db"), "--home", str(workdir / "home"),
        "--api-key", api_key, *(extra or []),
    ]  # fmt: skip
    with out_path.open("wb") as out, log_path.open("wb") as err:
        proc = subprocess.Popen(
            command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True
        )
    url: list[str] = []

    def announced() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"emulator exited: {log_path.read_text(errors='replace')[-2000:]}")
        for line in out_path.read_text(errors="replace").splitlines():
            if line.startswith(LISTEN_PREFIX):
                url.append(line[len(LISTEN_PREFIX) :].strip())
                return True
        return False

    try:
        wait_until(announced, 30, "the emulator's listening line")
        yield Emulator(url[0], api_key, proc, workdir)
    finally:
        stop_group(proc)


@contextmanager
def podbook_worker(
    emu: Emulator,
    endpoint_id: str,
    handler: str | Path,
    concurrency: int,
    name: str = "podbook",
    env_extra: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """``podbook worker HANDLER --endpoint ID --concurrency N`` with a worker key (and the
    variables of ``env_extra``, e.g. ``PODBOOK_WORKER_PUSH=0``)."""
    env = clean_env(emu.workdir / f"home-{name}")
    env["RUNPOD_AI_API_KEY"] = emu.worker_key(endpoint_id)
    env.update(env_extra or {})
    log = emu.workdir / f"worker-{name}.log"
    command = [
        *PODBOOK_WORKER, str(handler), "--endpoint", endpoint_id,
        "--url", emu.url, "--concurrency", str(concurrency),
    ]  # fmt: skip
    proc = spawn(command, log, env)
    try:

        def serving() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"podbook worker exited: {log.read_text(errors='replace')}")
            return "serving" in log.read_text(errors="replace")

        wait_until(serving, 30, "the podbook worker's 'serving' line")
        yield proc
    finally:
        stop_group(proc)
