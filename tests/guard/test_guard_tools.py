"""The pod guard on pods that really run (``podbook emulator --runtime local``): **Keep
running** turns it off, an NVIDIA GPU at or above the utilization threshold keeps the pod
running (a fake ``nvidia-smi`` on the pod's PATH), and an image without ``curl`` stops
through ``python3``.

Each is checked as a user would see it: the pod's status over time, and the guard's own
reports on the pod's log.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from guard_helpers import (
    guard_lines,
    guarded_pod,
    openssh_session,
    status_of,
    wait_guard,
    wait_status,
)
from processes import wait_for
from transfer_helpers import typed_client

from podbook import Client
from podbook.guard import keep_running, read_status

pytestmark = pytest.mark.timeout(180)

FAKE_NVIDIA_SMI = """#!/bin/sh
# What `nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits` prints: one
# line per GPU, the utilization in percent. The pod's FAKE_GPU_UTIL says what (e.g. "3 50").
for util in ${FAKE_GPU_UTIL:-0}; do echo "$util"; done
"""

GUARD_TOOLS = ("sh", "awk", "sed", "tr", "head", "tail", "date", "mkdir", "sleep", "cat",
               "rm", "mv", "grep", "printf")  # fmt: skip
"""What guard.sh runs besides its HTTP tool (and the pod's own ``exec sleep``)."""


@pytest.fixture
def made() -> Iterator[list[tuple[Client, str]]]:
    """Pods a test made (client, id): terminated at its end, also when it fails."""
    pods: list[tuple[Client, str]] = []
    yield pods
    for client, pod_id in pods:
        if status_of(client, pod_id) != "TERMINATED":
            client.pods.terminate(pod_id)


def running_since(client: Client, pod: Any) -> float:
    """Wait until the pod is RUNNING; the monotonic time it was first seen so."""
    return wait_status(client, pod.id, "RUNNING", timeout=30)


def stays_running(client: Client, pod_ids: list[str], until: float) -> None:
    """Assert the pods read RUNNING every half second until the monotonic time ``until``."""
    while time.monotonic() < until:
        for pod_id in pod_ids:
            assert status_of(client, pod_id) == "RUNNING", pod_id
        time.sleep(0.5)
    for pod_id in pod_ids:
        assert status_of(client, pod_id) == "RUNNING", pod_id


# ---------------------------------------------------------------- Keep running


def test_keep_running_turns_the_guard_off_and_the_pod_runs_past_its_idle_stop(
    guard_client: Client, guard_key: Any, made: list[tuple[Client, str]]
) -> None:
    idle_stop = 6
    pod = guarded_pod(guard_client, ssh=True, idle_stop=f"{idle_stop}s")
    made.append((guard_client, pod.id))
    running_since(guard_client, pod)
    record = wait_for(
        lambda: (p := guard_client.pods.get(pod.id)).ssh.direct is not None and p,
        timeout=15,
        what="ssh.direct",
    )
    # The SSH session that writes the command makes the pod busy before the guard reads it;
    # one held open makes that certain, so the idle stop cannot fire in between.
    session = openssh_session(record, guard_key)
    try:
        wait_guard(guard_client, pod.id, "busy", timeout=20)
        keep_running(record, client=guard_client, key=guard_key)
        off = wait_guard(guard_client, pod.id, "off", timeout=20)
    finally:
        session.stdin.close()
        session.terminate()
        session.wait(10)
    t_closed = time.monotonic()
    assert off.text == "off: keep running chosen; the pod runs until you stop it"
    assert off.describe() == "guard off: Keep running chosen"
    assert off.deadline is None
    # Nothing open any more: without Keep running it would stop idle_stop s (and a tick) after
    # the session closed. It runs well past that, and the guard still says it is off.
    stays_running(guard_client, [pod.id], until=t_closed + 2.5 * idle_stop)
    assert read_status(guard_client, pod.id).state == "off"
    assert not [r for r in guard_lines(guard_client, pod.id) if r.state == "fired"]
    # Until the pod stops: a stop and a start arm the guard again, and it stops on idle.
    guard_client.pods.stop(pod.id)
    wait_status(guard_client, pod.id, "EXITED", timeout=30)
    armed_before = sum(r.state == "armed" for r in guard_lines(guard_client, pod.id))
    guard_client.pods.start(pod.id)
    running_since(guard_client, pod)
    wait_status(guard_client, pod.id, "EXITED", timeout=40)
    reports = guard_lines(guard_client, pod.id)
    assert sum(r.state == "armed" for r in reports) == armed_before + 1
    assert reports[-1].state == "fired"
    assert reports[-1].text == f"stopped after {idle_stop}s idle"


# ---------------------------------------------------------------- a fake nvidia-smi, no curl


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Host folders shown in the pods: ``gpu`` holds a fake ``nvidia-smi``; ``nocurl`` is a
    PATH with what guard.sh needs and ``python3``, but no ``curl``."""
    gpu = tmp_path_factory.mktemp("fake-gpu")
    smi = gpu / "nvidia-smi"
    smi.write_text(FAKE_NVIDIA_SMI)
    smi.chmod(0o755)
    nocurl = tmp_path_factory.mktemp("no-curl")
    for tool in (*GUARD_TOOLS, "python3"):
        found = shutil.which(tool, path="/usr/bin:/bin") or shutil.which(tool)
        assert found, f"the host has no {tool}"
        (nocurl / tool).symlink_to(found)
    assert not (nocurl / "curl").exists()
    return {"gpu": gpu, "nocurl": nocurl}


@pytest.fixture(scope="module")
def tools_client(start_emulator: Any, tools: dict[str, Path]) -> Any:
    """A client of an emulator whose sandboxed pods see the ``tools`` folders (--share-ro)."""
    share = [arg for folder in tools.values() for arg in ("--share-ro", str(folder))]
    emulator = start_emulator(extra_args=("--runtime", "local", *share))
    with typed_client(emulator) as client:
        yield client


def gpu_pod(
    made: list[tuple[Client, str]], client: Client, tools: dict[str, Path], util: str, **env: str
) -> Any:
    """A guarded pod (idle stop 4 s) whose ``nvidia-smi`` reports ``util`` (one per GPU)."""
    path = f"{tools['gpu']}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    pod = guarded_pod(client, idle_stop="4s", env={"PATH": path, "FAKE_GPU_UTIL": util, **env})
    made.append((client, pod.id))
    return pod


def test_a_gpu_at_or_above_the_utilization_threshold_keeps_the_pod_running(
    tools_client: Client, tools: dict[str, Path], made: list[tuple[Client, str]]
) -> None:
    # 50 % on one of two GPUs; exactly the default threshold (10 %) on the only one.
    pods = [gpu_pod(made, tools_client, tools, "3 50"), gpu_pod(made, tools_client, tools, "10")]
    for pod in pods:
        running_since(tools_client, pod)
    t_busy = time.monotonic()
    for pod in pods:
        busy = wait_guard(tools_client, pod.id, "busy", timeout=20)
        assert busy.busy == ("gpu",)
        assert busy.describe() == "busy: GPU in use"
        assert busy.deadline is None  # no time limit: nothing ends it while the GPU works
    # three times the idle stop after both were seen running
    stays_running(tools_client, [p.id for p in pods], until=t_busy + 12)
    for pod in pods:
        assert read_status(tools_client, pod.id).state == "busy"


def test_a_gpu_under_the_utilization_threshold_lets_the_pod_stop(
    tools_client: Client, tools: dict[str, Path], made: list[tuple[Client, str]]
) -> None:
    # 3 % under the default 10 %; 50 % under a threshold of 60 % set in the pod's env
    low = gpu_pod(made, tools_client, tools, "3")
    raised = gpu_pod(made, tools_client, tools, "50", PODBOOK_GPU_IDLE_UTIL="60")
    assert tools_client.pods.get(raised.id).env.get("PODBOOK_GPU_IDLE_UTIL") == "60"
    started = {pod.id: running_since(tools_client, pod) for pod in (low, raised)}
    for pod in (low, raised):
        t_exited = wait_status(tools_client, pod.id, "EXITED", timeout=25)
        assert t_exited - started[pod.id] <= 15
        reports = guard_lines(tools_client, pod.id)
        assert not [r for r in reports if r.state == "busy"]
        assert reports[-1].state == "fired" and reports[-1].reason == "idle"
        assert reports[-1].text == "stopped after 4s idle"
        # idle from the guard's first look at the pod: at RUNNING, or a second or two later
        # on a loaded machine (CI run 23); a busy GPU would have put it off for good
        assert 4 <= reports[-1].deadline - reports[-1].started <= 6


def test_without_curl_the_guard_stops_the_pod_through_python3(
    tools_client: Client, tools: dict[str, Path], made: list[tuple[Client, str]]
) -> None:
    pod = guarded_pod(tools_client, idle_stop="5s", env={"PATH": str(tools["nocurl"])})
    made.append((tools_client, pod.id))
    t_running = running_since(tools_client, pod)
    t_exited = wait_status(tools_client, pod.id, "EXITED", timeout=25)
    assert 5 - 1.5 <= t_exited - t_running <= 15
    reports = guard_lines(tools_client, pod.id)
    assert reports[0].state == "armed"  # it read the pod through the API: python3 worked
    assert reports[0].text == "armed: idle stop after 5s, then stop"
    fired = reports[-1]
    assert (fired.state, fired.reason) == ("fired", "idle")
    assert fired.text == "stopped after 5s idle"  # the same line as with curl
    assert 5 <= fired.deadline - fired.started <= 7  # idle from the guard's first look
    assert read_status(tools_client, pod.id) == fired
    assert tools_client.pods.get(pod.id).cost == 0.0  # billing stopped
