"""Endpoints whose workers the emulator starts from their own start command (``args``), as the
service does: handler files written for the service serve jobs with no worker started by the
test, from zero (a cold start, inside the job's ``delayTime``), up to ``workers.max``, back to
zero after ``idleTimeout``, ``workers.min`` kept warm, a crashed worker's job retried and the
worker replaced without a tight loop."""

from __future__ import annotations

import itertools
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.timeout(180)

NAMES = itertools.count()

SDK_HANDLER = """\
import os, time
import runpod

def handler(job):
    data = job["input"]
    flag = data.get("crash_once")
    if flag and not os.path.exists(flag):  # the first worker to run it dies mid-job
        open(flag, "w").close()
        os.kill(os.getpid(), 9)
    time.sleep(data.get("sleep", 0))
    if data.get("runs"):  # one line per run of this job
        with open(data["runs"], "a") as runs:
            print(os.environ["RUNPOD_POD_ID"], file=runs)
    return {"echo": data.get("x"), "worker": os.environ["RUNPOD_POD_ID"]}

runpod.serverless.start({"handler": handler})
"""

PODBOOK_HANDLER = """\
import os

def handler(job):
    return {"echo": job["input"].get("x"), "worker": os.environ["RUNPOD_POD_ID"]}
"""


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """An emulator of the module (simulated pods: only the serverless workers run)."""
    return start_emulator()


@pytest.fixture
def http(emu: Any) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emu.url, headers=emu.headers(None), timeout=60) as client:
        yield client


def endpoint(http: httpx.Client, args: str, **workers: int) -> str:
    """Create a queue endpoint with the start command ``args``; its id."""
    name = f"scaled-{next(NAMES)}"  # a name of its own: its id
    body = {"name": name, "args": args, "workers": {"min": 0, "max": 3, **workers}}
    created = http.post("/v2/serverless", json=body)
    assert created.status_code in (200, 201), created.text
    return str(created.json()["id"])


def health(http: httpx.Client, endpoint_id: str) -> dict[str, int]:
    return http.get(f"/v2/{endpoint_id}/health").json()["workers"]


def alive(http: httpx.Client, endpoint_id: str) -> int:
    counts = health(http, endpoint_id)
    return counts["idle"] + counts["running"] + counts["initializing"]


def wait_until(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


def handler_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "handler.py"
    path.write_text(text)
    return path


def cold_starts(emu: Any) -> list[float]:
    """The cold starts the emulator logged, in seconds."""
    text = Path(emu.log_path).read_text(errors="replace")
    return [float(s) for s in re.findall(r"ready ([0-9.]+) s after its start \(cold start\)", text)]


def test_an_unmodified_runpod_handler_serves_from_zero_and_scales_back_to_zero(
    http: httpx.Client, emu: Any, tmp_path: Path
) -> None:
    handler = handler_file(tmp_path, SDK_HANDLER)
    endpoint_id = endpoint(http, f"{sys.executable} {handler}", idleTimeout=2)
    try:
        assert alive(http, endpoint_id) == 0
        before = len(cold_starts(emu))
        done = http.post(f"/v2/{endpoint_id}/runsync", json={"input": {"x": 1}}).json()
        assert done["status"] == "COMPLETED" and done["output"]["echo"] == 1, done
        cold = wait_until(lambda: cold_starts(emu)[before:], 10, "the cold start logged")
        assert done["delayTime"] >= cold[0] * 1000 * 0.9  # the job waited for its worker
        wait_until(lambda: alive(http, endpoint_id) == 0, 30, "scale to zero")
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")


def test_a_podbook_worker_start_command_serves_jobs(http: httpx.Client, tmp_path: Path) -> None:
    handler = handler_file(tmp_path, PODBOOK_HANDLER)
    endpoint_id = endpoint(http, f"{sys.executable} -m podbook worker {handler}", idleTimeout=2)
    try:
        done = http.post(f"/v2/{endpoint_id}/runsync", json={"input": {"x": "hi"}}).json()
        assert done["status"] == "COMPLETED" and done["output"]["echo"] == "hi", done
        assert done["output"]["worker"] == done["workerId"]
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")


def test_thirty_jobs_never_take_more_than_max_workers(http: httpx.Client, tmp_path: Path) -> None:
    handler = handler_file(tmp_path, SDK_HANDLER)
    endpoint_id = endpoint(http, f"{sys.executable} {handler}", max=3, idleTimeout=2)
    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        with httpx.Client(base_url=str(http.base_url), headers=http.headers) as watcher:
            while not stop.is_set():
                counts = watcher.get(f"/v2/{endpoint_id}/health").json()["workers"]
                seen.append(counts["idle"] + counts["running"] + counts["initializing"])
                time.sleep(0.1)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        ids = [
            http.post(f"/v2/{endpoint_id}/run", json={"input": {"x": i, "sleep": 0.3}}).json()["id"]
            for i in range(30)
        ]

        def all_done() -> bool:
            return all(
                http.get(f"/v2/{endpoint_id}/status/{job}").json()["status"] == "COMPLETED"
                for job in ids
            )

        wait_until(all_done, 120, "30 jobs done")
        workers = {http.get(f"/v2/{endpoint_id}/status/{j}").json()["workerId"] for j in ids}
        assert len(workers) > 1  # the load scaled it beyond one worker...
        assert max(seen) <= 3  # ...and never beyond workers.max
        wait_until(lambda: alive(http, endpoint_id) == 0, 30, "scale to zero")
    finally:
        stop.set()
        thread.join(5)
        http.delete(f"/v2/serverless/{endpoint_id}")


def test_workers_min_stay_warm(http: httpx.Client, tmp_path: Path) -> None:
    handler = handler_file(tmp_path, PODBOOK_HANDLER)
    args = f"{sys.executable} -m podbook worker {handler}"
    endpoint_id = endpoint(http, args, min=1, idleTimeout=1)
    try:
        wait_until(lambda: health(http, endpoint_id)["idle"] == 1, 30, "one warm worker")
        time.sleep(3)  # three idle timeouts later, the warm worker is still the only one
        assert health(http, endpoint_id) | {"throttled": 0} == {
            "idle": 1,
            "running": 0,
            "initializing": 0,
            "throttled": 0,
        }
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")


def test_a_worker_killed_mid_job_is_replaced_and_its_job_retried(
    http: httpx.Client, emu: Any, tmp_path: Path
) -> None:
    handler = handler_file(tmp_path, SDK_HANDLER)
    endpoint_id = endpoint(http, f"{sys.executable} {handler}", max=1, idleTimeout=2)
    flag = tmp_path / "crashed"
    try:
        job = http.post(f"/v2/{endpoint_id}/run", json={"input": {"x": 7, "crash_once": str(flag)}})
        job_id = job.json()["id"]

        def finished() -> dict[str, Any] | None:
            status = http.get(f"/v2/{endpoint_id}/status/{job_id}").json()
            return status if status["status"] == "COMPLETED" else None

        done = wait_until(finished, 60, "the retried job done")
        assert flag.exists() and done["output"]["echo"] == 7
        assert http.get(f"/v2/{endpoint_id}/health").json()["jobs"]["retried"] == 1
        log = Path(emu.log_path).read_text(errors="replace")
        assert f"endpoint {endpoint_id}: worker" in log and "its jobs go back to the queue" in log
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")


def test_a_start_command_that_fails_is_restarted_with_back_off(
    http: httpx.Client, emu: Any
) -> None:
    endpoint_id = endpoint(http, "exit 3", idleTimeout=2)
    try:
        http.post(f"/v2/{endpoint_id}/run", json={"input": {}})
        time.sleep(4)
        log = Path(emu.log_path).read_text(errors="replace")
        starts = log.count(f"endpoint {endpoint_id}: worker ")
        # 0.5 + 1 + 2 s of back-off in 4 s: a handful of starts, never a tight loop
        assert 2 <= log.count("exited with 3") <= 5, starts
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")


def test_an_update_rolls_workers_and_both_releases_jobs_finish(
    http: httpx.Client, tmp_path: Path
) -> None:
    handler = handler_file(tmp_path, SDK_HANDLER)
    endpoint_id = endpoint(http, f"{sys.executable} {handler}", idleTimeout=2)
    try:
        old = http.post(f"/v2/{endpoint_id}/run", json={"input": {"x": "old", "sleep": 3}})
        old_id = old.json()["id"]

        def running_on() -> str | None:
            status = http.get(f"/v2/{endpoint_id}/status/{old_id}").json()
            return status.get("workerId") if status["status"] == "IN_PROGRESS" else None

        first = wait_until(running_on, 30, "the first job running")
        patched = http.patch(f"/v2/serverless/{endpoint_id}", json={"env": {"RELEASE": "2"}})
        assert patched.status_code == 200, patched.text
        new = http.post(f"/v2/{endpoint_id}/runsync", json={"input": {"x": "new"}}).json()
        assert new["status"] == "COMPLETED" and new["workerId"] != first  # a new worker
        done = wait_until(
            lambda: (
                (s := http.get(f"/v2/{endpoint_id}/status/{old_id}").json())["status"]
                == "COMPLETED"
                and s
            ),
            30,
            "the old release's job done",
        )
        assert done["workerId"] == first and done["output"]["echo"] == "old"
        releases = http.get(f"/v2/serverless/{endpoint_id}/releases").json()
        assert releases["endpointVersion"] == 2
        listed = http.get(f"/v2/serverless/{endpoint_id}/workers").json()["workers"]
        wait_until(
            lambda: first not in {w["id"] for w in http.get(
                f"/v2/serverless/{endpoint_id}/workers").json()["workers"]},
            30,
            "the old release's worker gone",
        )  # fmt: skip
        assert listed
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")


def billed(http: httpx.Client, endpoint_id: str) -> float:
    """What the endpoint has cost so far (USD)."""
    answer = http.get(
        "/v2/billing/serverless", params={"serverlessId": endpoint_id, "bucketSize": "day"}
    )
    assert answer.status_code == 200, answer.text
    return float(answer.json()["metadata"]["totals"]["totalAmount"])


def test_billing_follows_worker_lifetimes_so_a_short_idle_timeout_costs_less(
    http: httpx.Client, tmp_path: Path
) -> None:
    handler = handler_file(tmp_path, PODBOOK_HANDLER)
    args = f"{sys.executable} -m podbook worker {handler}"
    short, long = endpoint(http, args, idleTimeout=1), endpoint(http, args, idleTimeout=60)
    try:
        for endpoint_id in (short, long):  # the same load: one job each
            done = http.post(f"/v2/{endpoint_id}/runsync", json={"input": {"x": 1}}).json()
            assert done["status"] == "COMPLETED", done
        wait_until(lambda: alive(http, short) == 0, 30, "the short idle timeout's scale-down")

        def settled() -> float | None:  # a stopped worker costs nothing more
            before = billed(http, short)
            time.sleep(1)
            return before if billed(http, short) == before > 0 else None

        ended = wait_until(settled, 30, "the short idle timeout's bill settled")
        # the idle worker still bills, as on the service: its bill goes past the stopped one's
        # (a loaded machine may have given the short one the slower cold start)
        wait_until(lambda: billed(http, long) > ended, 30, "the idle worker's bill growing past")
    finally:
        for endpoint_id in (short, long):
            http.delete(f"/v2/serverless/{endpoint_id}")


def test_flashboot_freezes_an_idle_worker_and_resumes_it_for_the_next_cold_start(
    http: httpx.Client, emu: Any, tmp_path: Path
) -> None:
    handler = handler_file(tmp_path, SDK_HANDLER)
    body = {
        "name": f"scaled-{next(NAMES)}",
        "args": f"{sys.executable} {handler}",
        "flashboot": "FLASHBOOT",
        "workers": {"min": 0, "max": 2, "idleTimeout": 1},
    }
    endpoint_id = http.post("/v2/serverless", json=body).json()["id"]
    try:
        first = http.post(f"/v2/{endpoint_id}/runsync", json={"input": {"x": 1}}).json()
        assert first["status"] == "COMPLETED", first
        log = Path(emu.log_path)
        frozen = f"worker {first['workerId']} frozen by FlashBoot"
        wait_until(lambda: frozen in log.read_text(), 30, "the idle worker frozen")
        assert alive(http, endpoint_id) == 0  # scaled to zero as far as anyone can see
        second = http.post(f"/v2/{endpoint_id}/runsync", json={"input": {"x": 2}}).json()
        assert second["status"] == "COMPLETED" and second["workerId"] == first["workerId"]
        said = rf"{first['workerId']} ready ([0-9.]+) s after its start"
        warm = wait_until(
            lambda: re.search(said + r" \(resumed", log.read_text()), 10, "the resume logged"
        )
        cold = re.search(said + r" \(cold", log.read_text())
        assert cold and float(warm[1]) < float(cold[1])  # no imports, no load again
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")


STUBBORN_WORKER = """\
import json, os, signal, sys, urllib.request

signal.signal(signal.SIGTERM, signal.SIG_IGN)  # keeps asking for jobs while it is stopped
me, key = os.environ["RUNPOD_POD_ID"], os.environ["RUNPOD_AI_API_KEY"]
take = os.environ["RUNPOD_WEBHOOK_GET_JOB"].replace("$ID", me) + "&job_in_progress=0"
done = os.environ["RUNPOD_WEBHOOK_POST_OUTPUT"].replace("$RUNPOD_POD_ID", me)
while True:
    answer = urllib.request.urlopen(urllib.request.Request(take, headers={"Authorization": key}))
    if answer.status != 200:
        continue
    job = json.load(answer)
    with open(job["input"]["runs"], "a") as runs:
        print(me, file=runs)
    body = json.dumps({"output": {"worker": me}}).encode()
    request = urllib.request.Request(
        done.replace("$ID", job["id"]), data=body, headers={"Authorization": key}
    )
    urllib.request.urlopen(request).read()
"""


def test_a_job_sent_while_a_worker_stops_runs_once_on_another(
    http: httpx.Client, emu: Any, tmp_path: Path
) -> None:
    # A worker that takes its time to end after SIGTERM, and asks for jobs meanwhile: it
    # must get none (else a job runs on it and again on another once it is killed).
    handler = handler_file(tmp_path, STUBBORN_WORKER)
    endpoint_id = endpoint(http, f"{sys.executable} {handler}", idleTimeout=1)
    runs = tmp_path / "runs.txt"
    try:
        job = {"input": {"runs": str(runs)}}
        first = http.post(f"/v2/{endpoint_id}/runsync", json=job).json()
        assert first["status"] == "COMPLETED", first
        stopping = f"worker {first['workerId']} stopping"
        wait_until(lambda: stopping in Path(emu.log_path).read_text(), 30, "the scale-down")
        second = http.post(f"/v2/{endpoint_id}/runsync", json=job).json()
        assert second["status"] == "COMPLETED" and second["workerId"] != first["workerId"]
        time.sleep(7)  # past the stopped worker's grace: a second run would have happened
        assert runs.read_text().split() == [first["workerId"], second["workerId"]]
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")


VLLM_STYLE_HANDLER = """\
import json
import runpod

def handler(job):  # a generator, shaped like worker-vllm's: its OpenAI path and its own
    data = job["input"]
    if data.get("openai_route") == "/v1/chat/completions":
        words = ["Hello", " from", " a", " scaled", " worker"]
        for word in words:
            chunk = {"object": "chat.completion.chunk", "choices": [
                {"index": 0, "delta": {"content": word}, "finish_reason": None}]}
            yield "data: " + json.dumps(chunk) + "\\n\\n"
        yield "data: [DONE]\\n\\n"
        return
    for word in data["prompt"].split():
        yield word

runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})
"""


def test_generator_and_openai_handlers_stream_from_a_scaled_worker(
    http: httpx.Client, emu: Any, tmp_path: Path
) -> None:
    handler = handler_file(tmp_path, VLLM_STYLE_HANDLER)
    endpoint_id = endpoint(http, f"{sys.executable} {handler}", idleTimeout=2)
    try:
        job = http.post(f"/v2/{endpoint_id}/run", json={"input": {"prompt": "one two three"}})
        job_id = job.json()["id"]

        def streamed() -> list[Any] | None:
            status = http.get(f"/v2/{endpoint_id}/status/{job_id}").json()
            return status["output"] if status["status"] == "COMPLETED" else None

        assert wait_until(streamed, 60, "the generator's job done") == ["one", "two", "three"]
        from openai import OpenAI

        client = OpenAI(base_url=f"{emu.url}/v2/{endpoint_id}/openai/v1", api_key=emu.api_key)
        stream = client.chat.completions.create(
            model="any", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
        assert text == "Hello from a scaled worker"
    finally:
        http.delete(f"/v2/serverless/{endpoint_id}")
