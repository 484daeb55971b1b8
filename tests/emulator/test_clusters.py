"""Clusters: create, ranks and roles, overlay network, primary, listing and member protection."""

from __future__ import annotations

import time

import pytest
from emu_helpers import GPU, problem, wait_status

from podbook.api.clusters import Cluster
from podbook.api.pods import Pod


def make_cluster(http, kind, count=3, **fields):
    body = {
        "name": f"{kind.lower()}-cluster",
        "type": kind,
        "image": "runpod/pytorch:latest",
        "ports": ["22/tcp"],
        "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 2, "podCount": count},
        **fields,
    }
    response = http.post("/v2/clusters", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def wait_cluster(http, cluster_id, predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cluster = http.get(f"/v2/clusters/{cluster_id}").json()
        if predicate(cluster):
            return cluster
        time.sleep(0.03)
    raise AssertionError(f"cluster never matched: {cluster}")


ROLES = {
    "SLURM": ("SLURM_CONTROLLER", "SLURM_COMPUTE"),
    "RAY": ("RAY_HEAD", "RAY_WORKER"),
    "TRAINING": (None, None),
    "APPLICATION": (None, None),
}


@pytest.mark.parametrize("kind", list(ROLES))
def test_cluster_members_get_ranks_roles_and_overlay_ips(http, kind):
    created = make_cluster(http, kind)
    Cluster.model_validate(created)
    assert created["type"] == kind
    assert created["compute"] == {"gpuTypeId": GPU, "gpuCountPerPod": 2, "podCount": 3}
    assert created["pods"]["total"] == 3
    assert created["dataCenterId"]
    assert created["primary"]["status"] == "PROVISIONING"
    assert "sshEndpoint" not in created["primary"]
    members = http.get(f"/v2/clusters/{created['id']}/pods").json()["pods"]
    assert len(members) == 3
    early = [m["cluster"] for m in members]
    assert all(c["id"] == created["id"] for c in early)
    running = wait_cluster(http, created["id"], lambda c: c["pods"]["byStatus"] == {"RUNNING": 3})
    Cluster.model_validate(running)
    assert running["network"]["cidr"] and running["network"]["vxlanPort"]
    members = http.get(f"/v2/clusters/{created['id']}/pods").json()["pods"]
    by_rank = {m["cluster"]["rank"]: m for m in members}
    assert set(by_rank) == {0, 1, 2}
    head, worker = ROLES[kind]
    for rank, member in by_rank.items():
        Pod.model_validate(member)
        assert member["dataCenterId"] == running["dataCenterId"]
        assert member["gpu"] == {"id": GPU, "count": 2}
        assert member["cluster"]["ip"]
        expected = head if rank == 0 else worker
        assert member["cluster"].get("role") == expected
        if expected is None:
            assert "role" not in member["cluster"]
    assert len({m["cluster"]["ip"] for m in members}) == 3
    primary = running["primary"]
    assert primary["podId"] == by_rank[0]["id"] and primary["status"] == "RUNNING"
    direct = by_rank[0]["ssh"]["direct"]
    assert primary["sshEndpoint"] == f"{direct['host']}:{direct['port']}"


def test_rank_is_null_before_assignment(start_emulator):
    emu = start_emulator(timings=("--provision-seconds", "3", "--start-seconds", "0.2"))
    with emu.http() as http:
        created = make_cluster(http, "TRAINING", count=2)
        assert "network" not in created
        member = http.get(f"/v2/clusters/{created['id']}/pods").json()["pods"][0]
        assert member["cluster"]["rank"] is None
        assert "ip" not in member["cluster"]
        # a role follows from the rank, so it is not shown before the rank either
        slurm = make_cluster(http, "SLURM", count=2)
        members = http.get(f"/v2/clusters/{slurm['id']}/pods").json()["pods"]
        assert [m["cluster"] for m in members] == [{"id": slurm["id"], "rank": None}] * 2
    emu.stop()


def test_no_ssh_endpoint_without_22_tcp(http):
    created = make_cluster(http, "APPLICATION", count=2, ports=["8888/http"])
    running = wait_cluster(http, created["id"], lambda c: c["primary"]["status"] == "RUNNING")
    assert "sshEndpoint" not in running["primary"]


def test_members_hidden_from_pod_list_unless_asked(http):
    created = make_cluster(http, "TRAINING", count=2)
    member_ids = {m["id"] for m in http.get(f"/v2/clusters/{created['id']}/pods").json()["pods"]}
    default = {p["id"] for p in http.get("/v2/pods").json()["pods"]}
    assert not member_ids & default
    everything = {
        p["id"] for p in http.get("/v2/pods", params={"includeClusterPods": "true"}).json()["pods"]
    }
    assert member_ids <= everything
    problem(http.get("/v2/pods", params={"includeClusterPods": "maybe"}), 400)


def test_members_refuse_pod_endpoint_changes(http):
    created = make_cluster(http, "RAY", count=2)
    member = http.get(f"/v2/clusters/{created['id']}/pods").json()["pods"][1]
    assert http.get(f"/v2/pods/{member['id']}").status_code == 200
    wait_status(http, member["id"], "RUNNING")
    for response in (
        http.patch(f"/v2/pods/{member['id']}", json={"name": "x"}),
        http.post(f"/v2/pods/{member['id']}/action", json={"action": "stop"}),
        http.post(f"/v2/pods/{member['id']}/action", json={"action": "terminate"}),
        http.delete(f"/v2/pods/{member['id']}"),
    ):
        body = problem(response, 409)
        assert created["id"] in body["detail"]


def test_list_rename_delete(http):
    created = make_cluster(http, "SLURM", count=2)
    assert created["id"] in [c["id"] for c in http.get("/v2/clusters").json()["clusters"]]
    renamed = http.patch(f"/v2/clusters/{created['id']}", json={"name": "renamed"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "renamed"
    problem(http.patch(f"/v2/clusters/{created['id']}", json={}), 422)
    problem(http.patch(f"/v2/clusters/{created['id']}", json={"type": "RAY"}), 422)
    members = [m["id"] for m in http.get(f"/v2/clusters/{created['id']}/pods").json()["pods"]]
    assert http.delete(f"/v2/clusters/{created['id']}").status_code == 204
    problem(http.get(f"/v2/clusters/{created['id']}"), 404)
    problem(http.get(f"/v2/clusters/{created['id']}/pods"), 404)
    for pod_id in members:
        problem(http.get(f"/v2/pods/{pod_id}"), 404)


@pytest.mark.parametrize(
    ("compute", "status"),
    [
        ({"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 1}, 422),
        ({"gpuTypeId": GPU, "gpuCountPerPod": 0, "podCount": 2}, 422),
        ({"gpuTypeId": GPU, "gpuCountPerPod": 1}, 422),
        ({"gpuTypeId": "NVIDIA Imaginary 9000", "gpuCountPerPod": 1, "podCount": 2}, 400),
    ],
)
def test_create_rules(http, compute, status):
    body = {"name": "bad", "type": "TRAINING", "image": "i", "compute": compute}
    problem(http.post("/v2/clusters", json=body), status)


def test_unknown_type_and_registry_field_refused(http):
    compute = {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2}
    problem(
        http.post(
            "/v2/clusters", json={"name": "x", "type": "MPI", "image": "i", "compute": compute}
        ),
        422,
    )
    problem(
        http.post(
            "/v2/clusters",
            json={"name": "x", "type": "RAY", "image": "i", "compute": compute, "registry": "r"},
        ),
        422,
    )
