"""Response models: the seed's examples parse, unknown fields are kept, secrets stay out of reprs."""

from __future__ import annotations

import copy
from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from podbook.api import (
    MASK,
    Cluster,
    ListCpuTypesResponse,
    ListDataCentersResponse,
    ListGpuTypesResponse,
    ListPodsResponse,
    ListRegistriesResponse,
    ListTemplatesResponse,
    Pod,
    Problem,
    SshKeys,
    is_secret_name,
    mask_env,
    to_wire,
)

# The creation example of the seed / reference (201 on POST /v2/pods).
CREATED_POD = {
    "id": "7h9k2m4n6p",
    "name": "pytorch-training",
    "image": "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
    "args": "",
    "disk": 50,
    "ports": ["8888/http", "22/tcp"],
    "env": {"MODEL_NAME": "llama-3"},
    "registry": None,
    "status": "PROVISIONING",
    "actions": ["start", "terminate"],
    "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
    "gpu": {"id": "NVIDIA GeForce RTX 4090", "count": 1},
    "cloud": "SECURE",
    "dataCenterId": "US-KS-2",
    "cudaVersion": "12.8",
    "ssh": {
        "proxy": {
            "host": "ssh.runpod.io",
            "port": 22,
            "username": "7h9k2m4n6p-64411eb2",
            "command": "ssh 7h9k2m4n6p-64411eb2@ssh.runpod.io",
        },
        "direct": None,
    },
    "template": "9x4m2p7v",
    "cost": 0.44,
    "locked": False,
    "globalNetworking": {"enabled": False},
    "runtime": {},
    "createdAt": "2026-06-01T12:00:00Z",
    "startedAt": None,
}

RUNNING_CPU_POD = {
    **CREATED_POD,
    "id": "cpu1",
    "status": "RUNNING",
    "actions": ["stop", "restart", "terminate"],
    "mounts": {"network": [{"volumeId": "vol_1", "path": "/runpod-volume"}]},
    "gpu": None,
    "cpu": {"id": "cpu3c", "vcpuCount": 4, "memory": 8},
    "cudaVersion": None,
    "env": {"JUPYTER_PASSWORD": "hunter2", "PUBLIC_KEY": "ssh-ed25519 AAAA me", "HF_TOKEN": "hf_x"},
    "ssh": {
        "proxy": CREATED_POD["ssh"]["proxy"],
        "direct": {
            "host": "195.26.233.3",
            "port": 34446,
            "username": "root",
            "command": "ssh root@195.26.233.3 -p 34446",
        },
    },
    "globalNetworking": {
        "enabled": True,
        "ip": "10.65.1.42",
        "internalDns": "cpu1.runpod.internal",
    },
    "cluster": {"id": "cl_1", "rank": 0, "role": "RAY_HEAD", "ip": "10.65.0.2"},
    "runtime": {
        "uptime": 3600,
        "gpus": [{"util": 94, "memoryUtil": 78}],
        "cpu": {"util": 45},
        "memory": {"util": 60},
        "ports": [{"private": 22, "public": 34446, "type": "tcp", "ip": "195.26.233.3"}],
    },
    "startedAt": "2026-06-01T12:02:00.123Z",
}
del RUNNING_CPU_POD["gpu"]


def test_seed_creation_example_parses_and_round_trips():
    pod = Pod.model_validate(CREATED_POD)
    assert pod.status == "PROVISIONING" and pod.actions == ["start", "terminate"]
    assert pod.data_center_id == "US-KS-2" and pod.cuda_version == "12.8"
    assert pod.ssh.proxy.command == "ssh 7h9k2m4n6p-64411eb2@ssh.runpod.io"
    assert pod.ssh.direct is None and pod.started_at is None
    assert pod.created_at == datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
    assert pod.runtime is not None and pod.runtime.uptime is None
    assert pod.mounts.persistent.size == 20
    assert to_wire(pod) == CREATED_POD


def test_unknown_fields_from_the_service_are_kept():
    data = copy.deepcopy(CREATED_POD)
    data["machineId"] = "m-1"
    data["ssh"]["proxy"]["fingerprint"] = "SHA256:abc"
    data["runtime"] = {"uptime": 1, "disk": {"util": 3}}
    pod = Pod.model_validate(data)
    assert pod.model_extra == {"machineId": "m-1"}
    assert to_wire(pod) == data


def test_a_full_dump_of_the_pod_record_reads_like_the_service_answer():
    """What a panel shows: ``model_dump`` (no ``exclude_unset``) of a record whose leaves have
    unset optional fields and unknown properties."""
    data = copy.deepcopy(RUNNING_CPU_POD)
    data["globalNetworking"] = {"enabled": False}
    data["runtime"]["ports"][0]["mapped"] = True
    data["ssh"]["direct"] = None
    dumped = Pod.model_validate(data).model_dump(mode="json", by_alias=True)
    assert dumped["globalNetworking"] == {"enabled": False}
    assert dumped["runtime"]["ports"][0] == {**data["runtime"]["ports"][0], "mapped": True}
    assert dumped["ssh"] == {"proxy": data["ssh"]["proxy"], "direct": None}
    assert dumped["runtime"]["gpus"] == [{"util": 94, "memoryUtil": 78}]


def test_running_cpu_pod_with_cluster_runtime_and_global_networking():
    pod = Pod.model_validate(RUNNING_CPU_POD)
    assert pod.gpu is None and pod.cpu.memory == 8 and pod.cpu.vcpu_count == 4
    assert pod.cluster.role == "RAY_HEAD" and pod.cluster.rank == 0
    assert pod.global_networking.internal_dns == "cpu1.runpod.internal"
    assert pod.runtime.gpus[0].memory_util == 78
    assert pod.runtime.ports[0].public == 34446
    wire = to_wire(pod)
    assert "gpu" not in wire and wire["cpu"] == {"id": "cpu3c", "vcpuCount": 4, "memory": 8}


def test_required_pod_fields_are_required():
    data = {key: value for key, value in CREATED_POD.items() if key != "status"}
    with pytest.raises(ValidationError):
        Pod.model_validate(data)
    for nullable in ("dataCenterId", "registry", "template", "runtime", "startedAt"):
        assert Pod.model_validate({**CREATED_POD, nullable: None})


def test_secret_env_values_never_in_a_repr():
    pod = Pod.model_validate(RUNNING_CPU_POD)
    text = repr(pod) + str(pod)
    for secret in ("hunter2", "ssh-ed25519 AAAA me", "hf_x"):
        assert secret not in text
    assert MASK in text
    assert pod.env["JUPYTER_PASSWORD"] == "hunter2"  # the data itself is intact


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("JUPYTER_PASSWORD", True),
        ("PUBLIC_KEY", True),
        ("api_key", True),
        ("HF_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("DB_PASSWORD", True),
        ("MODEL_NAME", False),
        ("PORT", False),
    ],
)
def test_secret_names(name, secret):
    assert is_secret_name(name) is secret
    assert (mask_env({name: "v"})[name] == MASK) is secret


def test_list_wrappers():
    pods = ListPodsResponse.model_validate({"pods": [CREATED_POD, RUNNING_CPU_POD]})
    assert [p.id for p in pods.pods] == ["7h9k2m4n6p", "cpu1"]
    assert ListPodsResponse.model_validate({"pods": []}).pods == []
    registries = ListRegistriesResponse.model_validate(
        {"registries": [{"id": "6n2k8v4d", "name": "dockerhub-private"}]}
    )
    assert registries.registries[0].name == "dockerhub-private"
    assert SshKeys.model_validate({"keys": ["ssh-ed25519 AAAA x"]}).keys == ["ssh-ed25519 AAAA x"]


def test_cluster_before_and_after_placement():
    bare = {
        "id": "cl_1",
        "name": "train",
        "type": "TRAINING",
        "compute": {"gpuTypeId": "NVIDIA H100 80GB HBM3", "gpuCountPerPod": 8, "podCount": 4},
        "pods": {"total": 4, "byStatus": {"PROVISIONING": 4}},
        "createdAt": "2026-06-29T20:00:00Z",
    }
    cluster = Cluster.model_validate(bare)
    assert cluster.primary is None and cluster.network is None and cluster.data_center_id is None
    assert to_wire(cluster) == bare
    placed = {
        **bare,
        "dataCenterId": "US-TX-3",
        "template": "tpl_abc",
        "network": {"cidr": "10.65.0.0/16", "vxlanId": 42, "vxlanPort": 4789},
        "primary": {"podId": "pod_node0", "status": "RUNNING", "sshEndpoint": "1.2.3.4:22001"},
        "pods": {"total": 4, "byStatus": {"RUNNING": 3, "PROVISIONING": 1}},
    }
    cluster = Cluster.model_validate(placed)
    assert cluster.primary.ssh_endpoint == "1.2.3.4:22001" and cluster.network.vxlan_id == 42
    assert cluster.pods.by_status == {"RUNNING": 3, "PROVISIONING": 1}
    assert to_wire(cluster) == placed


def test_catalog_examples_of_the_reference():
    gpus = {
        "gpus": [
            {
                "id": "NVIDIA GeForce RTX 4090",
                "name": "RTX 4090",
                "pool": "ADA_24",
                "manufacturer": "NVIDIA",
                "memory": 24,
                "secure": True,
                "community": True,
                "price": {"secure": 0.44, "community": 0.31, "serverless": 1.1},
                "maxCount": {"secure": 8, "community": 4},
                "availability": "HIGH",
                "dataCenters": [{"id": "US-KS-2", "name": "US Kansas 2", "availability": "HIGH"}],
                "cudaVersions": [{"version": "12.8", "available": True}],
            }
        ]
    }
    parsed = ListGpuTypesResponse.model_validate(gpus)
    assert parsed.gpus[0].max_count.community == 4
    assert parsed.gpus[0].cuda_versions[0].version == "12.8"
    assert to_wire(parsed) == gpus
    cpus = {
        "cpus": [
            {
                "id": "cpu3c",
                "name": "Compute-Optimized",
                "group": "Gen 3",
                "vcpu": {"min": 2, "max": 32},
                "ramGbPerVcpu": 2.5,
                "price": {"securePerVcpu": 0.04, "serverlessPerVcpu": 0.03},
            }
        ]
    }
    assert ListCpuTypesResponse.model_validate(cpus).cpus[0].ram_gb_per_vcpu == 2.5
    dcs = {
        "dataCenters": [
            {
                "id": "US-KS-2",
                "name": "US Kansas 2",
                "region": "NORTH_AMERICA",
                "globalNetwork": True,
                "networkVolumeTypes": ["STANDARD", "HIGH_PERFORMANCE"],
                "compliance": ["SOC_2_TYPE_2", "ISO_IEC_27001"],
                "gpuAvailability": [
                    {"id": "NVIDIA GeForce RTX 4090", "name": "RTX 4090", "availability": "HIGH"}
                ],
            }
        ]
    }
    parsed_dcs = ListDataCentersResponse.model_validate(dcs)
    assert parsed_dcs.data_centers[0].global_network is True
    assert to_wire(parsed_dcs) == dcs
    templates = {
        "templates": [
            {
                "id": "30zmvf89kd",
                "name": "PyTorch 2.8",
                "image": "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
                "args": "",
                "disk": 50,
                "mounts": {},
                "ports": ["8888/http", "22/tcp"],
                "env": {},
                "registry": None,
                "serverless": False,
                "public": True,
                "category": "NVIDIA",
                "startSsh": True,
                "startJupyter": True,
                "allowedCudaVersions": [],
            }
        ]
    }
    assert to_wire(ListTemplatesResponse.model_validate(templates)) == templates


def test_problem_body():
    problem = Problem.model_validate(
        {"title": "Not Found", "status": 404, "detail": "pod not found", "type": "about:blank"}
    )
    assert str(problem) == "404 Not Found: pod not found"
    assert problem.model_extra == {"type": "about:blank"}
    listed = Problem.of(422, "request body is invalid", ["$.disk: must be >= 1"])
    assert (
        str(listed) == "422 Unprocessable Entity: request body is invalid\n  - $.disk: must be >= 1"
    )
    assert to_wire(Problem.of(409, "pod is locked")) == {
        "title": "Conflict",
        "status": 409,
        "detail": "pod is locked",
    }
