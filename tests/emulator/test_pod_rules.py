"""Every request rule of the seed, end to end with its status, and PATCH semantics."""

from __future__ import annotations

import pytest
from emu_helpers import GPU, create, gpu_pod, problem, wait_status

CPU = {"id": "cpu3c", "vcpuCount": 2}


def cpu_pod(**fields):
    return {"name": "cpu-pod", "image": "ubuntu:24.04", "cpu": dict(CPU), **fields}


@pytest.mark.parametrize(
    ("body", "status", "path"),
    [
        ({"name": "x", "image": "i"}, 400, "$"),
        ({"name": "x", "image": "i", "gpu": {"id": GPU}, "cpu": CPU}, 400, "$"),
        (cpu_pod(allowedCudaVersions=["12.8"]), 400, "$.allowedCudaVersions"),
        (cpu_pod(minCudaVersion="12"), 400, "$.minCudaVersion"),
        (gpu_pod(allowedCudaVersions=["12.8"], minCudaVersion="12"), 400, "$"),
        (
            gpu_pod(
                mounts={
                    "persistent": {"size": 20, "path": "/w"},
                    "network": [{"volumeId": "v", "path": "/n"}],
                }
            ),
            400,
            "$.mounts",
        ),
        (cpu_pod(mounts={"persistent": {"size": 20, "path": "/w"}}), 400, "$.mounts.persistent"),
        (
            gpu_pod(
                mounts={
                    "network": [{"volumeId": "a", "path": "/a"}, {"volumeId": "b", "path": "/b"}]
                }
            ),
            422,
            "$.mounts.network",
        ),
        (gpu_pod(mounts={"persistent": {"size": 20}}), 422, "$.mounts.persistent.path"),
        (gpu_pod(mounts={"network": [{"path": "/n"}]}), 422, "$.mounts.network[0].volumeId"),
        (
            gpu_pod(mounts={"persistent": {"size": 5, "path": "/w"}}),
            422,
            "$.mounts.persistent.size",
        ),
        (gpu_pod(disk=0), 422, "$.disk"),
        (gpu_pod(gpu={"id": GPU, "count": 0}), 422, "$.gpu.count"),
        (cpu_pod(cpu={"id": "cpu3c", "vcpuCount": 1}), 422, "$.cpu.vcpuCount"),
        (cpu_pod(cpu={"id": "cpu3c", "vcpuCount": 6}), 422, "$.cpu.vcpuCount"),
        (cpu_pod(cpu={"id": "cpu3c", "vcpuCount": 2, "memory": 8}), 422, "$.cpu"),
        (gpu_pod(ports=["8888"]), 422, "$.ports[0]"),
        (gpu_pod(ports=["8888/ftp"]), 422, "$.ports[0]"),
        (gpu_pod(allowedCudaVersions=["12"]), 422, "$.allowedCudaVersions[0]"),
        (gpu_pod(minCudaVersion="twelve"), 422, "$.minCudaVersion"),
        # 5,000 digits passed the pattern, then int() refused them in placement: a 500
        (gpu_pod(minCudaVersion="1" * 5000), 422, "$.minCudaVersion"),
        (gpu_pod(allowedCudaVersions=["12." + "8" * 5000]), 422, "$.allowedCudaVersions[0]"),
        (gpu_pod(bogus=1), 422, "$"),
        (gpu_pod(name=""), 422, "$.name"),
        ({"name": "x", "gpu": {"id": GPU}}, 422, "$.image"),
        (gpu_pod(cloud="PRIVATE"), 422, "$.cloud"),
    ],
)
def test_create_rules_map_to_the_seed_statuses(http, body, status, path):
    result = problem(http.post("/v2/pods", json=body), status)
    assert result["errors"], result
    assert any(e.startswith(path) for e in result["errors"]), result["errors"]


def test_unknown_property_is_named(http):
    result = problem(http.post("/v2/pods", json=gpu_pod(bogus=1, extra=2)), 422)
    assert any("'bogus'" in e and "'extra'" in e for e in result["errors"])


def test_non_object_body_is_400(http):
    problem(http.post("/v2/pods", json=[1, 2]), 400)


def test_cpu_pod_memory_from_flavor_and_no_cuda(http):
    flavors = {c["id"]: c for c in http.get("/v2/catalog/cpus").json()["cpus"]}
    flavor = flavors["cpu3c"]
    pod = create(http, cpu_pod(cpu={"id": "cpu3c", "vcpuCount": 4}))
    assert "gpu" not in pod
    assert pod["cpu"]["id"] == "cpu3c" and pod["cpu"]["vcpuCount"] == 4
    assert pod["cpu"]["memory"] == max(1, int(4 * flavor["ramGbPerVcpu"]))
    assert pod["cudaVersion"] is None
    assert pod["cost"] == pytest.approx(4 * flavor["price"]["securePerVcpu"], rel=1e-3)
    running = wait_status(http, pod["id"], "RUNNING")
    assert "gpus" not in running["runtime"]


def test_gpu_cost_is_price_times_count(http):
    gpus = {g["id"]: g for g in http.get("/v2/catalog/gpus").json()["gpus"]}
    pod = create(http, gpu_pod(gpu={"id": GPU, "count": 2}))
    assert pod["cost"] == pytest.approx(2 * gpus[GPU]["price"]["secure"], rel=1e-3)


def test_unknown_gpu_type_is_a_clear_400(http):
    result = problem(http.post("/v2/pods", json=gpu_pod(gpu={"id": "NVIDIA Imaginary 9000"})), 400)
    assert "NVIDIA Imaginary 9000" in result["detail"]


def test_unmatched_cuda_version_is_a_capacity_error(http):
    result = problem(http.post("/v2/pods", json=gpu_pod(allowedCudaVersions=["9.9"])), 400)
    assert "9.9" in result["detail"]
    problem(http.post("/v2/pods", json=gpu_pod(minCudaVersion="99")), 400)


def _gpu_availability(http):
    response = http.get("/v2/catalog/gpus", params={"include": "AVAILABILITY", "product": "POD"})
    assert response.status_code == 200, response.text
    return {g["id"]: g for g in response.json()["gpus"]}[GPU]


def test_cuda_constraints_pick_a_matching_host(http):
    versions = sorted(
        {v["version"] for v in _gpu_availability(http)["cudaVersions"]},
        key=lambda v: tuple(int(x) for x in v.split(".")),
    )
    exact = versions[0]
    pod = create(http, gpu_pod(allowedCudaVersions=[exact]))
    assert pod["cudaVersion"] == exact
    floor = versions[-1]
    pod = create(http, gpu_pod(minCudaVersion=floor))
    assert tuple(int(x) for x in pod["cudaVersion"].split(".")) >= tuple(
        int(x) for x in floor.split(".")
    )


def test_data_center_preference_is_honoured(http):
    centers = [
        d["id"] for d in _gpu_availability(http)["dataCenters"] if d["availability"] != "NONE"
    ]
    pod = create(http, gpu_pod(dataCenterIds=[centers[-1]]))
    assert pod["dataCenterId"] == centers[-1]
    problem(http.post("/v2/pods", json=gpu_pod(dataCenterIds=["XX-NOWHERE-1"])), 400)


def test_global_networking_only_where_supported(http, emulator):
    centers = http.get("/v2/catalog/datacenters").json()["dataCenters"]
    gpu_centers = {
        d["id"] for d in _gpu_availability(http)["dataCenters"] if d["availability"] != "NONE"
    }
    with_gn = [d["id"] for d in centers if d["globalNetwork"] and d["id"] in gpu_centers]
    without_gn = [d["id"] for d in centers if not d["globalNetwork"] and d["id"] in gpu_centers]
    pod = create(http, gpu_pod(globalNetworking=True, dataCenterIds=with_gn[:1]))
    gn = pod["globalNetworking"]
    assert gn["enabled"] is True and gn["ip"]
    assert gn["internalDns"].startswith(pod["id"] + ".")
    if without_gn:
        result = problem(
            http.post("/v2/pods", json=gpu_pod(globalNetworking=True, dataCenterIds=without_gn)),
            400,
        )
        assert "global" in result["detail"].lower()
    problem(http.post("/v2/pods", json=cpu_pod(globalNetworking=True)), 400)


def test_start_ssh_injects_public_key_from_account_keys(emulator):
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTests me@test"
    with emulator.http(emulator.other_key) as http:
        assert http.put("/v2/account/ssh-keys", json={"keys": []}).status_code == 200
        no_keys = create(http, gpu_pod(startSsh=True))
        assert "PUBLIC_KEY" not in no_keys["env"]
        assert http.put("/v2/account/ssh-keys", json={"keys": [key]}).status_code == 200
        pod = create(http, gpu_pod(startSsh=True))
        assert pod["env"]["PUBLIC_KEY"] == key
        own = create(http, gpu_pod(startSsh=True, env={"PUBLIC_KEY": "mine"}))
        assert own["env"]["PUBLIC_KEY"] == "mine"
        plain = create(http, gpu_pod())
        assert "PUBLIC_KEY" not in plain["env"]


def test_start_jupyter_injects_a_password_unless_set(http):
    pod = create(http, gpu_pod(startJupyter=True, ports=["8888/http"]))
    password = pod["env"]["JUPYTER_PASSWORD"]
    assert len(password) >= 12
    other = create(http, gpu_pod(startJupyter=True))
    assert other["env"]["JUPYTER_PASSWORD"] != password
    own = create(http, gpu_pod(startJupyter=True, env={"JUPYTER_PASSWORD": "set-by-me"}))
    assert own["env"]["JUPYTER_PASSWORD"] == "set-by-me"
    assert "startJupyter" not in http.get(f"/v2/pods/{pod['id']}").json()


# --- PATCH ---------------------------------------------------------------------------------


def test_patch_is_a_merge_patch(http):
    pod = create(http, gpu_pod(env={"A": "1"}, ports=["22/tcp"], args="--x"))
    patched = http.patch(f"/v2/pods/{pod['id']}", json={"name": "renamed", "env": {"B": "2"}})
    assert patched.status_code == 200
    body = patched.json()
    assert body["name"] == "renamed"
    assert body["env"] == {"B": "2"}
    assert body["ports"] == ["22/tcp"] and body["args"] == "--x" and body["image"] == pod["image"]
    assert http.get(f"/v2/pods/{pod['id']}").json()["name"] == "renamed"


@pytest.mark.parametrize("flag", ["startSsh", "startJupyter"])
def test_patch_refuses_create_time_flags(http, flag):
    pod = create(http, gpu_pod())
    result = problem(http.patch(f"/v2/pods/{pod['id']}", json={flag: True}), 422)
    assert any(flag in e for e in result["errors"])


def test_patch_mount_rules(http):
    persistent = create(http, gpu_pod(mounts={"persistent": {"size": 20, "path": "/workspace"}}))
    where = create(http, gpu_pod())["dataCenterId"]
    volume = http.post(
        "/v2/network-volumes", json={"name": "rules", "size": 10, "dataCenter": where}
    ).json()["id"]
    network = create(http, gpu_pod(mounts={"network": [{"volumeId": volume, "path": "/data"}]}))
    bare = create(http, gpu_pod())
    url = "/v2/pods/{}".format
    # omitted or {} leaves the mount unchanged
    assert (
        http.patch(url(persistent["id"]), json={"name": "p"}).json()["mounts"]
        == persistent["mounts"]
    )
    assert (
        http.patch(url(persistent["id"]), json={"mounts": {}}).json()["mounts"]
        == persistent["mounts"]
    )
    # the path may change
    moved = http.patch(
        url(persistent["id"]), json={"mounts": {"persistent": {"size": 20, "path": "/w2"}}}
    )
    assert moved.status_code == 200 and moved.json()["mounts"]["persistent"]["path"] == "/w2"
    moved = http.patch(
        url(network["id"]), json={"mounts": {"network": [{"volumeId": volume, "path": "/d2"}]}}
    )
    assert moved.status_code == 200 and moved.json()["mounts"]["network"][0]["path"] == "/d2"
    # network: [] is 400
    problem(http.patch(url(network["id"]), json={"mounts": {"network": []}}), 400)
    # a new kind is 400
    problem(
        http.patch(url(network["id"]), json={"mounts": {"persistent": {"size": 20, "path": "/p"}}}),
        400,
    )
    problem(
        http.patch(
            url(persistent["id"]), json={"mounts": {"network": [{"volumeId": "v", "path": "/n"}]}}
        ),
        400,
    )
    problem(
        http.patch(url(bare["id"]), json={"mounts": {"persistent": {"size": 20, "path": "/p"}}}),
        400,
    )
    # volumeId is immutable
    problem(
        http.patch(
            url(network["id"]), json={"mounts": {"network": [{"volumeId": "vol-2", "path": "/d"}]}}
        ),
        400,
    )
    # both kinds is 400, incomplete entries are 422
    problem(
        http.patch(
            url(network["id"]),
            json={
                "mounts": {
                    "persistent": {"size": 20, "path": "/p"},
                    "network": [{"volumeId": "vol-1", "path": "/d"}],
                }
            },
        ),
        400,
    )
    problem(http.patch(url(network["id"]), json={"mounts": {"network": [{"path": "/d"}]}}), 422)


def test_patch_unknown_pod_is_404(http):
    problem(http.patch("/v2/pods/doesnotexist", json={"name": "x"}), 404)


def test_patch_ports_changes_runtime_ports_after_restart(http):
    pod = create(http, gpu_pod(ports=["8888/http"]))
    wait_status(http, pod["id"], "RUNNING")
    assert (
        http.patch(f"/v2/pods/{pod['id']}", json={"ports": ["8888/http", "22/tcp"]}).status_code
        == 200
    )
    http.post(f"/v2/pods/{pod['id']}/action", json={"action": "restart"})
    running = wait_status(http, pod["id"], "RUNNING")
    assert {p["private"] for p in running["runtime"]["ports"]} == {8888, 22}
    assert running["ssh"]["direct"] is not None


def test_patch_global_networking_takes_effect_on_next_start(http):
    centers = http.get("/v2/catalog/datacenters").json()["dataCenters"]
    gpu_centers = {
        d["id"] for d in _gpu_availability(http)["dataCenters"] if d["availability"] != "NONE"
    }
    with_gn = [d["id"] for d in centers if d["globalNetwork"] and d["id"] in gpu_centers]
    without_gn = [d["id"] for d in centers if not d["globalNetwork"] and d["id"] in gpu_centers]
    pod = create(http, gpu_pod(dataCenterIds=with_gn[:1]))
    assert pod["globalNetworking"] == {"enabled": False}
    wait_status(http, pod["id"], "RUNNING")
    patched = http.patch(f"/v2/pods/{pod['id']}", json={"globalNetworking": True})
    assert patched.status_code == 200
    assert patched.json()["globalNetworking"] == {"enabled": False}  # not live
    http.post(f"/v2/pods/{pod['id']}/action", json={"action": "restart"})
    after = wait_status(http, pod["id"], "RUNNING")
    assert after["globalNetworking"]["enabled"] is True
    assert after["globalNetworking"]["internalDns"].startswith(pod["id"] + ".")
    if without_gn:
        other = create(http, gpu_pod(dataCenterIds=without_gn[:1]))
        problem(http.patch(f"/v2/pods/{other['id']}", json={"globalNetworking": True}), 400)


def test_patch_with_template_applies_container_settings(http):
    pod = create(http, gpu_pod(env={"KEEP": "no"}))
    patched = http.patch(
        f"/v2/pods/{pod['id']}", json={"templateId": "tpl-own", "env": {"EXTRA": "1"}}
    )
    assert patched.status_code == 200
    body = patched.json()
    assert body["image"] == "me/own-image:1" and body["disk"] == 33
    assert body["env"] == {"FROM_TEMPLATE": "yes", "SHARED": "template", "EXTRA": "1"}
    assert body["mounts"] == {}  # mounts are not applied on update
    assert body["template"] is None
    problem(http.patch(f"/v2/pods/{pod['id']}", json={"templateId": "tpl-missing"}), 404)
    problem(http.patch(f"/v2/pods/{pod['id']}", json={"templateId": "tpl-serverless"}), 422)


def test_community_cloud_uses_its_price(http):
    gpus = {g["id"]: g for g in http.get("/v2/catalog/gpus").json()["gpus"]}
    pod = create(http, gpu_pod(cloud="COMMUNITY", dataCenterIds=[]))
    assert pod["cloud"] == "COMMUNITY"
    assert pod["cost"] == pytest.approx(gpus[GPU]["price"]["community"], rel=1e-3)
    result = problem(http.post("/v2/pods", json=cpu_pod(cloud="COMMUNITY")), 400)
    assert "SECURE" in result["detail"]


def test_invalid_vcpu_count_for_flavor_is_400(http):
    flavor = next(c for c in http.get("/v2/catalog/cpus").json()["cpus"] if c["id"] == "cpu3c")
    too_many = flavor["vcpu"]["max"] * 2
    result = problem(
        http.post("/v2/pods", json=cpu_pod(cpu={"id": "cpu3c", "vcpuCount": too_many})), 400
    )
    assert str(too_many) in result["detail"]
    problem(http.post("/v2/pods", json=cpu_pod(cpu={"id": "cpu-unknown", "vcpuCount": 2})), 400)


def test_gpu_count_beyond_the_largest_machine_is_a_clear_400(http):
    gpus = {g["id"]: g for g in http.get("/v2/catalog/gpus").json()["gpus"]}
    largest = gpus[GPU]["maxCount"]["secure"]
    assert create(http, gpu_pod(gpu={"id": GPU, "count": largest}))["gpu"]["count"] == largest
    result = problem(
        http.post("/v2/pods", json=gpu_pod(gpu={"id": GPU, "count": largest + 1})), 400
    )
    assert f"{largest + 1} x {GPU}" in result["detail"] and str(largest) in result["detail"]
