"""PATCH /v2/pods/{id}: the update request and the mount rules that need the existing pod."""

from __future__ import annotations

import pytest

from podbook.api import (
    Mounts,
    PodActionRequest,
    RequestRejected,
    UpdatePodRequest,
    check_patch_mounts,
    to_wire,
    validate_request,
)

PERSISTENT = {"persistent": {"size": 20, "path": "/workspace"}}
NETWORK = {"network": [{"volumeId": "vol_a", "path": "/data"}]}


def rejected(data) -> RequestRejected:
    with pytest.raises(RequestRejected) as info:
        validate_request(UpdatePodRequest, data)
    return info.value


def test_patch_of_container_fields_name_lock_and_networking():
    data = {
        "name": "renamed",
        "image": "runpod/pytorch:2.9",
        "args": "",
        "disk": 80,
        "ports": ["8888/http"],
        "env": {"A": "1"},
        "registry": None,
        "locked": True,
        "globalNetworking": False,
        "templateId": "runpod-comfyui",
        "mounts": {"persistent": {"size": 40, "path": "/w2"}},
    }
    patch = validate_request(UpdatePodRequest, data)
    assert patch.locked is True and patch.disk == 80
    assert to_wire(patch) == data


def test_empty_patch_and_empty_mounts_change_nothing():
    assert to_wire(validate_request(UpdatePodRequest, {})) == {}
    assert to_wire(validate_request(UpdatePodRequest, {"mounts": {}})) == {"mounts": {}}
    assert check_patch_mounts(PERSISTENT, {}) == []
    assert check_patch_mounts(None, None) == []


@pytest.mark.parametrize("flag", ["startSsh", "startJupyter"])
def test_create_time_flags_are_refused(flag):
    error = rejected({flag: True})
    assert error.status == 422
    assert error.errors == [
        f"$: additional property '{flag}' not allowed ({flag} is a create-time flag;"
        " it is never returned and cannot be changed by PATCH)"
    ]


@pytest.mark.parametrize(
    ("data", "status", "line"),
    [
        (
            {"mounts": {"network": []}},
            400,
            "$.mounts.network: an empty list cannot clear the mount (clearing mounts is"
            " unsupported); omit mounts to keep the current one",
        ),
        (
            {"mounts": {**PERSISTENT, **NETWORK}},
            400,
            "$.mounts: persistent and network mounts are mutually exclusive; send only one",
        ),
        (
            {"mounts": {"network": [{"path": "/d"}]}},
            422,
            "$.mounts.network[0].volumeId: is required",
        ),
        ({"mounts": {"persistent": {"path": "/d"}}}, 422, "$.mounts.persistent.size: is required"),
        ({"name": ""}, 422, "$.name: must not be empty"),
        ({"locked": "yes"}, 422, "$.locked: must be a boolean"),
        ({"locked": None}, 422, "$.locked: must not be null; omit the property instead"),
        ({"gpu": {"id": "x"}}, 422, "$: additional property 'gpu' not allowed"),
        ({"disk": 0}, 422, "$.disk: must be >= 1"),
    ],
)
def test_patch_rules(data, status, line):
    error = rejected(data)
    assert (error.status, error.errors) == (status, [line])


@pytest.mark.parametrize(
    ("existing", "patch", "line"),
    [
        (
            NETWORK,
            PERSISTENT,
            "$.mounts.persistent: the mount kind is fixed at creation and this pod has a network"
            " mount; only an existing mount's path (or persistent size) can change",
        ),
        (
            PERSISTENT,
            NETWORK,
            "$.mounts.network: the mount kind is fixed at creation and this pod has a persistent"
            " mount; only an existing mount's path (or persistent size) can change",
        ),
        (
            {},
            NETWORK,
            "$.mounts.network: the mount kind is fixed at creation and this pod has no mount;"
            " only an existing mount's path (or persistent size) can change",
        ),
        (
            None,
            PERSISTENT,
            "$.mounts.persistent: the mount kind is fixed at creation and this pod has no mount;"
            " only an existing mount's path (or persistent size) can change",
        ),
        (
            NETWORK,
            {"network": [{"volumeId": "vol_b", "path": "/data"}]},
            "$.mounts.network[0].volumeId: is immutable; this pod mounts 'vol_a'"
            " (only the path can change)",
        ),
    ],
)
def test_patch_mount_rules_needing_the_pod(existing, patch, line):
    assert check_patch_mounts(existing, patch) == [line]


def test_patch_mount_changes_that_are_allowed():
    assert check_patch_mounts(NETWORK, {"network": [{"volumeId": "vol_a", "path": "/new"}]}) == []
    assert check_patch_mounts(PERSISTENT, {"persistent": {"size": 50, "path": "/new"}}) == []
    existing = Mounts.model_validate(NETWORK)
    patch = validate_request(
        UpdatePodRequest, {"mounts": {"network": [{"volumeId": "vol_a", "path": "/x"}]}}
    )
    assert check_patch_mounts(existing, patch.mounts) == []


@pytest.mark.parametrize("action", ["start", "stop", "restart", "terminate"])
def test_action_request(action):
    assert validate_request(PodActionRequest, {"action": action}).action == action


@pytest.mark.parametrize(
    ("data", "line"),
    [
        ({"action": "reboot"}, "$.action: must be 'start', 'stop', 'restart' or 'terminate'"),
        ({}, "$.action: is required"),
        ({"action": "stop", "force": True}, "$: additional property 'force' not allowed"),
    ],
)
def test_bad_action_request(data, line):
    with pytest.raises(RequestRejected) as info:
        validate_request(PodActionRequest, data)
    assert (info.value.status, info.value.errors) == (422, [line])
