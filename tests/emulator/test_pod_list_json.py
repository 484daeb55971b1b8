"""``GET /v2/pods`` is built from each pod's cached JSON (issue 21 §5: a list of thousands
of pods builds no dict per pod): it must say exactly what ``GET /v2/pods/{id}`` says of
every pod, in every status, with and without cluster members."""

from __future__ import annotations

from typing import Any

from emu_helpers import create, gpu_pod, wait_status
from processes import wait_for


def by_id(listed: dict[str, Any]) -> dict[str, Any]:
    return {pod["id"]: pod for pod in listed["pods"]}


def test_the_list_says_of_each_pod_what_its_own_read_says(http: Any) -> None:
    made = [create(http, gpu_pod(name=f"listed-{n}", env={"N": str(n)})) for n in range(4)]
    ids = [pod["id"] for pod in made]
    wait_status(http, ids[0], "RUNNING")
    assert http.post(f"/v2/pods/{ids[1]}/action", json={"action": "stop"}).status_code == 200
    wait_status(http, ids[1], "EXITED")
    for _ in range(3):  # within one second the runtime sample is shared; across seconds too
        listed = by_id(http.get("/v2/pods").json())
        for pod_id in ids:
            own = http.get(f"/v2/pods/{pod_id}").json()
            shown = listed[pod_id]
            if own["status"] == "RUNNING" and own["runtime"] != shown["runtime"]:
                continue  # a new second's sample between the two reads
            assert shown == own
            assert list(shown) == list(own), "the fields in the same order"
    assert listed[ids[0]]["runtime"] and listed[ids[1]]["runtime"] is None


def test_cluster_members_are_listed_only_when_asked(http: Any) -> None:
    body = {
        "name": "listed-cluster",
        "type": "APPLICATION",
        "image": "runpod/base:latest",
        "compute": {"gpuTypeId": "NVIDIA GeForce RTX 4090", "gpuCountPerPod": 1, "podCount": 2},
    }
    created = http.post("/v2/clusters", json=body)
    assert created.status_code == 201, created.text
    members = {
        p["id"] for p in http.get(f"/v2/clusters/{created.json()['id']}/pods").json()["pods"]
    }
    # a member's cluster address comes once the cluster is assigned: compare after that
    wait_for(
        lambda: all(http.get(f"/v2/pods/{m}").json()["cluster"].get("ip") for m in members),
        timeout=30,
        what="the members' cluster addresses",
    )
    plain = by_id(http.get("/v2/pods").json())
    everything = by_id(http.get("/v2/pods", params={"includeClusterPods": "true"}).json())
    assert members and not members & set(plain) and members <= set(everything)
    for member in members:
        assert everything[member]["cluster"] == http.get(f"/v2/pods/{member}").json()["cluster"]
    http.delete(f"/v2/clusters/{created.json()['id']}")


def test_an_account_without_pods_lists_none(start_emulator: Any) -> None:
    with start_emulator().http() as fresh:
        listed = fresh.get("/v2/pods")
    assert listed.status_code == 200 and listed.json() == {"pods": []}
