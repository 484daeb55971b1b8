"""Every billing answer has the shape of the reference document's billing schemas."""

from __future__ import annotations

import json
from typing import Any

import referencing
from emu_helpers import GPU, create, wait_status
from reference_docs import REST_REFERENCE as REFERENCE
from referencing.jsonschema import DRAFT202012

ROUTES = {
    "": "ListBillingResponse",
    "/pods": "ListPodBillingResponse",
    "/serverless": "ListServerlessBillingResponse",
    "/endpoints": "ListEndpointBillingResponse",
    "/network-volumes": "ListNetworkVolumeBillingResponse",
    "/clusters": "ListClusterBillingResponse",
}


def _violations(document: dict[str, Any], name: str, instance: Any) -> list[str]:
    registry = referencing.Registry().with_resource(
        "urn:reference", referencing.Resource.from_contents(document, DRAFT202012)
    )
    import jsonschema  # on use: its import builds grammars for a second

    validator = jsonschema.Draft202012Validator(
        {"$ref": f"urn:reference#/components/schemas/{name}"}, registry=registry
    )
    return [
        f"{name} at {list(e.absolute_path)}: {e.message[:160]}"
        for e in validator.iter_errors(instance)
    ]


def test_billing_routes_match_the_reference(emulator) -> None:
    document = json.loads(REFERENCE.read_text(encoding="utf-8"))
    with emulator.http() as http:
        pod = create(
            http,
            {
                "name": "billed",
                "image": "i",
                "gpu": {"id": GPU},
                "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
            },
        )
        wait_status(http, pod["id"], "RUNNING")
        for suffix, schema in ROUTES.items():
            for query in ({"lastN": "2", "bucketSize": "hour"}, {"bucketSize": "week"}):
                response = http.get(f"/v2/billing{suffix}", params=query)
                assert response.status_code == 200, response.text
                assert _violations(document, schema, response.json()) == []
        pods = http.get("/v2/billing/pods", params={"podId": pod["id"], "lastN": "1"}).json()
        assert pods["metadata"]["query"]["podId"] == pod["id"]
        assert pods["records"] and pods["records"][0]["diskAmount"] > 0
        both = http.get("/v2/billing", params={"lastN": "1", "startTime": "2026-01-01T00:00:00Z"})
        assert both.status_code == 400
        assert both.headers["content-type"].startswith("application/problem+json")
        http.delete(f"/v2/pods/{pod['id']}")
