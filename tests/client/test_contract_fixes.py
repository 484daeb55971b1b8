"""What the contract tests against an independent mock of the reference (``tests/contract``)
found in the client, each pinned here without the mock.

- the pod and worker log requests asked for JSON (``Accept: application/json``), which a
  server that negotiates strictly refuses with 406: the route serves ``text/event-stream``;
- every other request accepted only ``application/json``, so a strict server could not send
  a documented ``application/problem+json`` error (Prism answered 200 instead of the error);
- ``endpoints.create`` sent no ``scaling``, which the document requires on create;
- the document's log example ends its one event without the closing blank line, and the
  client dropped that event: a complete event at the clean end of a stream is now read;
- the models did not declare fields the examples carry (``requestUrls`` of an endpoint,
  ``gpuTypeId``/``dataCenterId`` of a worker, ``buildId``/``createdByUserId`` of a release).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from reference_docs import rest_reference

from podbook import AsyncClient, Client
from podbook.api.endpoints import (
    Endpoint,
    ListEndpointReleasesResponse,
    ListEndpointWorkersResponse,
)
from podbook.client.resources.endpoints import endpoint_calls
from podbook.errors import NotFound


def recording_client(answer: httpx.Response, seen: list[httpx.Request]) -> Client:
    """A client whose every request gets ``answer`` and is noted in ``seen``."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer

    return Client(api_key="k", url="http://127.0.0.1:9", transport=httpx.MockTransport(handler))


def test_log_requests_ask_for_an_event_stream() -> None:
    seen: list[httpx.Request] = []
    sse = (
        'id: 2026-06-01T12:02:03Z/000000000001\ndata: {"ts":"2026-06-01T12:02:03Z","line":"hi"}\n\n'
    )
    answer = httpx.Response(200, headers={"Content-Type": "text/event-stream"}, text=sse)
    with recording_client(answer, seen) as client:
        assert [line.line for line in client.pods.logs("p1", tail=1)] == ["hi"]
        assert [line.line for line in client.endpoints.worker_logs("e1", "w1", tail=1)] == ["hi"]
    accepts = [request.headers["Accept"].split(",")[0] for request in seen]
    assert accepts == ["text/event-stream", "text/event-stream"]


def test_json_requests_accept_problem_details() -> None:
    seen: list[httpx.Request] = []
    problem = {"title": "Not Found", "status": 404, "detail": "pod not found"}
    answer = httpx.Response(404, headers={"Content-Type": "application/problem+json"}, json=problem)
    with recording_client(answer, seen) as client, pytest.raises(NotFound, match="pod not found"):
        client.pods.get("p1")
    accepted = [media.strip() for media in seen[0].headers["Accept"].split(",")]
    assert {"application/json", "application/problem+json"} <= set(accepted)


def create_endpoint_schema() -> dict[str, Any]:
    """The reference's schema of a create-endpoint body."""
    document = rest_reference()
    return {"$ref": "#/components/schemas/CreateEndpointRequest", **document}


@pytest.mark.parametrize(
    ("fields", "scaler"),
    [
        ({"name": "demo", "image": "me/w:1"}, "QUEUE_DELAY"),
        ({"name": "demo", "image": "me/w:1", "type": "LOAD_BALANCER"}, "REQUEST_COUNT"),
        (
            {
                "name": "demo",
                "image": "me/w:1",
                "scaling": {"type": "REQUEST_COUNT", "request_count": 2},
            },
            "REQUEST_COUNT",
        ),
    ],
)
def test_endpoint_create_sends_the_type_and_scaling_the_document_requires(
    fields: dict[str, Any], scaler: str
) -> None:
    body = endpoint_calls.create(None, fields).json
    assert body["scaling"]["type"] == scaler
    import jsonschema  # on use: its import builds grammars for a second

    jsonschema.Draft202012Validator(create_endpoint_schema()).validate(body)


def test_a_given_scaling_is_sent_as_given() -> None:
    scaling = {"type": "QUEUE_DELAY", "queue_delay": 7.5}
    body = endpoint_calls.create(None, {"name": "demo", "scaling": scaling}).json
    assert body["scaling"] == {"type": "QUEUE_DELAY", "queueDelay": 7.5}


UNCLOSED_EVENT = (
    'id: 2026-06-01T12:02:03Z/000000000001\ndata: {"ts":"2026-06-01T12:02:03Z","line":"last"}\n'
)


def test_an_event_closed_by_the_end_of_the_stream_is_read() -> None:
    answer = httpx.Response(200, headers={"Content-Type": "text/event-stream"}, text=UNCLOSED_EVENT)
    with recording_client(answer, []) as client:
        assert [line.line for line in client.pods.logs("p1", tail=5)] == ["last"]
        assert [line.line for line in client.pods.logs("p1", follow=True)] == ["last"]


async def _async_lines() -> list[str]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"Content-Type": "text/event-stream"}, text=UNCLOSED_EVENT
        )

    transport = httpx.MockTransport(handler)
    async with AsyncClient(api_key="k", url="http://127.0.0.1:9", transport=transport) as client:
        return [line.line async for line in client.pods.logs("p1", tail=5)]


def test_the_async_client_reads_an_event_closed_by_the_end_of_the_stream() -> None:
    assert asyncio.run(_async_lines()) == ["last"]


def test_the_models_declare_the_fields_the_examples_carry() -> None:
    endpoint = Endpoint.model_validate(
        {"id": "e", "name": "n", "requestUrls": {"status": "https://x/v2/e/status/{job_id}"}}
    )
    assert endpoint.request_urls == {"status": "https://x/v2/e/status/{job_id}"}
    workers = ListEndpointWorkersResponse.model_validate(
        {
            "workers": [{"id": "w", "status": "RUNNING", "gpuTypeId": "G", "dataCenterId": "D"}],
            "summary": {},
        }
    )
    assert (workers.workers[0].gpu_type_id, workers.workers[0].data_center_id) == ("G", "D")
    releases = ListEndpointReleasesResponse.model_validate(
        {
            "rollout": {},
            "releases": [
                {
                    "id": "r",
                    "createdAt": "2026-06-01T12:00:00Z",
                    "buildId": "b",
                    "createdByUserId": "u",
                }
            ],
        }
    )
    assert (releases.releases[0].build_id, releases.releases[0].created_by_user_id) == ("b", "u")
