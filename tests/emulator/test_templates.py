"""The seed's five template rules, with an own template (from the config) and public ones."""

from __future__ import annotations

from emu_helpers import GPU, create, problem

BASE = {"name": "from-template", "templateId": "tpl-own", "gpu": {"id": GPU}}


def test_template_resolves_into_the_pod(http):
    pod = create(http, BASE)
    assert pod["image"] == "me/own-image:1"
    assert pod["args"] == "--serve"
    assert pod["disk"] == 33
    assert pod["ports"] == ["8888/http", "22/tcp"]
    assert pod["mounts"] == {"persistent": {"size": 25, "path": "/workspace"}}
    assert pod["env"]["FROM_TEMPLATE"] == "yes"
    assert pod["env"]["JUPYTER_PASSWORD"]  # the template's startJupyter
    assert pod["cudaVersion"] == "12.8"  # the template's allowedCudaVersions
    assert pod["template"] is None


def test_body_overrides_and_env_merges_per_key(http):
    pod = create(
        http,
        {
            **BASE,
            "image": "mine:2",
            "disk": 50,
            "ports": ["22/tcp"],
            "env": {"SHARED": "body", "NEW": "1"},
        },
    )
    assert pod["image"] == "mine:2" and pod["disk"] == 50 and pod["ports"] == ["22/tcp"]
    assert pod["args"] == "--serve"
    assert pod["env"]["SHARED"] == "body"
    assert pod["env"]["NEW"] == "1"
    assert pod["env"]["FROM_TEMPLATE"] == "yes"
    no_jupyter = create(http, {**BASE, "startJupyter": False})
    assert "JUPYTER_PASSWORD" not in no_jupyter["env"]


def test_cuda_fields_replace_the_templates(http):
    versions = {
        v["version"]
        for g in http.get(
            "/v2/catalog/gpus", params={"include": "AVAILABILITY", "product": "POD"}
        ).json()["gpus"]
        if g["id"] == GPU
        for v in g["cudaVersions"]
    }
    other = sorted(versions - {"12.8"})
    if other:
        pod = create(http, {**BASE, "allowedCudaVersions": [other[0]]})
        assert pod["cudaVersion"] == other[0]
    pod = create(http, {**BASE, "minCudaVersion": "11"})
    assert pod["cudaVersion"] in versions


def test_cpu_pods_ignore_template_cuda_and_persistent_mount(http):
    pod = create(
        http, {"name": "cpu", "templateId": "tpl-own", "cpu": {"id": "cpu3c", "vcpuCount": 2}}
    )
    assert pod["mounts"] == {}
    assert pod["cudaVersion"] is None
    assert pod["image"] == "me/own-image:1"


def test_unknown_or_other_accounts_template_is_404(http, emulator):
    problem(http.post("/v2/pods", json={**BASE, "templateId": "tpl-missing"}), 404)
    with emulator.http(emulator.other_key) as other:
        body = problem(other.post("/v2/pods", json=BASE), 404)
        assert "tpl-own" in body["detail"]


def test_serverless_template_is_422(http):
    problem(http.post("/v2/pods", json={**BASE, "templateId": "tpl-serverless"}), 422)


def test_public_catalog_template(http):
    listing = http.get("/v2/catalog/templates")
    assert listing.status_code == 200
    templates = listing.json()["templates"]
    assert templates and all(t["public"] for t in templates)
    pod_template = next(t for t in templates if not t["serverless"])
    pod = create(http, {"name": "public", "templateId": pod_template["id"], "gpu": {"id": GPU}})
    assert pod["image"] == pod_template["image"]
    assert pod["template"] is None
    serverless = [t for t in templates if t["serverless"]]
    if serverless:
        problem(
            http.post(
                "/v2/pods",
                json={"name": "x", "templateId": serverless[0]["id"], "gpu": {"id": GPU}},
            ),
            422,
        )


def test_later_template_edits_do_not_affect_pods(start_emulator):
    config = (
        '[[accounts]]\nid = "default"\n\n[[accounts.templates]]\n'
        'id = "tpl-edit"\nimage = "first:1"\nenv = { V = "1" }\n'
    )
    emu = start_emulator(config_text=config)
    with emu.http() as http:
        pod = create(http, {"name": "p", "templateId": "tpl-edit", "gpu": {"id": GPU}})
    emu.config.write_text(config.replace("first:1", "second:2").replace('"1"', '"2"'))
    emu.restart()
    with emu.http() as http:
        again = http.get(f"/v2/pods/{pod['id']}").json()
        assert again["image"] == "first:1" and again["env"] == {"V": "1"}
        fresh = create(http, {"name": "q", "templateId": "tpl-edit", "gpu": {"id": GPU}})
        assert fresh["image"] == "second:2" and fresh["env"] == {"V": "2"}
    emu.stop()


def test_own_templates_are_listed_only_for_their_account(http, emulator):
    own = http.get("/v2/templates").json()["templates"]
    assert {t["id"] for t in own} >= {"tpl-own", "tpl-serverless"}
    assert http.get("/v2/templates/tpl-own").json()["image"] == "me/own-image:1"
    with emulator.http(emulator.other_key) as other:
        assert "tpl-own" not in {t["id"] for t in other.get("/v2/templates").json()["templates"]}
        problem(other.get("/v2/templates/tpl-own"), 404)
