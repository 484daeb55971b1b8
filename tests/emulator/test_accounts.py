"""Accounts and keys: isolation, read-only keys, SSH keys, registry credentials."""

from __future__ import annotations

from emu_helpers import create, gpu_pod, problem


def test_other_accounts_pod_is_404_and_unlisted(http, emulator):
    pod = create(http, gpu_pod(name="private"))
    with emulator.http(emulator.other_key) as other:
        missing = problem(other.get(f"/v2/pods/{pod['id']}"), 404)
        assert missing == problem(other.get("/v2/pods/no-such-pod-x"), 404) | {
            "detail": missing["detail"]
        }
        assert pod["id"] not in [p["id"] for p in other.get("/v2/pods").json()["pods"]]
        problem(other.patch(f"/v2/pods/{pod['id']}", json={"name": "stolen"}), 404)
        problem(other.post(f"/v2/pods/{pod['id']}/action", json={"action": "stop"}), 404)
        problem(other.delete(f"/v2/pods/{pod['id']}"), 404)
    assert http.get(f"/v2/pods/{pod['id']}").json()["name"] == "private"


def test_other_accounts_cluster_is_404(http, emulator):
    body = {
        "name": "mine",
        "type": "TRAINING",
        "image": "i",
        "compute": {"gpuTypeId": "NVIDIA GeForce RTX 4090", "gpuCountPerPod": 1, "podCount": 2},
    }
    cluster = http.post("/v2/clusters", json=body).json()
    with emulator.http(emulator.other_key) as other:
        problem(other.get(f"/v2/clusters/{cluster['id']}"), 404)
        problem(other.get(f"/v2/clusters/{cluster['id']}/pods"), 404)
        problem(other.delete(f"/v2/clusters/{cluster['id']}"), 404)
        assert cluster["id"] not in [c["id"] for c in other.get("/v2/clusters").json()["clusters"]]


def test_read_only_key_reads_but_cannot_write(http, emulator):
    pod = create(http, gpu_pod())
    with emulator.http(emulator.readonly_key) as ro:
        assert ro.get(f"/v2/pods/{pod['id']}").status_code == 200
        assert ro.get("/v2/pods").status_code == 200
        assert ro.get("/v2/account/ssh-keys").status_code == 200
        for response in (
            ro.post("/v2/pods", json=gpu_pod()),
            ro.patch(f"/v2/pods/{pod['id']}", json={"name": "x"}),
            ro.post(f"/v2/pods/{pod['id']}/action", json={"action": "terminate"}),
            ro.delete(f"/v2/pods/{pod['id']}"),
            ro.put("/v2/account/ssh-keys", json={"keys": []}),
            ro.post("/v2/registries", json={"name": "r", "username": "u", "password": "p"}),
            ro.delete("/v1/containerregistryauth/whatever"),
        ):
            body = problem(response, 403)
            assert "read-only" in body["detail"]
            assert "RateLimit" in response.headers
    assert http.get(f"/v2/pods/{pod['id']}").json()["name"] == pod["name"]


def test_ssh_keys_put_replaces_and_validates(emulator):
    with emulator.http(emulator.other_key) as http:
        keys = [
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA one@host",
            "ssh-rsa AAAAB3NzaC1yc2E two@host",
        ]
        put = http.put("/v2/account/ssh-keys", json={"keys": keys})
        assert put.status_code == 200 and put.json() == {"keys": keys}
        assert http.get("/v2/account/ssh-keys").json() == {"keys": keys}
        problem(http.put("/v2/account/ssh-keys", json={"keys": ["not a key"]}), 422)
        problem(http.put("/v2/account/ssh-keys", json={"keys": keys, "extra": 1}), 422)
        assert http.put("/v2/account/ssh-keys", json={"keys": []}).json() == {"keys": []}
    with emulator.http() as mine:
        assert mine.get("/v2/account/ssh-keys").json()["keys"] != keys


def test_registry_credentials_are_write_only(http, emulator):
    secret = "registry-pass-do-not-show"
    created = http.post(
        "/v2/registries", json={"name": "private", "username": "bob", "password": secret}
    )
    assert created.status_code == 201
    record = created.json()
    assert set(record) == {"id", "name"} and record["name"] == "private"
    assert http.get(f"/v2/registries/{record['id']}").json() == record
    listing = http.get("/v2/registries").json()["registries"]
    assert record in listing
    for text in (created.text, http.get("/v2/registries").text):
        assert secret not in text and "bob" not in text
    problem(http.post("/v2/registries", json={"name": "x", "username": "u"}), 422)
    with emulator.http(emulator.other_key) as other:
        problem(other.get(f"/v2/registries/{record['id']}"), 404)
        problem(other.delete(f"/v1/containerregistryauth/{record['id']}"), 404)
    assert http.delete(f"/v1/containerregistryauth/{record['id']}").status_code == 204
    problem(http.get(f"/v2/registries/{record['id']}"), 404)
    other_one = http.post(
        "/v2/registries", json={"name": "two", "username": "u", "password": "p"}
    ).json()
    assert http.delete(f"/v2/registries/{other_one['id']}").status_code == 204
    problem(http.delete(f"/v2/registries/{other_one['id']}"), 404)
    assert secret not in emulator.log_path.read_text()


def test_pod_may_name_a_registry(http):
    registry = http.post(
        "/v2/registries", json={"name": "r", "username": "u", "password": "p"}
    ).json()
    pod = create(http, gpu_pod(registry=registry["id"]))
    assert pod["registry"] == registry["id"]


def test_pod_cannot_name_an_unknown_or_other_accounts_registry(http, emulator):
    mine = http.post("/v2/registries", json={"name": "mine", "username": "u", "password": "p"})
    registry_id = mine.json()["id"]
    with emulator.http(emulator.other_key) as other:
        body = problem(other.post("/v2/pods", json=gpu_pod(registry=registry_id)), 404)
        assert body["errors"][0].startswith("$.registry:")
        assert body == problem(other.post("/v2/pods", json=gpu_pod(registry="reg_nope")), 404) | {
            "detail": body["detail"],
            "errors": body["errors"],
        }
        pod = create(other, gpu_pod())
        problem(other.patch(f"/v2/pods/{pod['id']}", json={"registry": registry_id}), 404)
        assert other.get(f"/v2/pods/{pod['id']}").json()["registry"] is None
    pod = create(http, gpu_pod())
    patched = http.patch(f"/v2/pods/{pod['id']}", json={"registry": registry_id})
    assert patched.status_code == 200 and patched.json()["registry"] == registry_id
    cleared = http.patch(f"/v2/pods/{pod['id']}", json={"registry": None})
    assert cleared.status_code == 200 and cleared.json()["registry"] is None
