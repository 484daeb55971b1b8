"""Security of the emulator process (issue 5 §4): where it listens, who may read its files,
how large a body it takes in, and what a worker key opens.

Everything runs against real emulator processes over HTTP; the body tests stream a real
100 MB body and watch the emulator's resident memory with psutil.
"""

from __future__ import annotations

import os
import secrets
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from emu_helpers import create, gpu_pod
from test_queue_helpers import (
    RawWorker,
    create_endpoint,
    queue_emulator,
    run,
    status,
    wait_for,
    worker_key,
)

from podbook.cli import build_parser
from podbook.emulator.server import is_loopback, remote_bind_refusal

MB = 1_000_000
HUGE = 100 * MB


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """One emulator with fast broker timings (accounts A and B) for this module."""
    return queue_emulator(start_emulator)


def _emulator_command(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "podbook", "emulator", "--port", "0", "--home", str(home), *args]


# --- where it listens -----------------------------------------------------------------------


def test_default_host_is_loopback() -> None:
    assert build_parser().parse_args(["emulator"]).host == "127.0.0.1"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.3.2.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("no-such-host.invalid", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    refusal = remote_bind_refusal(host, allow_remote=False, key_chosen=True)
    assert (refusal is None) is loopback


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        ((), "--allow-remote"),
        (("--api-key", "pbk_chosen_key_123"), "--allow-remote"),
        (("--allow-remote",), "--api-key"),
    ],
)
def test_non_loopback_host_is_refused_in_one_line(
    tmp_path: Path, flags: tuple[str, ...], named: str
) -> None:
    done = subprocess.run(
        _emulator_command(tmp_path / "home", "--host", "0.0.0.0", *flags),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "Traceback" not in done.stderr, done.stderr
    assert "0.0.0.0" in lines[0]
    assert not (tmp_path / "home" / "emulator.json").exists()
    assert "pbk_chosen_key_123" not in done.stderr


def test_remote_bind_with_flag_and_chosen_key_listens(tmp_path: Path) -> None:
    key = "pbk_remote_" + secrets.token_hex(8)
    out = tmp_path / "stdout.txt"
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            _emulator_command(tmp_path / "home", "--host", "0.0.0.0", "--allow-remote")
            + ["--api-key", key],
            stdout=sink,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 60
        url = ""
        while not url and time.monotonic() < deadline:
            assert proc.poll() is None, "the emulator exited"
            for line in out.read_text().splitlines():
                if line.startswith("podbook emulator listening on "):
                    url = line.rsplit(" ", 1)[1]
            time.sleep(0.05)
        assert url.startswith("http://0.0.0.0:"), url
        port = url.rsplit(":", 1)[1]
        local = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{local}/healthz", timeout=10).status_code == 200
        assert httpx.get(f"{local}/v2/pods", timeout=10).status_code == 401  # key still needed
        assert key not in out.read_text()  # a chosen key is never printed
    finally:
        proc.terminate()
        proc.wait(timeout=20)


# --- files ------------------------------------------------------------------------------------


def _modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir() if p.is_file()}


def test_state_files_are_owner_only_even_with_a_permissive_umask(tmp_path: Path) -> None:
    """Under ``umask 000`` every file the emulator writes (database, WAL and SHM side files,
    key, emulator.json) is still 0600, and a home it creates is 0700."""
    home = tmp_path / "home"
    out = tmp_path / "stdout.txt"
    command = " ".join(_emulator_command(home))
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            ["sh", "-c", f"umask 000 && exec {command}"],
            stdout=sink,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 60
        while "listening on" not in out.read_text() and time.monotonic() < deadline:
            assert proc.poll() is None, "the emulator exited"
            time.sleep(0.05)
        url = out.read_text().splitlines()[0].rsplit(" ", 1)[1]
        key = (home / "emulator.key").read_text().strip()
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as http:
            create(http, gpu_pod(name="perm-check", env={"JUPYTER_PASSWORD": "not-for-others"}))
            assert http.post("/v2/echo/run", json={"input": {"a": 1}}).status_code == 200
        modes = _modes(home)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert {"emulator.db", "emulator.db-wal", "emulator.key", "emulator.json"} <= set(modes)
    loose = {name: oct(mode) for name, mode in modes.items() if mode & 0o077}
    assert not loose, f"files readable by others: {loose}"
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert key not in out.read_text().split("\n", 1)[0]


# --- request bodies ---------------------------------------------------------------------------


def _raw_request_head(emu: Any, path: str, length: int) -> bytes:
    """Send only the head of a request declaring ``length`` body bytes; return the answer."""
    with socket.create_connection(("127.0.0.1", emu.port), timeout=30) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {emu.api_key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n".encode()
        )
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


@pytest.mark.parametrize(
    ("path", "length", "content_type"),
    [
        ("/v2/echo/run", 10 * MB + 1, "application/json"),
        ("/v2/echo/runsync", 20 * MB + 1, "application/json"),
        ("/v2/pods", MB + 1, "application/problem+json"),
        ("/v1/containerregistryauth", MB + 1, "application/problem+json"),
    ],
)
def test_declared_oversize_body_is_refused_before_any_of_it_is_sent(
    emu: Any, path: str, length: int, content_type: str
) -> None:
    answer = _raw_request_head(emu, path, length).decode()
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 413 "), answer[:300]
    assert f"content-type: {content_type}" in head.lower()
    assert "connection: close" in head.lower()
    assert f"{length:,} bytes" in body and "\n" not in body.strip()


class RssSampler:
    """Samples a process's resident memory in a thread; ``peak_growth`` over the start."""

    def __init__(self, pid: int, interval: float = 0.002) -> None:
        self._process = psutil.Process(pid)
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._start = self._peak = 0

    def _run(self) -> None:
        while not self._stop.is_set():
            self._peak = max(self._peak, self._process.memory_info().rss)
            self._stop.wait(self._interval)

    def __enter__(self) -> RssSampler:
        self._start = self._peak = self._process.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    @property
    def peak_growth(self) -> int:
        """Highest resident size seen, less the size at the start (bytes)."""
        return self._peak - self._start


def _stream(total: int, chunk: int = MB) -> Iterator[bytes]:
    block = b" " * chunk
    for _ in range(total // chunk):
        yield block


@pytest.mark.parametrize(
    ("path", "error_key"),
    [("/v2/{ep}/runsync", "error"), ("/v2/{ep}/run", "error"), ("/v2/pods", "detail")],
)
def test_streamed_100mb_body_is_413_without_growing_memory(
    emu: Any, http: httpx.Client, path: str, error_key: str
) -> None:
    """A chunked 100 MB body (no Content-Length) is counted as it arrives and cut off at the
    route's limit: 413, and the emulator's resident memory does not grow by the body."""
    endpoint = create_endpoint(http, "big-" + secrets.token_hex(3))
    with RssSampler(emu.proc.pid) as rss:
        started = time.perf_counter()
        response = http.post(path.format(ep=endpoint), content=_stream(HUGE), timeout=120)
        elapsed = time.perf_counter() - started
    print(
        f"\n{path}: 100 MB chunked body -> {response.status_code} in {elapsed:.2f} s, "
        f"emulator RSS peak growth {rss.peak_growth / MB:.1f} MB"
    )
    assert response.status_code == 413, response.text
    assert "too large" in response.json()[error_key]
    # The route may hold up to its own limit (20 MB for /runsync) while it reads, never more.
    assert rss.peak_growth < 40 * MB, f"RSS grew by {rss.peak_growth / MB:.0f} MB"
    assert http.get("/healthz").status_code == 200  # still serving


def test_bodies_within_their_route_limit_pass(emu: Any, http: httpx.Client) -> None:
    endpoint = create_endpoint(http, "fits-" + secrets.token_hex(3))
    # 2 MB is over the REST limit but within /run's 10 MB.
    big_input = {"input": {"blob": "x" * (2 * MB)}}
    assert http.post(f"/v2/{endpoint}/run", json=big_input).status_code == 200
    assert http.post("/v2/pods", json=big_input).status_code == 413
    # A chunked body under the limit is taken whole.
    pieces = [b'{"input": ', b'{"n": 1}', b"}"]
    response = http.post(f"/v2/{endpoint}/run", content=iter(pieces))
    assert response.status_code == 200, response.text


# --- worker keys ------------------------------------------------------------------------------

WORKER_CALLS = [
    ("GET", "/v2/{ep}/job-take/w1?&job_in_progress=0"),
    ("GET", "/v2/{ep}/job-take-batch/w1?&batch_size=2"),
    ("GET", "/v2/{ep}/job-stop/w1?"),
    ("POST", "/v2/{ep}/job-done/w1/{job}?&isStream=false"),
    ("POST", "/v2/{ep}/job-stream/w1/{job}?"),
    ("GET", "/v2/{ep}/ping/w1"),
]


def _worker_call(
    emu: Any, method: str, path: str, key: str | None, endpoint: str, job: str
) -> httpx.Response:
    headers = {"Authorization": key} if key else {}
    body = b'{"output": {"stolen": true}}' if method == "POST" else None
    return httpx.request(
        method,
        emu.url + path.format(ep=endpoint, job=job),
        headers=headers,
        content=body,
        timeout=30,
    )


def test_worker_routes_need_a_worker_key(emu: Any, http: httpx.Client) -> None:
    endpoint = create_endpoint(http, "wk-" + secrets.token_hex(3))
    job = run(http, endpoint, {"input": {"x": 1}})
    for key in (None, emu.api_key, f"Bearer {emu.api_key}", "wk_made_up"):
        for method, path in WORKER_CALLS:
            response = _worker_call(emu, method, path, key, endpoint, job)
            assert response.status_code == 401, (key and key[:6], path, response.text)
            message = response.json()["error"]
            assert "\n" not in message and emu.api_key not in message
    assert status(http, endpoint, job)["status"] == "IN_QUEUE"


def test_a_worker_of_account_b_cannot_take_or_touch_account_a_jobs(
    emu: Any, http: httpx.Client
) -> None:
    name = "shared-" + secrets.token_hex(3)
    a_endpoint = create_endpoint(http, name)
    a_job = run(http, a_endpoint, {"input": {"secret": "a-only"}})
    with emu.http(emu.other_key) as other:
        b_elsewhere = create_endpoint(other, "b-" + secrets.token_hex(3))
        b_key = worker_key(other, b_elsewhere)
        # B's worker key on A's endpoint name (B has no such endpoint): 404, never 403.
        for method, path in WORKER_CALLS:
            response = _worker_call(emu, method, path, b_key, a_endpoint, a_job)
            assert response.status_code == 404, (path, response.status_code, response.text)
            assert "a-only" not in response.text
        # B makes an endpoint of the same name: its worker serves B's queue, not A's.
        create_endpoint(other, name)
        b_same = worker_key(other, name)
        b_worker = RawWorker(emu.url, name, b_same, "w-b")
        try:
            assert b_worker.take().status_code == 204
            assert b_worker.post_result(a_job, {"output": "forged"}).status_code == 404
            assert b_worker.post_chunk(a_job, "forged").status_code == 404
            assert b_worker.ping(job_id=a_job).status_code == 200  # its own heartbeat only
            assert other.get(f"/v2/{name}/status/{a_job}").status_code == 404
        finally:
            b_worker.close()
    assert status(http, a_endpoint, a_job)["status"] == "IN_QUEUE"
    a_worker = RawWorker(emu.url, a_endpoint, worker_key(http, a_endpoint), "w-a")
    try:
        taken = a_worker.take_job()
        assert taken["id"] == a_job and taken["input"] == {"secret": "a-only"}
        assert a_worker.post_result(a_job, {"output": "real"}).status_code == 200
    finally:
        a_worker.close()
    assert status(http, a_endpoint, a_job)["output"] == "real"


def test_an_endpoint_cannot_borrow_another_accounts_registry_or_volume(
    emu: Any, http: httpx.Client
) -> None:
    """B naming A's registry credential or network volume gets what a made-up id gets: 404."""
    registry = http.post(
        "/v2/registries", json={"name": "a-reg", "username": "a", "password": "a-pw-123456"}
    ).json()["id"]
    volume = http.post(
        "/v2/network-volumes", json={"name": "a-vol", "size": 10, "dataCenter": "EU-RO-1"}
    ).json()["id"]
    base = {"name": "b-ep-" + secrets.token_hex(3), "image": "b/img:1"}
    with emu.http(emu.other_key) as other:
        b_endpoint = create_endpoint(other, "b-ep-" + secrets.token_hex(3))
        for field, real, fake in (
            ("registry", registry, "reg_000000000000"),
            ("networkVolumes", [volume], ["vol-made-up"]),
        ):
            for value in (real, fake):
                made = other.post("/v2/serverless", json={**base, field: value})
                changed = other.patch(f"/v2/serverless/{b_endpoint}", json={field: value})
                for response in (made, changed):
                    assert response.status_code == 404, response.text
                    assert response.headers["content-type"] == "application/problem+json"


def test_the_client_reports_a_413_in_one_line(client: Any) -> None:
    from podbook.errors import APIError

    with pytest.raises(APIError) as refused:
        # a 2 MB name: env and args over what a process can start with are refused before
        # sending (api/container.py), a long name only by the body limit
        client.templates.create(name="x" * (2 * MB), image="me/img:1")
    assert refused.value.status == 413
    text = str(refused.value)
    assert text.startswith("413 Content Too Large: request body is too large") and "\n" not in text


HANDLER = """
import os


def handler(job):
    return {"by": os.environ["PROBE_WHO"], "n": job["input"]["n"]}
"""


def _start_worker(emu: Any, tmp_path: Path, endpoint: str, key: str, who: str) -> Any:
    """A real ``podbook worker`` process serving ``endpoint`` with ``key``; waits for it."""
    handler = tmp_path / "who_handler.py"
    handler.write_text(HANDLER)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "PODBOOK_"))}
    env.update(RUNPOD_AI_API_KEY=key, PROBE_WHO=who, PYTHONUNBUFFERED="1")
    log = tmp_path / f"worker-{who}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "podbook", "worker", f"{handler}:handler"]
            + ["--endpoint", endpoint, "--url", emu.url],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    deadline = time.monotonic() + 60
    while "serving" not in log.read_text(errors="replace"):
        assert proc.poll() is None, log.read_text(errors="replace")
        assert time.monotonic() < deadline, log.read_text(errors="replace")
        time.sleep(0.05)
    return proc


def test_real_workers_of_two_accounts_only_run_their_own_accounts_jobs(
    emu: Any, http: httpx.Client, tmp_path: Path
) -> None:
    """Both accounts have an endpoint of the same name, each served by a real ``podbook
    worker``. B's worker, started first and idle, never runs one of A's queued jobs."""
    name = "same-" + secrets.token_hex(3)
    create_endpoint(http, name)
    procs = []
    with emu.http(emu.other_key) as other:
        create_endpoint(other, name)
        try:
            procs.append(_start_worker(emu, tmp_path, name, worker_key(other, name), "B"))
            a_jobs = [run(http, name, {"input": {"n": n}}) for n in range(5)]
            b_jobs = [run(other, name, {"input": {"n": n}}) for n in range(5)]
            for job in b_jobs:
                done = wait_for(lambda job=job: _finished(other, name, job), 60)
                assert done["output"]["by"] == "B"
            time.sleep(1)  # B's worker is idle now, with A's jobs still waiting
            assert [status(http, name, job)["status"] for job in a_jobs] == ["IN_QUEUE"] * 5
            procs.append(_start_worker(emu, tmp_path, name, worker_key(http, name), "A"))
            outputs = [wait_for(lambda j=j: _finished(http, name, j), 60)["output"] for j in a_jobs]
            assert outputs == [{"by": "A", "n": n} for n in range(5)]
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=30)


def _finished(http: httpx.Client, endpoint: str, job: str) -> dict[str, Any] | None:
    record = status(http, endpoint, job)
    return record if record["status"] in ("COMPLETED", "FAILED") else None
