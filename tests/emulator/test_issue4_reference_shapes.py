"""Issue-4 answers match the reference schemas: ECR delegations, templates, network volumes,
single catalog entries, an endpoint made from a template, billing pages and their errors."""

from __future__ import annotations

from typing import Any

from test_reference_schemas import conforms  # noqa: F401  (the fixture)

GPU = "NVIDIA GeForce RTX 4090"
ARN = "arn:aws:ecr:eu-west-1:123456789012:repository/team/app:v1"


def test_issue4_answers_match_the_reference(emulator: Any, conforms: Any) -> None:  # noqa: F811
    with emulator.http() as http:
        delegation = http.post("/v2/registries/delegations", json={"resource": ARN})
        assert delegation.status_code == 201, delegation.text
        template = http.post(
            "/v2/templates",
            json={"name": "shapes", "image": "me/w:1", "isServerless": True, "env": {"A": "1"}},
        )
        assert template.status_code == 201, template.text
        volume = http.post(
            "/v2/network-volumes", json={"name": "shapes", "size": 10, "dataCenter": "EU-RO-1"}
        )
        assert volume.status_code == 201, volume.text
        endpoint = http.post(
            "/v2/serverless",
            json={"name": "shapes-ep", "type": "QUEUE", "templateId": template.json()["id"]},
        )
        assert endpoint.status_code == 201, endpoint.text
        cpu_id = http.get("/v2/catalog/cpus").json()["cpus"][0]["id"]
        answers = [
            ("EcrDelegation", delegation.json()),
            ("ListDelegationsResponse", http.get("/v2/registries/delegations").json()),
            ("Template", template.json()),
            ("NetworkVolume", volume.json()),
            ("ListNetworkVolumesResponse", http.get("/v2/network-volumes").json()),
            ("GpuType", http.get(f"/v2/catalog/gpus/{GPU}").json()),
            ("GpuType", http.get(f"/v2/catalog/gpus/{GPU}?include=AVAILABILITY").json()),
            ("CpuType", http.get(f"/v2/catalog/cpus/{cpu_id}").json()),
            ("DataCenter", http.get("/v2/catalog/datacenters/EU-RO-1").json()),
            ("Endpoint", endpoint.json()),
            ("ErrorResponse", http.delete("/v2/registries/delegations/deleg_none").json()),
            ("ErrorResponse", http.post("/v2/registries/delegations", json={}).json()),
            (
                "ErrorResponse",
                http.post("/v2/serverless", json={"name": "x", "templateId": "tpl-own"}).json(),
            ),
        ]
        http.delete(f"/v2/serverless/{endpoint.json()['id']}")
        http.delete(f"/v2/registries/delegations/{delegation.json()['id']}")
    assert [line for name, body in answers for line in conforms(name, body)] == []
