"""Every answer of the emulator has the shape of the real service's public OpenAPI document.

The document is vendored in ``reference/runpod-rest-v2.openapi.json`` (or
``$PODBOOK_REFERENCE_OPENAPI`` names another copy).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import referencing
from emu_helpers import GPU, create, wait_status
from reference_docs import REST_REFERENCE as REFERENCE
from referencing.jsonschema import DRAFT202012


@pytest.fixture(scope="module")
def conforms():
    """``conforms(schema_name, instance)`` → the list of schema violations (empty when fine)."""
    document = json.loads(REFERENCE.read_text(encoding="utf-8"))
    registry = referencing.Registry().with_resource(
        "urn:reference", referencing.Resource.from_contents(document, DRAFT202012)
    )

    def check(name: str, instance: Any) -> list[str]:
        import jsonschema  # on use: its import builds grammars for a second

        validator = jsonschema.Draft202012Validator(
            {"$ref": f"urn:reference#/components/schemas/{name}"}, registry=registry
        )
        return [
            f"{name} at {list(error.absolute_path)}: {error.message[:160]}"
            for error in validator.iter_errors(instance)
        ]

    return check


def test_pods_in_every_status_match_the_reference(emulator, conforms):
    with emulator.http() as http:
        cpu_place = create(
            http, {"name": "cpu-place", "image": "i", "cpu": {"id": "cpu3c", "vcpuCount": 4}}
        )["dataCenterId"]
        cpu_volume = http.post(
            "/v2/network-volumes", json={"name": "schemas", "size": 10, "dataCenter": cpu_place}
        ).json()["id"]
        seen = [
            create(
                http,
                {
                    "name": "gpu",
                    "image": "i",
                    "gpu": {"id": GPU, "count": 2},
                    "ports": ["8888/http", "22/tcp"],
                    "startSsh": True,
                    "startJupyter": True,
                    "globalNetworking": True,
                },
            ),
            create(
                http,
                {
                    "name": "cpu",
                    "image": "i",
                    "cpu": {"id": "cpu3c", "vcpuCount": 4},
                    "mounts": {"network": [{"volumeId": cpu_volume, "path": "/data"}]},
                },
            ),
        ]
        pod_id = seen[0]["id"]
        seen.append(http.get(f"/v2/pods/{pod_id}").json())  # PROVISIONING (read)
        seen.append(wait_status(http, pod_id, "RUNNING"))
        seen.append(http.post(f"/v2/pods/{pod_id}/action", json={"action": "stop"}).json())
        seen.append(http.post(f"/v2/pods/{pod_id}/action", json={"action": "start"}).json())
        listed = http.get("/v2/pods").json()
    assert {pod["status"] for pod in seen} >= {"PROVISIONING", "RUNNING", "EXITED", "STARTING"}
    problems = [line for pod in seen for line in conforms("Pod", pod)]
    problems += conforms("ListPodsResponse", listed)
    assert problems == []


def test_clusters_catalog_account_and_problems_match_the_reference(emulator, conforms):
    with emulator.http() as http:
        cluster = http.post(
            "/v2/clusters",
            json={
                "name": "ref",
                "type": "SLURM",
                "image": "i",
                "ports": ["22/tcp"],
                "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
            },
        ).json()
        early = http.get(f"/v2/clusters/{cluster['id']}/pods").json()
        time.sleep(0.6)  # fast lifecycle: ranks, network and the primary's SSH appear
        answers = [
            ("Cluster", cluster),
            ("ListPodsResponse", early),
            ("Cluster", http.get(f"/v2/clusters/{cluster['id']}").json()),
            ("ListPodsResponse", http.get(f"/v2/clusters/{cluster['id']}/pods").json()),
            ("ListClustersResponse", http.get("/v2/clusters").json()),
            ("ListGpuTypesResponse", http.get("/v2/catalog/gpus").json()),
            (
                "ListGpuTypesResponse",
                http.get("/v2/catalog/gpus", params={"include": "AVAILABILITY"}).json(),
            ),
            ("ListCpuTypesResponse", http.get("/v2/catalog/cpus").json()),
            ("ListDataCentersResponse", http.get("/v2/catalog/datacenters").json()),
            ("ListTemplatesResponse", http.get("/v2/catalog/templates").json()),
            ("ListTemplatesResponse", http.get("/v2/templates").json()),
            ("SshKeys", http.get("/v2/account/ssh-keys").json()),
            ("ListRegistriesResponse", http.get("/v2/registries").json()),
            ("ErrorResponse", http.post("/v2/pods", json={"bogus": 1}).json()),
            ("ErrorResponse", http.get("/v2/pods/no-such-pod").json()),
        ]
    assert [line for name, body in answers for line in conforms(name, body)] == []
