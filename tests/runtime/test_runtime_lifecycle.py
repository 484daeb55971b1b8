"""The local runtime across pods and emulator lifetimes: shared volumes, clusters, the cap,
the emulator's stop and ``kill -9``."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import httpx
import pytest
from runtime_helpers import (
    LOCAL,
    create_pod,
    group_members,
    ledger,
    log_lines,
    wait_for,
    wait_group_gone,
    wait_status,
)

pytestmark = pytest.mark.timeout(90)


def test_two_pods_share_a_network_volume(http: httpx.Client, local_emu: Any) -> None:
    volume = http.post(
        "/v2/network-volumes", json={"name": "shared", "size": 10, "dataCenter": "EU-RO-1"}
    )
    assert volume.status_code == 201, volume.text
    volume_id = volume.json()["id"]
    mounts = {"network": [{"volumeId": volume_id, "path": "/data"}]}
    writer = create_pod(
        http,
        mounts=mounts,
        args='echo from-writer > "$RUNPOD_MOUNT_DATA/note.txt"; echo wrote; sleep 60',
    )
    wait_status(http, writer["id"], "RUNNING")
    log_lines(http, writer["id"], "wrote")
    reader = create_pod(
        http,
        mounts={"network": [{"volumeId": volume_id, "path": "/mnt/shared"}]},
        args='cat "$RUNPOD_MOUNT_MNT_SHARED/note.txt"; echo "cwd $(pwd)"; sleep 60',
    )
    wait_status(http, reader["id"], "RUNNING")
    lines = log_lines(http, reader["id"], "cwd ")
    assert "from-writer" in lines
    for pod in (writer, reader):
        assert http.delete(f"/v2/pods/{pod['id']}").status_code == 204
    folder = local_emu.home / "podruntime" / "volumes" / volume_id
    assert (folder / "note.txt").read_text() == "from-writer\n"  # kept with the volume
    assert http.delete(f"/v2/network-volumes/{volume_id}").status_code in (200, 204)
    wait_for(lambda: not folder.exists(), what="volume files removed")


def test_cluster_members_run_at_distinct_loopback_addresses(
    http: httpx.Client, local_emu: Any
) -> None:
    body = {
        "name": "rt-cluster",
        "type": "APPLICATION",
        "image": "runpod/base:latest",
        "args": 'echo "member $RUNPOD_CLUSTER_RANK at $RUNPOD_CLUSTER_IP"; sleep 60',
        "compute": {"gpuTypeId": "NVIDIA GeForce RTX 4090", "gpuCountPerPod": 1, "podCount": 2},
    }
    created = http.post("/v2/clusters", json=body)
    assert created.status_code == 201, created.text
    cluster_id = created.json()["id"]
    members = http.get(f"/v2/clusters/{cluster_id}/pods").json()
    members = members["pods"] if isinstance(members, dict) else members
    ips, pgids = set(), []
    for member in members:
        running = wait_status(http, member["id"], "RUNNING")
        ip = running["cluster"]["ip"]
        assert ip.startswith("127.") and ip != "127.0.0.1"
        ips.add(ip)
        assert f"member {running['cluster']['rank']} at {ip}" in log_lines(
            http, member["id"], "member "
        )
        pgids.append(wait_for(lambda m=member: ledger(local_emu).get(m["id"]))["pgid"])
    assert len(ips) == 2
    assert http.delete(f"/v2/clusters/{cluster_id}").status_code in (200, 204)
    for pgid in pgids:
        wait_group_gone(pgid)


def test_the_cap_on_running_pods_is_the_capacity_error(start_emulator: Any) -> None:
    emu = start_emulator(extra_args=(*LOCAL, "--max-running-pods", "1"))
    with emu.http() as http:
        first = create_pod(http, args="sleep 60")
        refused = http.post(
            "/v2/pods",
            json={"name": "x", "image": "i", "gpu": {"id": "NVIDIA GeForce RTX 4090"}},
        )
        assert refused.status_code == 400
        assert refused.json()["title"] == "No Capacity"
        wait_status(http, first["id"], "RUNNING")
        stop = http.post(f"/v2/pods/{first['id']}/action", json={"action": "stop"})
        assert stop.status_code == 200
        second = create_pod(http, args="sleep 60")
        wait_status(http, second["id"], "RUNNING")
        again = http.post(f"/v2/pods/{first['id']}/action", json={"action": "start"})
        assert again.status_code == 400 and again.json()["title"] == "No Capacity"
    emu.stop()


def _running_groups(emu: Any, http: httpx.Client, count: int) -> dict[str, int]:
    pods = [
        create_pod(http, args="sleep 300 & sleep 301 & echo up; wait", name=f"p{i}")
        for i in range(count)
    ]
    groups = {}
    for pod in pods:
        wait_status(http, pod["id"], "RUNNING")
        log_lines(http, pod["id"], "up")
        groups[pod["id"]] = wait_for(lambda p=pod: ledger(emu).get(p["id"]))["pgid"]
        wait_for(lambda g=groups[pod["id"]]: len(group_members(g)) == 3, what="3 processes")
    return groups


def test_the_emulators_stop_leaves_no_process(start_emulator: Any) -> None:
    emu = start_emulator(extra_args=LOCAL)
    with emu.http() as http:
        groups = _running_groups(emu, http, 2)
    emu.stop()
    for pgid in groups.values():
        wait_group_gone(pgid, timeout=5)


def test_kill_9_then_restart_kills_leftovers_and_brings_the_pods_back(
    start_emulator: Any,
) -> None:
    emu = start_emulator(extra_args=LOCAL)
    with emu.http() as http:
        groups = _running_groups(emu, http, 2)
        stopped = create_pod(http, args="sleep 300")
        wait_status(http, stopped["id"], "RUNNING")
        http.post(f"/v2/pods/{stopped['id']}/action", json={"action": "stop"})
        wait_status(http, stopped["id"], "EXITED")
    os.kill(emu.proc.pid, signal.SIGKILL)
    emu.proc.wait()
    started = time.monotonic()
    emu.start()
    for pgid in groups.values():  # the shells got SIGTERM; their sleeps are killed at start
        wait_group_gone(pgid, timeout=5)
    with emu.http() as http:
        for pod_id, pgid in groups.items():
            assert http.get(f"/v2/pods/{pod_id}").json()["status"] == "RUNNING"
            assert log_lines(http, pod_id, "the emulator restarted", source="system")
            entry = wait_for(
                lambda p=pod_id, g=pgid: (e := ledger(emu).get(p)) and e["pgid"] != g and e
            )
            wait_for(lambda e=entry: len(group_members(e["pgid"])) == 3, what="running again")
        assert http.get(f"/v2/pods/{stopped['id']}").json()["status"] == "EXITED"
        assert stopped["id"] not in ledger(emu)
    assert time.monotonic() - started < 15
    emu.stop()
    for entry in ledger(emu).values():
        wait_group_gone(entry["pgid"])
