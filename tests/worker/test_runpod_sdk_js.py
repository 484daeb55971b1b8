"""The service's official JS SDK (``runpod-sdk`` from npm, unmodified) against the emulator's
queue API, from node: run and status, runSync for a job that ends within its wait and for one
that outlives it (the SDK then goes on with ``GET /status-sync/{id}?wait=``), cancel,
purgeQueue, health, an HTTP error, and stream.

``js/sdk-check/runpod-sdk-check.mjs`` drives the SDK and prints what each step got back and
which requests it sent. The jobs run on a podbook worker (``podbook.serve``, one slot) whose
handler holds a job with ``input.gate = NAME`` until the script asks this test to open that
gate, so "outlives its wait" and "queued behind a running job" are facts, not timings; the
stream comes from the built-in ``stream-demo`` endpoint.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podbook import Client
from podbook.worker import serve

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "js" / "sdk-check" / "runpod-sdk-check.mjs"
SDK = ROOT / "js" / "node_modules" / "runpod-sdk" / "package.json"
PREFIX = "sdk-check "
RUN_TIMEOUT = 240.0


class Gates:
    """Named events the handler waits on and the script opens."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, threading.Event] = {}

    def get(self, name: str) -> threading.Event:
        """The event of gate ``name`` (made on first use)."""
        with self._lock:
            return self._events.setdefault(name, threading.Event())

    def open_all(self) -> None:
        """Open every gate (the end of the test: no handler stays blocked)."""
        with self._lock:
            for event in self._events.values():
                event.set()


@pytest.fixture
def gated_endpoint(broker: Any) -> Iterator[tuple[str, Gates]]:
    """A fresh endpoint served by a one-slot podbook worker whose jobs wait on gates."""
    gates = Gates()

    def handler(job: dict[str, Any]) -> Any:
        data = job["input"]
        if "gate" in data and not gates.get(data["gate"]).wait(RUN_TIMEOUT):
            return {"error": f"gate {data['gate']} was never opened"}
        return {"echo": data.get("word")}

    with Client(api_key=broker.api_key, url=broker.url) as client:
        worker = serve(handler, endpoint="sdk-js-" + secrets.token_hex(4), client=client)
        try:
            yield worker.endpoint_id, gates
        finally:
            gates.open_all()
            worker.stop()


def run_script(broker: Any, endpoint_id: str, gates: Gates) -> dict[str, Any]:
    """Run the SDK script; ``{step name: its message}``. Opens gates as it asks."""
    node = shutil.which("node")
    if node is None or not SDK.exists():
        pytest.fail("node and js/node_modules/runpod-sdk are needed: run `make setup` first")
    command = [node, str(SCRIPT), f"{broker.url}/v2", broker.api_key, endpoint_id, "stream-demo"]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=SCRIPT.parent
    )
    killer = threading.Timer(RUN_TIMEOUT, proc.kill)
    killer.start()
    steps: dict[str, Any] = {}
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip())
            if not line.startswith(PREFIX):
                continue  # the SDK's own console.log lines ("<id>: IN_PROGRESS")
            try:
                message = json.loads(line[len(PREFIX) :])
            except ValueError:
                continue  # a line cut short: the assertion below shows it
            if "open" in message:
                gates.get(message["open"]).set()
            elif "step" in message:
                steps[message["step"]] = message
            elif "failed" in message:
                steps["failed"] = message
            elif message.get("done"):
                steps["done"] = message
        proc.wait(30)
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read() if proc.stderr is not None else ""
    assert proc.returncode == 0 and "done" in steps, "\n".join([*lines, stderr])
    return steps


def test_the_official_js_sdk_works_unmodified_against_the_emulator(broker, gated_endpoint):
    endpoint_id, gates = gated_endpoint
    steps = run_script(broker, endpoint_id, gates)
    base = f"/v2/{endpoint_id}"

    # run + status (+ the SDK's statusSync, to wait for the end)
    run = steps["run-status"]["result"]
    assert run["queued"]["status"] == "IN_QUEUE" and run["queued"]["id"]
    assert run["status"]["id"] == run["queued"]["id"] and run["status"]["started"] is True
    assert run["status"]["status"] in {"IN_QUEUE", "IN_PROGRESS", "COMPLETED"}
    final = run["final"]
    assert final["status"] == "COMPLETED" and final["output"] == {"echo": "hello"}
    assert final["completed"] is True and final["succeeded"] is True
    assert isinstance(final["executionTime"], int) and isinstance(final["delayTime"], int)

    # runSync of a job that ends within its wait: one /runsync
    fast = steps["runsync-fast"]
    assert fast["result"]["status"] == "COMPLETED" and fast["result"]["succeeded"] is True
    assert fast["result"]["output"] == {"echo": "fast"}
    assert fast["sent"] == [f"POST {base}/runsync?wait=20000"]

    # runSync of a job that outlives its wait: /runsync answers IN_PROGRESS after 2 s, and
    # the SDK goes on with status-sync, which the emulator holds until the job ends
    slow = steps["runsync-outlives-its-wait"]
    assert slow["result"]["status"] == "COMPLETED" and slow["result"]["succeeded"] is True
    assert slow["result"]["output"] == {"echo": "slow"}
    job_id = slow["result"]["id"]
    assert slow["sent"][0] == f"POST {base}/runsync?wait=2000"
    assert slow["sent"][1:] == [f"GET {base}/status-sync/{job_id}?wait=1000"] * (
        len(slow["sent"]) - 1
    )
    assert len(slow["sent"]) >= 2

    # cancel
    cancel = steps["cancel"]["result"]
    assert cancel["cancelled"]["status"] == "CANCELLED"
    assert cancel["status"]["status"] == "CANCELLED" and cancel["status"]["succeeded"] is False

    # purgeQueue drops the two jobs queued behind the running one, which goes on
    purge = steps["purge-queue"]["result"]
    assert purge["healthBefore"]["jobs"]["inQueue"] == 2
    assert purge["healthBefore"]["jobs"]["inProgress"] == 1
    assert purge["purged"] == {"removed": 2, "status": "completed"}
    assert [job["status"] for job in purge["waitingAfter"]] == ["CANCELLED", "CANCELLED"]
    assert purge["busyFinal"]["status"] == "COMPLETED"
    assert purge["busyFinal"]["output"] == {"echo": "busy"}

    # health: hello, fast, slow and busy completed; the cancelled and purged ones did not
    health = steps["health"]["result"]
    assert health["jobs"]["completed"] == 4 and health["jobs"]["failed"] == 0
    assert health["jobs"]["inQueue"] == 0 and health["jobs"]["inProgress"] == 0
    assert health["workers"]["idle"] + health["workers"]["running"] >= 1

    # an HTTP error reaches the caller with the queue's {"error": ...} body
    error = steps["errors"]["result"]
    assert error["status"] == 404 and "not found" in error["data"]["error"]

    # stream: every chunk in order, then the end
    stream = steps["stream"]["result"]
    assert [item["output"]["output_tokens"] for item in stream["items"]] == [1, 2, 3, 4, 5, 6]
    assert all(set(item["metrics"]) >= {"stream_index"} for item in stream["items"])
    assert stream["final"]["status"] == "COMPLETED"

    # every request went to {baseUrl}/{endpoint}/... as the SDK builds it
    for message in steps.values():
        for line in message.get("sent", []):
            assert line.split(" ", 1)[1].startswith((f"{base}/", "/v2/stream-demo/")), line
