"""Clusters, SSH keys, registry credentials and network volumes: their requests' rules."""

from __future__ import annotations

import pytest

from podbook.api import (
    CreateClusterRequest,
    CreateNetworkVolumeRequest,
    CreateRegistryRequest,
    RequestRejected,
    UpdateClusterRequest,
    UpdateSshKeysRequest,
    to_wire,
    validate_request,
)

COMPUTE = {"gpuTypeId": "NVIDIA H100 80GB HBM3", "gpuCountPerPod": 8, "podCount": 2}
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILXGDN/SclOozk1xsDztpmhGiKkkrfQB9SKoO8dSIQQZ me@example.com"


def reject(model, data) -> RequestRejected:
    with pytest.raises(RequestRejected) as info:
        validate_request(model, data)
    return info.value


def test_create_cluster():
    data = {
        "name": "train",
        "type": "SLURM",
        "compute": COMPUTE,
        "image": "runpod/pytorch:2.8",
        "ports": ["22/tcp"],
        "dataCenterIds": ["US-TX-3"],
        "startSsh": True,
    }
    cluster = validate_request(CreateClusterRequest, data)
    assert cluster.compute.pod_count == 2 and cluster.type == "SLURM"
    assert to_wire(cluster) == data


@pytest.mark.parametrize(
    ("data", "status", "line"),
    [
        ({"compute": {**COMPUTE, "podCount": 1}}, 422, "$.compute.podCount: must be >= 2"),
        ({"compute": {**COMPUTE, "podCount": 251}}, 422, "$.compute.podCount: must be <= 250"),
        (
            {"compute": {**COMPUTE, "gpuCountPerPod": 0}},
            422,
            "$.compute.gpuCountPerPod: must be >= 1",
        ),
        ({"compute": {**COMPUTE, "gpuTypeId": ""}}, 422, "$.compute.gpuTypeId: must not be empty"),
        (
            {"compute": {**COMPUTE, "extra": 1}},
            422,
            "$.compute: additional property 'extra' not allowed",
        ),
        ({"type": "K8S"}, 422, "$.type: must be 'APPLICATION', 'TRAINING', 'SLURM' or 'RAY'"),
        ({"registry": "reg_1"}, 422, "$: additional property 'registry' not allowed"),
        (
            {
                "mounts": {
                    "persistent": {"size": 10, "path": "/w"},
                    "network": [{"volumeId": "v", "path": "/d"}],
                }
            },
            400,
            "$.mounts: persistent and network mounts are mutually exclusive; send only one",
        ),
    ],
)
def test_create_cluster_rules(data, status, line):
    error = reject(CreateClusterRequest, {"name": "c", "type": "RAY", "compute": COMPUTE, **data})
    assert (error.status, error.errors) == (status, [line])


def test_update_cluster_is_a_rename():
    assert validate_request(UpdateClusterRequest, {"name": "new"}).name == "new"
    assert reject(UpdateClusterRequest, {}).errors == [
        "$: at least one property is required (name)"
    ]
    assert reject(UpdateClusterRequest, {"type": "RAY"}).errors == [
        "$: additional property 'type' not allowed"
    ]


def test_ssh_keys():
    assert validate_request(UpdateSshKeysRequest, {"keys": [KEY]}).keys == [KEY]
    assert validate_request(UpdateSshKeysRequest, {"keys": []}).keys == []
    error = reject(UpdateSshKeysRequest, {"keys": [KEY, "not a key"]})
    assert (error.status, error.errors) == (
        422,
        [
            "$.keys[1]: must be an authorized_keys line '<type> <base64-key> [comment]'"
            " (e.g. the content of ~/.ssh/id_ed25519.pub)"
        ],
    )
    assert reject(UpdateSshKeysRequest, {}).errors == ["$.keys: is required"]


def test_registry_password_is_sent_but_never_shown():
    secret = "s3cr3t-registry-pass"
    request = validate_request(
        CreateRegistryRequest, {"name": "ghcr", "username": "me", "password": secret}
    )
    assert to_wire(request) == {"name": "ghcr", "username": "me", "password": secret}
    assert secret not in repr(request) and secret not in str(request)
    error = reject(CreateRegistryRequest, {"name": "ghcr", "username": "me", "password": ""})
    assert error.errors == ["$.password: must not be empty"]


def test_network_volume_request():
    data = {"name": "ds", "size": 50, "dataCenter": "EU-RO-1", "type": "STANDARD"}
    assert to_wire(validate_request(CreateNetworkVolumeRequest, data)) == data
    assert reject(CreateNetworkVolumeRequest, {**data, "size": 5000}).errors == [
        "$.size: must be <= 4096"
    ]
