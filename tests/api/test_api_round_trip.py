"""Response models read back what they dump, and keep what the service adds, everywhere inside.

A record handed around as ``model_dump()`` (a panel, a cache, a saved notebook) must validate
again; and a field the real service adds inside a nested object (the seed says ``compute``
has more inner fields than it names) must not make a whole record unreadable.
"""

from __future__ import annotations

import copy
import time

import pytest
from test_api_models import CREATED_POD, RUNNING_CPU_POD

from podbook.api import (
    Cluster,
    ListPodsResponse,
    ListTemplatesResponse,
    Pod,
    check_patch_mounts,
    to_wire,
)

GPU = "NVIDIA GeForce RTX 4090"

CLUSTER = {
    "id": "cl_1",
    "name": "train",
    "type": "SLURM",
    "compute": {"gpuTypeId": "NVIDIA H100 80GB HBM3", "gpuCountPerPod": 8, "podCount": 4},
    "pods": {"total": 4, "byStatus": {"PROVISIONING": 4}},
    "createdAt": "2026-06-29T20:00:00Z",
}


def _round_trips(model: type, record: object) -> None:
    for mode in ("python", "json"):
        dumped = record.model_dump(mode=mode)  # type: ignore[attr-defined]
        assert model.model_validate(dumped) == record, mode


@pytest.mark.parametrize("data", [CREATED_POD, RUNNING_CPU_POD], ids=["created", "running-cpu"])
def test_a_dumped_pod_validates_again(data):
    _round_trips(Pod, Pod.model_validate(data))
    no_mounts = {**copy.deepcopy(data), "mounts": {}}
    _round_trips(Pod, Pod.model_validate(no_mounts))


def test_fields_the_service_adds_inside_records_are_kept():
    pod_data = copy.deepcopy(CREATED_POD)
    pod_data["mounts"]["persistent"]["encrypted"] = True
    pod_data["mounts"]["network"] = None
    pod = Pod.model_validate(pod_data)
    assert pod.mounts.persistent.model_extra == {"encrypted": True}
    assert to_wire(pod)["mounts"]["persistent"]["encrypted"] is True

    cluster_data = copy.deepcopy(CLUSTER)
    cluster_data["compute"]["cpuCountPerPod"] = 64
    cluster = Cluster.model_validate(cluster_data)
    assert cluster.compute.pod_count == 4
    assert cluster.compute.model_extra == {"cpuCountPerPod": 64}
    assert to_wire(cluster) == cluster_data
    _round_trips(Cluster, cluster)


def test_patch_mount_rules_take_a_pods_own_mounts():
    pod = Pod.model_validate(CREATED_POD)  # created with a persistent mount
    assert check_patch_mounts(pod.mounts, {"persistent": {"size": 30, "path": "/w"}}) == []
    errors = check_patch_mounts(pod.mounts, {"network": [{"volumeId": "v", "path": "/n"}]})
    assert errors and errors[0].startswith("$.mounts.network:")


def test_every_emulator_record_round_trips(emulator):
    with emulator.http() as http:
        probe = http.post("/v2/pods", json={"name": "probe", "image": "i", "gpu": {"id": GPU}})
        volume = http.post(
            "/v2/network-volumes",
            json={"name": "rt", "size": 10, "dataCenter": probe.json()["dataCenterId"]},
        ).json()["id"]
        made = [
            http.post("/v2/pods", json=body)
            for body in (
                {
                    "name": "net",
                    "image": "i",
                    "gpu": {"id": GPU},
                    "ports": ["22/tcp"],
                    "mounts": {"network": [{"volumeId": volume, "path": "/data"}]},
                },
                {"name": "cpu", "image": "i", "cpu": {"id": "cpu3c", "vcpuCount": 2}},
                {"name": "tpl", "templateId": "tpl-own", "gpu": {"id": GPU}},
            )
        ]
        assert [r.status_code for r in made] == [201, 201, 201], [r.text for r in made]
        cluster = http.post(
            "/v2/clusters",
            json={
                "name": "c",
                "type": "RAY",
                "image": "i",
                "ports": ["22/tcp"],
                "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
            },
        ).json()
        time.sleep(0.5)  # members reach RUNNING (fast lifecycle): runtime and ranks appear
        pods = ListPodsResponse.model_validate(
            http.get("/v2/pods", params={"includeClusterPods": "true"}).json()
        )
        templates = ListTemplatesResponse.model_validate(http.get("/v2/catalog/templates").json())
        cluster = Cluster.model_validate(http.get(f"/v2/clusters/{cluster['id']}").json())
    assert any(p.cluster is not None for p in pods.pods)
    for pod in pods.pods:
        _round_trips(Pod, pod)
    _round_trips(ListTemplatesResponse, templates)
    _round_trips(Cluster, cluster)
