"""A worker whose emulator is killed (``kill -9``) mid-job: it stops the job it can no longer
report within its ping interval, instead of running it beside the restarted emulator's re-run.

Real processes: an emulator, a worker (supervised by the emulator, or started by hand) running
``sample_handlers.py:ticking``, which appends a line per tick to a marker file, so the test sees
each execution of the job (``RUN tick I``) and whether it was stopped (``RUN stopped NAME``).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from processes import wait_for

from podbook.worker._config import DEFAULT_PING_INTERVAL_MS
from podbook.worker._env import worker_env

from .conftest import SAMPLES, WORKER_COMMAND, Queue, WorkerProcess, clean_env, worker_key

MARGIN = 1.5
"""Seconds allowed beyond the ping interval for the stop to show (a loaded 2-core machine)."""


def runs(marker: Path) -> dict[str, list[str]]:
    """Each execution's lines (``start``, ``tick 0``, ..., ``stopped X`` or ``end``), by run id,
    in the order the runs started."""
    found: dict[str, list[str]] = {}
    if marker.exists():
        for line in marker.read_text().splitlines():
            run, _, text = line.partition(" ")
            if text:
                found.setdefault(run, []).append(text)
    return found


def ticking(marker: Path) -> list[str]:
    """The runs that have ticked at least once."""
    return [run for run, lines in runs(marker).items() if any(x.startswith("tick") for x in lines)]


def rerun_completes(queue: Queue, job_id: str, marker: Path, first: str) -> dict[str, list[str]]:
    """Wait for the job's re-run after the restart, let it end, check that it ran to the end
    and was the only execution beside ``first``; every run's lines."""
    second = wait_for(
        lambda: [run for run in ticking(marker) if run != first], timeout=30, what="a re-run"
    )[0]
    (marker.parent / (marker.name + ".go")).write_text("")
    record = queue.wait(job_id, timeout=30)
    assert record["status"] == "COMPLETED", record
    assert record["output"] == {"run": second}
    everything = runs(marker)
    assert list(everything) == [first, second]
    assert everything[second][-1] == "end"
    return everything


def kill9(emulator: Any) -> float:
    """``kill -9`` the emulator; the monotonic time it was dead."""
    os.kill(emulator.proc.pid, signal.SIGKILL)
    emulator.proc.wait(timeout=10)
    return time.monotonic()


def gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (a zombie nobody reaped yet counts as exited)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_supervised_worker_stops_its_job_when_its_emulator_is_killed(
    start_emulator: Any, tmp_path: Path
) -> None:
    # The emulator's death sends its workers SIGTERM (PR_SET_PDEATHSIG). The worker used to
    # take it as a normal stop and wait up to its 10 s grace for a job whose result nobody
    # could take any more, while the restarted emulator ran that job again at once.
    ping_interval = DEFAULT_PING_INTERVAL_MS / 1000  # what a supervised worker pings with
    emulator = start_emulator(extra_args=("--endpoint", f"ticking={SAMPLES}:ticking"))
    marker = tmp_path / "ticks.txt"
    with emulator.http() as http:
        response = http.post("/v2/ticking/run", json={"input": {"marker": str(marker)}})
        assert response.status_code == 200, response.text
        job_id = response.json()["id"]
    (first,) = wait_for(lambda: ticking(marker), timeout=30, what="the first run's tick")
    pid = int(first.split(".")[0])
    killed = kill9(emulator)
    wait_for(lambda: gone(pid), timeout=ping_interval, what="the worker's exit")
    stopped_after = time.monotonic() - killed
    ticks_at_exit = len(runs(marker)[first])

    emulator.start()  # same port and database: the job goes back to the queue at once
    with emulator.http() as http:
        everything = rerun_completes(Queue(http, "ticking"), job_id, marker, first)
    assert len(everything[first]) == ticks_at_exit  # nothing ran after the worker's exit
    print(f"\nsupervised worker gone {stopped_after:.2f} s after kill -9 of its emulator")


def test_a_normal_stop_of_the_emulator_still_lets_the_running_job_finish(
    start_emulator: Any, tmp_path: Path
) -> None:
    # The emulator stops its workers (SIGTERM) while it still answers: the worker's ping
    # finds it there, so it waits for its job as before, and the job ends COMPLETED once.
    emulator = start_emulator(extra_args=("--endpoint", f"ticking={SAMPLES}:ticking"))
    marker = tmp_path / "ticks.txt"
    with emulator.http() as http:
        job_id = http.post("/v2/ticking/run", json={"input": {"marker": str(marker)}}).json()["id"]
    (first,) = wait_for(lambda: ticking(marker), timeout=30, what="the first run's tick")
    emulator.proc.send_signal(signal.SIGTERM)
    wait_for(
        lambda: "waiting up to" in emulator.log_path.read_text(errors="replace"),
        timeout=10,
        what="the worker's drain",
    )
    (marker.parent / (marker.name + ".go")).write_text("")
    emulator.proc.wait(timeout=20)
    emulator.start()
    with emulator.http() as http:
        record = Queue(http, "ticking").wait(job_id, timeout=30)
    assert record["status"] == "COMPLETED", record
    assert record["output"] == {"run": first}
    assert list(runs(marker)) == [first]


@pytest.mark.parametrize("push", ["1", "0"], ids=["push", "http"])
def test_a_worker_started_by_hand_abandons_the_job_it_cannot_report(
    start_emulator: Any, tmp_path: Path, push: str
) -> None:
    # Nobody stops a worker started by hand: it must see for itself that its emulator has not
    # answered for a whole ping interval, stop the handler (a sync function, in its thread),
    # say so in one line, and keep trying to reconnect.
    ping_ms = 1000
    emulator = start_emulator()
    http = emulator.http()
    name = "gone-" + secrets.token_hex(3)
    assert http.post("/v2/serverless", json={"name": name}).status_code == 201
    queue = Queue(http, name)
    env = clean_env(tmp_path)
    env.update(
        worker_env(
            emulator.url,
            name,
            worker_key(emulator, name),
            worker_id="by-hand",
            ping_interval_ms=ping_ms,
        )
    )
    env["PODBOOK_WORKER_PUSH"] = push
    log = tmp_path / "by-hand.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*WORKER_COMMAND, f"{SAMPLES}:ticking"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    worker = WorkerProcess(proc, log)
    marker = tmp_path / "ticks.txt"
    try:
        worker.wait_for_line("serving")
        job_id = queue.run({"marker": str(marker)})
        (first,) = wait_for(lambda: ticking(marker), timeout=30, what="the first run's tick")
        killed = kill9(emulator)
        wait_for(
            lambda: any(line.startswith("stopped") for line in runs(marker)[first]),
            timeout=ping_ms / 1000 + MARGIN,
            what="the abandoned run's stop",
        )
        stopped_after = time.monotonic() - killed
        assert runs(marker)[first][-1] == "stopped HandlerInterrupted"
        worker.wait_for_line(f"abandoned job {job_id}", timeout=5)
        assert worker.text().count("abandoned") == 1, worker.text()
        assert worker.proc.poll() is None  # still trying to reconnect

        emulator.start()  # the worker's next ping disowns the job: it goes back to the queue
        http.close()
        queue.http = http = emulator.http()
        rerun_completes(queue, job_id, marker, first)
        print(f"\nworker by hand ({push=}) stopped its handler {stopped_after:.2f} s after kill -9")
    finally:
        assert worker.terminate() == 0
        http.close()
