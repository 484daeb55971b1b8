"""The push path (``docs/queue-push.md``): real worker processes on a real emulator's
``/v2/{endpoint}/ws/{worker_id}`` socket, and the HTTP protocol when a broker has none."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .conftest import SAMPLES, WORKER_COMMAND, Queue, WorkerProcess, clean_env, worker_key

PUSHING = "jobs come over the push socket"


def test_jobs_progress_results_and_chunks_go_over_the_push_socket(endpoint, start_worker):
    worker = start_worker(endpoint, "sample_handlers.py:handler")
    record = endpoint.runsync({"prompt": "hi"})
    assert record["status"] == "COMPLETED"
    assert record["output"]["got"] == {"prompt": "hi"}
    assert PUSHING in worker.text()
    assert "using HTTP" not in worker.text()

    streamer = start_worker(endpoint, "sample_handlers.py:tokens")
    worker.terminate()
    job_id = endpoint.run({"n": 50})
    items, status = endpoint.stream(job_id)
    assert status == "COMPLETED"
    assert [item["output"] for item in items] == [f"tok{i}" for i in range(50)]
    assert endpoint.status(job_id)["output"] == [f"tok{i}" for i in range(50)]
    assert PUSHING in streamer.text()


def test_chunks_over_1_mb_pushed_over_the_socket_are_split_as_over_http(endpoint, start_worker):
    worker = start_worker(endpoint, "sample_handlers.py:big_pieces")
    job_id = endpoint.run({"size": 600_000, "count": 2})  # two 1.2 MB chunks, one frame each
    items, status = endpoint.stream(job_id)
    assert status == "COMPLETED"
    pieces = [item["output"] for item in items]
    assert all(len(piece.encode()) <= 1_000_000 for piece in pieces)
    assert "".join(pieces) == "é" * 1_200_000 and len(pieces) == 4
    assert PUSHING in worker.text()


def test_progress_shows_while_a_pushed_job_runs(endpoint, start_worker):
    start_worker(endpoint, "sample_handlers.py:handler")
    job_id = endpoint.run({"hold": 1.0})
    deadline = time.monotonic() + 10
    while (record := endpoint.status(job_id))["status"] != "IN_PROGRESS" or not record.get(
        "output"
    ):
        assert time.monotonic() < deadline, record
        time.sleep(0.02)
    assert record["output"] == {"step": 1, "of": 2}
    assert endpoint.wait(job_id)["status"] == "COMPLETED"


def test_a_cancel_reaches_a_pushed_job_at_once(endpoint, start_worker, tmp_path):
    worker = start_worker(endpoint, "sample_handlers.py:async_handler")
    marker = str(tmp_path / "slow")
    job_id = endpoint.run({"sleep": 3, "marker": marker})
    endpoint.wait_status(job_id, "IN_PROGRESS")
    cancelled_at = time.monotonic()
    assert endpoint.cancel(job_id)["status"] == "CANCELLED"
    worker.wait_for_line(f"job {job_id} stopped", timeout=5)
    assert time.monotonic() - cancelled_at < 1.0
    assert endpoint.runsync({"sleep": 0})["status"] == "COMPLETED"  # the slot is free again
    assert not Path(marker + ".done").exists()


def test_a_worker_killed_mid_job_on_its_socket_times_out_and_the_retry_runs_it(
    start_emulator, tmp_path
):
    emulator = start_emulator(extra_args=("--queue-time-scale", "0.1"))
    with emulator.http() as http:
        name = "push-kill-" + secrets.token_hex(3)
        assert http.post("/v2/serverless", json={"name": name}).status_code == 201
        queue = Queue(http, name)
        key = worker_key(emulator, name)
        doomed = _spawn_worker(emulator.url, name, key, tmp_path, "doomed", "async_handler")
        doomed.wait_for_line(PUSHING)
        response = http.post(
            f"/v2/{name}/run",
            json={"input": {"sleep": 30}, "policy": {"executionTimeout": 20_000}},
        )
        job_id = response.json()["id"]
        assert queue.wait_status(job_id, "IN_PROGRESS")["status"] == "IN_PROGRESS"
        doomed.proc.send_signal(signal.SIGKILL)
        doomed.proc.wait(10)
        # its executionTimeout (20 s, scaled by 0.1) ends it, as on the HTTP protocol
        record = queue.wait(job_id, timeout=15)
        assert record["status"] == "TIMED_OUT", record
        assert record["workerId"] == "push-doomed"
        assert http.post(f"/v2/{name}/retry/{job_id}").json()["status"] == "IN_QUEUE"
        fresh = _spawn_worker(emulator.url, name, key, tmp_path, "fresh", "async_handler")
        try:
            # the retried job sleeps 30 s again: cancel it once the new worker runs it
            assert queue.wait_status(job_id, "IN_PROGRESS")["status"] == "IN_PROGRESS"
            assert queue.status(job_id)["workerId"] == "push-fresh"
            assert queue.cancel(job_id)["status"] == "CANCELLED"
            fresh.wait_for_line(f"job {job_id} stopped", timeout=5)
        finally:
            assert fresh.terminate() == 0


def test_a_job_running_while_the_emulator_restarts_ends_once_with_its_result(
    start_emulator, tmp_path
):
    emulator = start_emulator()
    http = emulator.http()
    name = "push-restart-" + secrets.token_hex(3)
    assert http.post("/v2/serverless", json={"name": name}).status_code == 201
    queue = Queue(http, name)
    worker = _spawn_worker(emulator.url, name, worker_key(emulator, name), tmp_path, "survivor")
    try:
        worker.wait_for_line(PUSHING)
        job_id = queue.run({"hold": 2.0})
        queue.wait_status(job_id, "IN_PROGRESS")
        emulator.restart()  # the socket drops with the job running on the worker
        http.close()
        queue.http = http = emulator.http()
        record = queue.wait(job_id, timeout=30)
        assert record["status"] == "COMPLETED", record
        assert record["workerId"] == "push-survivor"
        assert record["output"]["got"] == {"hold": 2.0}
        assert queue.health()["jobs"]["retried"] == 0
        assert queue.runsync({"hold": 0}, wait_ms=30000)["status"] == "COMPLETED"
        assert worker.text().count(PUSHING) >= 2  # connected again after the restart
    finally:
        assert worker.terminate() == 0
        http.close()


def test_a_broker_that_refuses_the_socket_gets_the_http_protocol(endpoint, broker, tmp_path):
    with refusing_proxy(broker.url) as url:
        worker = _spawn_worker(url, endpoint.id, worker_key(broker, endpoint.id), tmp_path, "http")
        try:
            worker.wait_for_line("serving")
            record = endpoint.runsync({"prompt": "via http"})
            assert record["status"] == "COMPLETED", record
            assert record["output"]["got"] == {"prompt": "via http"}
            assert "the broker has no push socket (404); using HTTP" in worker.text()
            assert PUSHING not in worker.text()
        finally:
            assert worker.terminate() == 0


def test_push_can_be_turned_off(endpoint, broker, tmp_path):
    worker = _spawn_worker(
        broker.url, endpoint.id, worker_key(broker, endpoint.id), tmp_path, "off", push="0"
    )
    try:
        worker.wait_for_line("serving")
        assert endpoint.runsync({"prompt": "off"})["status"] == "COMPLETED"
        assert PUSHING not in worker.text()
    finally:
        assert worker.terminate() == 0


# --- helpers ---------------------------------------------------------------------------------


def _spawn_worker(
    url: str,
    endpoint_id: str,
    key: str,
    tmp_path: Path,
    name: str,
    fn: str = "handler",
    push: str | None = None,
) -> WorkerProcess:
    """``podbook worker sample_handlers.py:FN`` with worker id ``push-NAME``."""
    env = clean_env(tmp_path)
    env["RUNPOD_AI_API_KEY"] = key
    env["RUNPOD_POD_ID"] = f"push-{name}"
    if push is not None:
        env["PODBOOK_WORKER_PUSH"] = push
    log = tmp_path / f"push-{name}.log"
    command = [*WORKER_COMMAND, f"{SAMPLES}:{fn}", "--endpoint", endpoint_id, "--url", url]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    worker = WorkerProcess(proc, log)
    worker.wait_for_line("serving")
    return worker


@contextlib.contextmanager
def refusing_proxy(target: str) -> Iterator[str]:
    """A loopback TCP proxy to ``target`` that answers every ``/ws/`` request 404 (as the
    real service and older emulators do) and passes everything else through."""
    host, port = target.rsplit("//", 1)[1].split(":")
    ready = threading.Event()
    state: dict[str, Any] = {}

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await reader.readline()
        parts = first.split(b" ")
        if len(parts) >= 2 and b"/ws/" in parts[1]:
            writer.write(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            await writer.drain()
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        up_writer.write(first)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def main() -> None:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        state["port"] = server.sockets[0].getsockname()[1]
        state["stop"] = asyncio.Event()
        state["loop"] = asyncio.get_running_loop()
        ready.set()
        async with server:
            await state["stop"].wait()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield f"http://127.0.0.1:{state['port']}"
    finally:
        state["loop"].call_soon_threadsafe(state["stop"].set)
        thread.join(5)
