"""Pod lifecycle end to end: create, timed moves, runtime, SSH, the action table, delete."""

from __future__ import annotations

from datetime import datetime

import pytest
from emu_helpers import create, gpu_pod, problem, wait_status

from podbook.api.pods import Pod


def test_create_answers_201_provisioning_as_the_seed_shows(http):
    pod = create(http, gpu_pod(ports=["8888/http", "22/tcp"], env={"MODEL": "llama"}))
    Pod.model_validate(pod)
    assert pod["status"] == "PROVISIONING"
    assert pod["actions"] == ["start", "terminate"]
    assert pod["startedAt"] is None
    assert pod["runtime"] == {}
    assert pod["template"] is None
    assert pod["cloud"] == "SECURE"
    assert pod["gpu"] == {"id": "NVIDIA GeForce RTX 4090", "count": 1}
    assert "cpu" not in pod and "cluster" not in pod
    assert pod["dataCenterId"] and pod["cudaVersion"]
    assert pod["cost"] > 0
    assert pod["env"] == {"MODEL": "llama"}
    proxy = pod["ssh"]["proxy"]
    assert proxy["port"] == 22 and proxy["host"]
    assert proxy["username"].startswith(pod["id"] + "-")
    assert proxy["command"] == f"ssh {proxy['username']}@{proxy['host']}"
    assert pod["ssh"]["direct"] is None
    assert pod["globalNetworking"] == {"enabled": False}
    datetime.fromisoformat(pod["createdAt"].replace("Z", "+00:00"))
    for flag in ("startSsh", "startJupyter"):
        assert flag not in pod


def test_pod_walks_provisioning_starting_running(http):
    pod = create(
        http,
        gpu_pod(ports=["8888/http", "22/tcp"], gpu={"id": "NVIDIA GeForce RTX 4090", "count": 2}),
    )
    starting = wait_status(http, pod["id"], "STARTING")
    assert starting["actions"] == ["stop", "terminate"]
    assert starting["runtime"] is None and starting["startedAt"] is None
    running = wait_status(http, pod["id"], "RUNNING")
    Pod.model_validate(running)
    assert running["actions"] == ["stop", "restart", "terminate"]
    assert running["startedAt"] is not None
    runtime = running["runtime"]
    assert runtime["uptime"] >= 0
    assert len(runtime["gpus"]) == 2
    for value in [g["util"] for g in runtime["gpus"]] + [
        runtime["cpu"]["util"],
        runtime["memory"]["util"],
    ]:
        assert 0 <= value <= 100
    ports = {p["private"]: p for p in runtime["ports"]}
    assert set(ports) == {8888, 22}
    assert ports[22]["type"] == "tcp" and ports[8888]["type"] == "http"
    direct = running["ssh"]["direct"]
    assert direct["host"] == ports[22]["ip"] and direct["port"] == ports[22]["public"]
    assert direct["command"] == f"ssh root@{direct['host']} -p {direct['port']}"
    assert running["ssh"]["proxy"] == pod["ssh"]["proxy"]


def test_no_direct_ssh_without_22_tcp(http):
    pod = create(http, gpu_pod(ports=["8888/http"]))
    running = wait_status(http, pod["id"], "RUNNING")
    assert running["ssh"]["direct"] is None
    assert running["ssh"]["proxy"] is not None


def test_stop_start_restart_follow_the_action_table(http):
    pod = create(http, gpu_pod(ports=["22/tcp"]))
    pod_id = pod["id"]
    # PROVISIONING: the seed lists start and terminate; restart is not allowed now
    problem(http.post(f"/v2/pods/{pod_id}/action", json={"action": "restart"}), 409)
    running = wait_status(http, pod_id, "RUNNING")
    problem(http.post(f"/v2/pods/{pod_id}/action", json={"action": "start"}), 409)

    stopped = http.post(f"/v2/pods/{pod_id}/action", json={"action": "stop"})
    assert stopped.status_code == 200
    stopped = stopped.json()
    assert stopped["status"] == "EXITED"
    assert stopped["actions"] == ["start", "terminate"]
    assert stopped["cost"] == 0.0
    assert stopped["runtime"] is None
    assert stopped["ssh"]["direct"] is None
    assert stopped["ssh"]["proxy"] == running["ssh"]["proxy"]
    assert stopped["dataCenterId"] == running["dataCenterId"]
    assert stopped["cudaVersion"] == running["cudaVersion"]
    assert stopped["startedAt"] == running["startedAt"]
    for action in ("stop", "restart"):
        problem(http.post(f"/v2/pods/{pod_id}/action", json={"action": action}), 409)

    started = http.post(f"/v2/pods/{pod_id}/action", json={"action": "start"}).json()
    assert started["status"] == "STARTING"
    assert started["cost"] == running["cost"]
    again = wait_status(http, pod_id, "RUNNING")
    assert again["startedAt"] > running["startedAt"]
    assert again["ssh"]["direct"] is not None

    restarted = http.post(f"/v2/pods/{pod_id}/action", json={"action": "restart"}).json()
    assert restarted["status"] == "STARTING"
    wait_status(http, pod_id, "RUNNING")


def test_start_while_provisioning_is_accepted(http):
    pod = create(http, gpu_pod())
    response = http.post(f"/v2/pods/{pod['id']}/action", json={"action": "start"})
    assert response.status_code == 200
    assert response.json()["status"] in ("PROVISIONING", "STARTING")


def test_stop_while_provisioning_is_accepted_as_the_reference_says(http):
    pod = create(http, gpu_pod())
    response = http.post(f"/v2/pods/{pod['id']}/action", json={"action": "stop"})
    assert response.status_code == 200
    assert response.json()["status"] == "EXITED"


def test_stop_while_starting(http):
    pod = create(http, gpu_pod())
    wait_status(http, pod["id"], "STARTING")
    response = http.post(f"/v2/pods/{pod['id']}/action", json={"action": "stop"})
    assert response.status_code == 200
    assert response.json()["status"] == "EXITED"


def test_locked_pod_cannot_be_stopped(http):
    pod = create(http, gpu_pod())
    locked = http.patch(f"/v2/pods/{pod['id']}", json={"locked": True})
    assert locked.status_code == 200 and locked.json()["locked"] is True
    wait_status(http, pod["id"], "RUNNING")
    body = problem(http.post(f"/v2/pods/{pod['id']}/action", json={"action": "stop"}), 409)
    assert "locked" in body["detail"] and "PATCH" in body["detail"]
    body = problem(http.post(f"/v2/pods/{pod['id']}/action", json={"action": "restart"}), 409)
    assert "locked" in body["detail"]
    assert http.get(f"/v2/pods/{pod['id']}").json()["status"] == "RUNNING"
    assert http.patch(f"/v2/pods/{pod['id']}", json={"locked": False}).json()["locked"] is False
    assert http.post(f"/v2/pods/{pod['id']}/action", json={"action": "stop"}).status_code == 200


@pytest.mark.parametrize("how", ["delete", "terminate"])
def test_terminate_removes_the_pod(http, how):
    pod = create(http, gpu_pod())
    if how == "delete":
        response = http.delete(f"/v2/pods/{pod['id']}")
    else:
        response = http.post(f"/v2/pods/{pod['id']}/action", json={"action": "terminate"})
    assert response.status_code == 204
    assert response.content == b""
    problem(http.get(f"/v2/pods/{pod['id']}"), 404)
    assert pod["id"] not in [p["id"] for p in http.get("/v2/pods").json()["pods"]]
    problem(http.delete(f"/v2/pods/{pod['id']}"), 404)


def test_unknown_action_is_422(http):
    pod = create(http, gpu_pod())
    body = problem(http.post(f"/v2/pods/{pod['id']}/action", json={"action": "reboot"}), 422)
    assert any(e.startswith("$.action") for e in body["errors"])


def test_list_wraps_pods(http):
    pod = create(http, gpu_pod(name="listed"))
    listing = http.get("/v2/pods")
    assert listing.status_code == 200
    pods = listing.json()["pods"]
    assert pod["id"] in [p["id"] for p in pods]
    for item in pods:
        Pod.model_validate(item)
