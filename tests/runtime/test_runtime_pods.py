"""The local runtime runs pods for real: args, logs, files, processes, ports, figures."""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from runtime_helpers import (
    create_pod,
    group_members,
    ledger,
    log_lines,
    wait_for,
    wait_group_gone,
    wait_status,
)

pytestmark = pytest.mark.timeout(60)


def _volume(http: httpx.Client, data_center: str) -> str:
    response = http.post(
        "/v2/networkvolumes", json={"name": "shared", "size": 10, "dataCenterId": data_center}
    )
    assert response.status_code in (200, 201), response.text
    return response.json()["id"]


def test_args_output_reaches_the_log_stream_in_order(http: httpx.Client) -> None:
    args = (
        "for i in 1 2 3 4 5 6 7 8; do echo line-$i; done; echo oops >&2; echo done-marker; sleep 60"
    )
    pod = create_pod(http, args=args)
    wait_status(http, pod["id"], "RUNNING")
    lines = log_lines(http, pod["id"], "done-marker")
    produced = [line for line in lines if line.startswith(("line-", "oops", "done-"))]
    assert produced == [f"line-{i}" for i in range(1, 9)] + ["oops", "done-marker"]
    assert http.delete(f"/v2/pods/{pod['id']}").status_code in (200, 204)


def test_stop_start_keeps_persistent_and_volume_data_and_wipes_the_container_disk(
    http: httpx.Client, local_emu: object
) -> None:
    write = (
        'echo c > "$RUNPOD_CONTAINER_DISK/c.txt"; [ -f "$RUNPOD_CONTAINER_DISK/old.txt" ] '
        '&& echo container-kept || echo container-fresh; touch "$RUNPOD_CONTAINER_DISK/old.txt"; '
        'echo p >> "$RUNPOD_MOUNT_WORKSPACE/p.txt"; echo "count $(wc -l < $RUNPOD_MOUNT_WORKSPACE/p.txt)"; '
        "echo ready-marker; sleep 60"
    )
    pod = create_pod(http, args=write, mounts={"persistent": {"size": 10, "path": "/workspace"}})
    pod_id = pod["id"]
    wait_status(http, pod_id, "RUNNING")
    first = log_lines(http, pod_id, "ready-marker")
    assert "container-fresh" in first and "count 1" in first
    assert http.post(f"/v2/pods/{pod_id}/action", json={"action": "stop"}).status_code == 200
    wait_status(http, pod_id, "EXITED")
    assert http.post(f"/v2/pods/{pod_id}/action", json={"action": "start"}).status_code == 200
    wait_status(http, pod_id, "RUNNING")
    again = log_lines(http, pod_id, "count 2")
    assert again.count("container-fresh") == 2 and "container-kept" not in again
    http.delete(f"/v2/pods/{pod_id}")


def test_no_process_survives_stop_or_terminate(http: httpx.Client, local_emu: object) -> None:
    pod = create_pod(
        http, args="sleep 300 & sleep 301 & trap '' TERM; while true; do sleep 1; done"
    )
    pod_id = pod["id"]
    wait_status(http, pod_id, "RUNNING")
    entry = wait_for(lambda: ledger(local_emu).get(pod_id), what="ledger entry")
    pgid = entry["pgid"]
    wait_for(lambda: len(group_members(pgid)) >= 3, what="three processes")
    started = time.monotonic()
    assert http.post(f"/v2/pods/{pod_id}/action", json={"action": "stop"}).status_code == 200
    wait_group_gone(pgid)
    assert time.monotonic() - started < 8  # SIGTERM ignored by the shell: SIGKILL after grace
    # forgotten once the pod's last process is gone (the runtime checks that after the group)
    wait_for(lambda: pod_id not in ledger(local_emu), what="ledger entry removed")
    assert http.post(f"/v2/pods/{pod_id}/action", json={"action": "start"}).status_code == 200
    wait_status(http, pod_id, "RUNNING")
    entry = wait_for(lambda: ledger(local_emu).get(pod_id), what="ledger entry again")
    assert entry["pgid"] != pgid
    assert http.delete(f"/v2/pods/{pod_id}").status_code in (200, 204)
    wait_group_gone(entry["pgid"])
    tree = local_emu.home / "podruntime" / "pods" / pod_id  # type: ignore[attr-defined]
    wait_for(lambda: not tree.exists(), what="tree removed")


def test_a_main_process_that_exits_makes_the_pod_exited(http: httpx.Client) -> None:
    pod = create_pod(http, args="echo bye; exit 3")
    wait_status(http, pod["id"], "EXITED")
    lines = log_lines(http, pod["id"], "container exited with code 3", source="system")
    assert lines
    http.delete(f"/v2/pods/{pod['id']}")


def test_ports_are_real_loopback_ports_the_pod_learns_from_its_environment(
    http: httpx.Client,
) -> None:
    serve = (
        'exec python3 -c "import os,socket;s=socket.socket();'
        "s.bind(('127.0.0.1',int(os.environ['RUNPOD_TCP_PORT_9000'])));s.listen();"
        "print('listening',flush=True);c,_=s.accept();c.sendall(b'hello');c.close()\""
    )
    pod = create_pod(http, args=serve, ports=["9000/tcp"])
    running = wait_status(http, pod["id"], "RUNNING")
    log_lines(http, pod["id"], "listening")
    row = running["runtime"]["ports"][0]
    assert row["ip"] == "127.0.0.1" and row["private"] == 9000
    with socket.create_connection((row["ip"], row["public"]), timeout=5) as conn:
        assert conn.recv(16) == b"hello"
    assert running["ssh"]["proxy"] is None  # no SSH server: no command leading elsewhere
    assert "no SSH server" in running["ssh"]["unavailable"]
    http.delete(f"/v2/pods/{pod['id']}")


def test_runtime_figures_are_measured(http: httpx.Client) -> None:
    burn = 'python3 -c "x=bytearray(200*1024*1024)\nwhile True: pass"'
    pod = create_pod(http, args=burn)
    wait_status(http, pod["id"], "RUNNING")

    def busy() -> dict | None:
        runtime = http.get(f"/v2/pods/{pod['id']}").json()["runtime"]
        return runtime if runtime and runtime["cpu"]["util"] > 0 else None

    runtime = wait_for(busy, timeout=10, what="CPU measured")
    assert runtime["memory"]["util"] >= 0
    assert "gpus" not in runtime or runtime["gpus"]  # no invented GPU figure
    idle = create_pod(http, args="sleep 60")
    wait_status(http, idle["id"], "RUNNING")
    time.sleep(1.2)
    assert http.get(f"/v2/pods/{idle['id']}").json()["runtime"]["cpu"]["util"] == 0
    for p in (pod, idle):
        http.delete(f"/v2/pods/{p['id']}")
