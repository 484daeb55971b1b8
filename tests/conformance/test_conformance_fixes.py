"""Regression tests for what the schemathesis conformance run found in the emulator.

Each test is one finding, against the real session emulator over HTTP; the reference
document's schemas are checked with jsonschema where the finding was a response shape.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import httpx
import pytest
from reference_docs import REST_REFERENCE as REFERENCE


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def conforms(reference: dict[str, Any], name: str, value: Any) -> None:
    """Validate ``value`` against the reference's component schema ``name``."""
    schema = {"$ref": f"#/components/schemas/{name}", "components": reference["components"]}
    import jsonschema  # on use: its import builds grammars for a second

    jsonschema.Draft202012Validator(schema).validate(value)


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status and body["detail"]
    return body


def endpoint_body(**fields: Any) -> dict[str, Any]:
    return {
        "name": f"conf-{secrets.token_hex(3)}",
        "type": "QUEUE",
        "scaling": {"type": "QUEUE_DELAY", "queueDelay": 4},
        **fields,
    }


def test_gpu_endpoint_carries_cuda_fields_and_a_patch_merges_into_its_pools(
    http: httpx.Client, reference: dict[str, Any]
) -> None:
    created = http.post("/v2/serverless", json=endpoint_body(gpu={"pools": ["ADA_24"]}))
    assert created.status_code == 201, created.text
    record = created.json()
    assert record["gpu"] == {"pools": ["ADA_24"], "allowedCudaVersions": [], "minCudaVersion": None}
    conforms(reference, "Endpoint", record)
    patched = http.patch(f"/v2/serverless/{record['id']}", json={"gpu": {"minCudaVersion": "12.1"}})
    assert patched.status_code == 200, patched.text
    assert patched.json()["gpu"]["pools"] == ["ADA_24"]
    assert patched.json()["gpu"]["minCudaVersion"] == "12.1"
    conforms(reference, "Endpoint", patched.json())


def test_gpu_without_pools_on_an_endpoint_without_gpu_is_refused(http: httpx.Client) -> None:
    record = http.post("/v2/serverless", json=endpoint_body()).json()
    body = problem(
        http.patch(f"/v2/serverless/{record['id']}", json={"gpu": {"minCudaVersion": "12.1"}}),
        400,
    )
    assert body["errors"][0].startswith("$.gpu.pools")


def test_cpu_endpoint_entries_carry_memory(http: httpx.Client, reference: dict[str, Any]) -> None:
    created = http.post("/v2/serverless", json=endpoint_body(cpu=[{"id": "cpu5c", "vcpuCount": 4}]))
    assert created.status_code == 201, created.text
    assert created.json()["cpu"][0]["memory"] >= 4
    conforms(reference, "Endpoint", created.json())
    listed = http.get("/v2/serverless").json()
    conforms(reference, "ListEndpointsResponse", listed)


@pytest.mark.parametrize(
    "cpu", [[{"id": "no-such-flavor", "vcpuCount": 4}], [{"id": "cpu5c", "vcpuCount": 3}]]
)
def test_cpu_endpoint_with_unknown_flavor_or_odd_vcpus_is_refused(
    http: httpx.Client, cpu: list[dict[str, Any]]
) -> None:
    body = problem(http.post("/v2/serverless", json=endpoint_body(cpu=cpu)), 400)
    assert body["errors"][0].startswith("$.cpu[0]")


def test_catalog_templates_source(http: httpx.Client) -> None:
    official = http.get("/v2/catalog/templates", params={"source": "official"}).json()
    assert official == http.get("/v2/catalog/templates").json()
    assert official["templates"]
    assert http.get("/v2/catalog/templates", params={"source": "community"}).json() == {
        "templates": []
    }
    assert problem(http.get("/v2/catalog/templates", params={"source": "AAA"}), 422)["errors"] == [
        "source: has unknown value 'AAA'; use official, verified, community"
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [("regions", "ATLANTIS"), ("networkVolumeTypes", "FAST"), ("compliance", "GDPR,NOPE")],
)
def test_datacenter_filters_refuse_unknown_values(
    http: httpx.Client, name: str, value: str
) -> None:
    problem(http.get("/v2/catalog/datacenters", params={name: value}), 422)
    assert http.get("/v2/catalog/datacenters", params={"regions": "EUROPE"}).status_code == 200


def test_network_volume_type_null_is_refused(http: httpx.Client) -> None:
    body = {"name": "v", "dataCenter": "US-KS-2", "size": 10, "type": None}
    assert "$.type" in problem(http.post("/v2/network-volumes", json=body), 422)["errors"][0]


@pytest.mark.parametrize("name", ["startTime", "endTime"])
def test_billing_empty_time_is_refused(http: httpx.Client, name: str) -> None:
    problem(http.get("/v2/billing", params={name: ""}), 422)


@pytest.mark.parametrize("count", ["1", "3", "6"])
def test_cpu_catalog_vcpu_count_is_a_power_of_two_from_2(http: httpx.Client, count: str) -> None:
    params = {"include": "AVAILABILITY", "vcpuCount": count}
    problem(http.get("/v2/catalog/cpus", params=params), 422)
    assert http.get("/v2/catalog/cpus", params={**params, "vcpuCount": "4"}).status_code == 200


@pytest.mark.parametrize(
    "webhook", ["https://\u00fb\u00f7\x10h", "https://a b.example", "http://h.example:99999/"]
)
def test_queue_refuses_a_webhook_that_is_not_a_url(http: httpx.Client, webhook: str) -> None:
    response = http.post("/v2/echo/run", json={"input": {}, "webhook": webhook})
    assert response.status_code == 400, response.text
    assert "webhook" in response.json()["error"]


def test_queue_openapi_document_is_served_and_describes_every_queue_route(
    emulator: Any,
) -> None:
    document = httpx.get(f"{emulator.url}/openapi/queue.json", timeout=10).json()
    assert document["openapi"].startswith("3.1")
    ops = {path.rsplit("/", 1)[-1] for path in document["paths"]}
    assert {"run", "runsync", "{job_id}", "purge-queue", "health"} <= ops
    paths = " ".join(document["paths"])
    for op in ("status", "stream", "cancel", "retry"):
        assert f"/v2/{{endpoint_id}}/{op}/{{job_id}}" in paths


def test_queue_openapi_document_documents_the_stream_cursor_and_its_answers_conform(
    emulator: Any, http: httpx.Client
) -> None:
    document = httpx.get(f"{emulator.url}/openapi/queue.json", timeout=10).json()
    stream = document["paths"]["/v2/{endpoint_id}/stream/{job_id}"]
    for method in ("get", "post"):
        cursor = {p["name"]: p for p in stream[method]["parameters"]}["cursor"]
        assert cursor["in"] == "query" and cursor["schema"]["minimum"] == 0
        assert "400" in stream[method]["responses"]
    answer = document["components"]["schemas"]["StreamResponse"]
    assert {"cursor", "next"} <= set(answer["properties"])

    job = http.post(
        "/v2/stream-demo/run", json={"input": {"prompt": "c", "max_tokens": 5, "delay_ms": 0}}
    )
    job_id = job.json()["id"]
    assert http.get(f"/v2/stream-demo/status-sync/{job_id}").json()["status"] == "COMPLETED"
    schema = {"$ref": "#/components/schemas/StreamResponse", "components": document["components"]}
    first = http.get(f"/v2/stream-demo/stream/{job_id}", params={"cursor": 0}).json()
    again = http.post(f"/v2/stream-demo/stream/{job_id}", params={"cursor": 2}).json()
    for body in (first, again):
        import jsonschema

        jsonschema.Draft202012Validator(schema).validate(body)
    assert first["cursor"] == 0 and first["next"] == len(first["stream"]) >= 5
    assert again["cursor"] == 2 and again["stream"] == first["stream"][2:]
    refused = http.get(f"/v2/stream-demo/stream/{job_id}", params={"cursor": "-1"})
    assert refused.status_code == 400 and "cursor" in refused.json()["error"]


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/v2/catalog/cpus/cpu3c", "include="),
        ("/v2/catalog/cpus", "include=AVAILABILITY,AVAILABILITY"),
        ("/v2/catalog/datacenters", "regions=,"),
        ("/v2/catalog/datacenters/US-KS-2", "include="),
        ("/v2/pods", "includeClusterPods="),
    ],
)
def test_empty_or_repeated_query_values_are_refused(
    http: httpx.Client, path: str, query: str
) -> None:
    response = http.get(f"{path}?{query}")
    assert response.status_code in (400, 422), response.text
    assert response.headers["content-type"] == "application/problem+json"


def test_billing_times_before_year_1000_keep_four_digits(
    http: httpx.Client, reference: dict[str, Any]
) -> None:
    params = {"startTime": "0261-01-18T07:41:42Z", "endTime": "0263-01-01T00:00:00Z"}
    body = http.get("/v2/billing", params={**params, "bucketSize": "year"}).json()
    assert body["records"][0]["startTime"] == "0261-01-01T00:00:00Z"
    conforms(reference, "ListBillingResponse", body)
