"""Recorded queue answers replayed through the client (respx stands in for the service).

Two sources, so the client's parsing of real queue answers is tested on every run:

- **the shapes of the queue document** the emulator serves (``GET /openapi/queue.json``,
  built here in-process by :func:`podbook.emulator.queue_openapi.queue_openapi`): for every
  operation the client sends, every documented answer — the smallest and the fullest body
  each schema allows, bodies generated from the schema (hypothesis), and each documented
  error status — goes through the client's own call and parser. An operation of the
  document that the client does not send must say why (``NOT_SENT``).
- **the literal answers of ``reference/queue-and-worker-protocol.md``** (the real service's
  answers and quirks: ``{"error": ...}`` bodies instead of problem+json, the 400 for a
  ``wait`` out of range, ``/runsync`` answering ``{"id", "status"}`` when the job outlived
  its wait, progress in ``output`` while IN_PROGRESS, the runpod SDK's JSON-string
  ``error``, ``/health`` worker counts the JS SDK knows, a result without ``output``),
  replayed through the methods a user calls.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import respx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podbook import Client
from podbook.api.base import to_wire
from podbook.api.queue import RequestRecord, RequestsResponse
from podbook.client import RetryPolicy
from podbook.client._core import Call
from podbook.client.resources.queue import queue_calls
from podbook.emulator.queue_openapi import queue_openapi
from podbook.errors import (
    BadRequest,
    JobCancelled,
    JobFailed,
    JobTimedOut,
    NotFound,
    error_class_for_status,
)

BASE = "http://queue.recorded"
KEY = "pbk_recorded_answers_key_0123456789"
DOC = queue_openapi()
SCHEMAS = DOC["components"]["schemas"]
METHODS = ("get", "put", "post", "patch", "delete")

# operationId → the call the client sends for it (the same builder its method uses)
CALLS: dict[str, Callable[[], Call[Any]]] = {
    "run": lambda: queue_calls.run("ep", {"input": {"prompt": "hi"}}),
    "runsync": lambda: queue_calls.runsync("ep", {"input": {"prompt": "hi"}}, 1000),
    "status": lambda: queue_calls.status("ep", "job-1"),
    "statusSync": lambda: queue_calls.status_sync("ep", "job-1", 1000),
    "stream": lambda: queue_calls.stream("ep", "job-1"),
    "cancel": lambda: queue_calls.cancel("ep", "job-1"),
    "retry": lambda: queue_calls.retry("ep", "job-1"),
    "purgeQueue": lambda: queue_calls.purge_queue("ep"),
    "health": lambda: queue_calls.health("ep"),
    "requests": lambda: enveloped(queue_calls.requests("ep")),
}
NOT_SENT = {
    "statusPost": "the client reads a status with GET (POST is for the SDK's old local server)",
    "streamPost": "the client reads a stream with GET",
    # The OpenAI-compatible route answers OpenAI-shaped errors, not {"error": "..."}: its
    # answers go through endpoint.chat in the chat tests, against the emulator.
    "openaiChatCompletions": "sent by endpoint.chat; its errors are OpenAI-shaped",
    "openaiCompletions": "the client sends chat requests only (use the openai package)",
    "openaiModels": "the client does not list models (use the openai package)",
}


def enveloped(call: Call[list[RequestRecord]]) -> Call[RequestsResponse]:
    """The ``/requests`` call, its list put back in the body's envelope to compare with it."""
    parse = call.parse
    assert parse is not None
    return dataclasses.replace(call, parse=lambda body: RequestsResponse(requests=parse(body)))


def operations() -> dict[str, dict[str, Any]]:
    """``operationId`` → its operation object, for every operation of the queue document."""
    return {
        op["operationId"]: op
        for item in DOC["paths"].values()
        for method, op in item.items()
        if method in METHODS
    }


def resolve(schema: Any) -> Any:
    """``schema`` with every ``$ref`` to ``#/components/schemas/`` inlined."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return resolve(SCHEMAS[schema["$ref"].rsplit("/", 1)[1]])
        return {key: resolve(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [resolve(item) for item in schema]
    return schema


def answer_schema(operation_id: str, status: str) -> dict[str, Any]:
    """The JSON schema of one documented answer, references inlined."""
    content = operations()[operation_id]["responses"][status]["content"]
    return resolve(content["application/json"]["schema"])


def types_of(schema: dict[str, Any]) -> list[str]:
    """The schema's ``type`` as a list (``[]`` for any JSON value)."""
    kind = schema.get("type", [])
    return kind if isinstance(kind, list) else [kind]


def named_properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every property the object schema names: its ``properties``, and each ``required``
    name it types only through ``additionalProperties`` (``/health``'s counts)."""
    extra = schema.get("additionalProperties")
    fallback = extra if isinstance(extra, dict) else {}
    named = dict(schema.get("properties", {}))
    for name in schema.get("required", []):
        named.setdefault(name, fallback)
    return named


def smallest(schema: dict[str, Any]) -> Any:
    """The smallest value the schema allows: required properties only, lower bounds."""
    if "enum" in schema:
        return schema["enum"][0]
    kinds = types_of(schema)
    if "object" in kinds:
        properties = named_properties(schema)
        return {name: smallest(properties[name]) for name in schema.get("required", [])}
    if "array" in kinds:
        return []
    if "integer" in kinds:
        return schema.get("minimum", 0)
    if "string" in kinds:
        return "j" * max(1, schema.get("minLength", 1))
    return None


def fullest(schema: dict[str, Any]) -> Any:
    """A value with every property the schema names (and one extra where it allows
    more), the last enum value, two array items."""
    if "enum" in schema:
        return schema["enum"][-1]
    kinds = types_of(schema)
    if "object" in kinds:
        value = {name: fullest(sub) for name, sub in named_properties(schema).items()}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            value["throttled"] = fullest(extra)
        return value
    if "array" in kinds:
        return [fullest(schema["items"]), fullest(schema["items"])]
    if "integer" in kinds:
        return schema.get("minimum", 0) + 7
    if "string" in kinds:
        return "worker-7"
    return {"text": ["any", "JSON"], "tokens": 3, "done": True, "score": 0.5, "none": None}


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
EXTRA_KEYS = st.from_regex(r"[a-z]{1,8}", fullmatch=True)


def values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Any value the schema allows (the few keywords the queue document uses)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kinds = types_of(schema)
    if not kinds:
        return JSON_VALUES
    options = []
    for kind in kinds:
        if kind == "null":
            options.append(st.none())
        elif kind == "integer":
            options.append(st.integers(min_value=schema.get("minimum")))
        elif kind == "string":
            options.append(st.text(min_size=schema.get("minLength", 0), max_size=12))
        elif kind == "array":
            options.append(st.lists(values(schema["items"]), max_size=4))
        elif kind == "object":
            options.append(objects(schema))
    return st.one_of(options)


def objects(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with the required properties, some optional ones and, where allowed, extras."""
    properties = named_properties(schema)
    required = set(schema.get("required", []))
    known = st.fixed_dictionaries(
        {name: values(sub) for name, sub in properties.items() if name in required},
        optional={name: values(sub) for name, sub in properties.items() if name not in required},
    )
    extra = schema.get("additionalProperties")
    if not isinstance(extra, dict):
        return known
    extras = st.dictionaries(EXTRA_KEYS.filter(lambda k: k not in properties), values(extra))
    return st.builds(lambda a, b: {**b, **a}, known, extras)


@pytest.fixture
def client() -> Iterator[Client]:
    """A client of the recorded service; no retry (each answer is replayed once)."""
    with Client(api_key=KEY, url=BASE, retry=RetryPolicy(max_attempts=1)) as c:
        yield c


def replay(client: Client, operation_id: str, answer: httpx.Response) -> Any:
    """Send the operation's call with ``answer`` recorded for it; the client's result."""
    call = CALLS[operation_id]()
    with respx.mock(base_url=BASE, assert_all_called=True) as router:
        router.route(method=call.method, path=call.path).mock(return_value=answer)
        return client.request(call)


# --- the queue document ------------------------------------------------------------------


def test_every_operation_of_the_queue_document_is_replayed_or_says_why_not():
    documented = set(operations())
    assert documented == set(CALLS) | set(NOT_SENT), "add the new operation to CALLS"
    assert "statusSync" in CALLS  # the long-polling read the JS SDK's runSync goes on with


@pytest.mark.parametrize("operation_id", sorted(CALLS))
@pytest.mark.parametrize("build", [smallest, fullest], ids=["smallest", "fullest"])
def test_each_documented_answer_is_parsed_with_every_field_kept(client, operation_id, build):
    schema = answer_schema(operation_id, "200")
    body = build(schema)
    import jsonschema  # on use: its import builds grammars for a second

    jsonschema.validate(body, schema)  # the recorded answer is one the document allows
    result = replay(client, operation_id, httpx.Response(200, json=body))
    assert to_wire(result) == body


@pytest.mark.parametrize("operation_id", sorted(CALLS))
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_generated_answers_of_the_document_are_parsed(client, operation_id, data):
    schema = answer_schema(operation_id, "200")
    body = data.draw(values(schema), label="answer")
    import jsonschema

    jsonschema.validate(body, schema)
    result = replay(client, operation_id, httpx.Response(200, json=body))
    assert to_wire(result) == body


ERRORS = [
    (operation_id, status)
    for operation_id in sorted(CALLS)
    for status in operations()[operation_id]["responses"]
    if status != "200"
]


@pytest.mark.parametrize(("operation_id", "status"), ERRORS)
def test_each_documented_error_is_one_typed_line(client, operation_id, status):
    schema = answer_schema(operation_id, status)
    body = {"error": f"what the service says for {status}"}
    import jsonschema

    jsonschema.validate(body, schema)
    headers = {"Retry-After": "3"} if status == "429" else {}
    with pytest.raises(error_class_for_status(int(status))) as info:
        replay(client, operation_id, httpx.Response(int(status), json=body, headers=headers))
    error = info.value
    assert error.status == int(status) and error.detail == body["error"]
    assert str(error).count("\n") == 0 and KEY not in str(error)
    if status == "429":
        assert error.retry_after == 3


# --- the literal answers of the reference ------------------------------------------------

JOB = "6f1e2d3c-0000-4000-8000-000000000001-u1"
RUNPOD_ERROR = json.dumps(
    {
        "error_type": "<class 'ValueError'>",
        "error_message": "prompt is empty",
        "error_traceback": 'Traceback (most recent call last):\n  File "handler.py"\n',
        "hostname": "worker-host",
        "worker_id": "w-1",
        "runpod_version": "1.12.0",
    }
)


@pytest.fixture
def service() -> Iterator[respx.MockRouter]:
    """The recorded service: each test records the answers it needs."""
    with respx.mock(base_url=f"{BASE}/v2/ep", assert_all_called=True) as router:
        yield router


def test_run_answers_id_and_in_queue(client, service):
    route = service.post("/run").respond(json={"id": JOB, "status": "IN_QUEUE"})
    job = client.endpoint("ep").run({"prompt": "hello"})
    assert job.id == JOB and job.last_status == "IN_QUEUE" and not job.done
    sent = route.calls.last.request
    assert json.loads(sent.content) == {"input": {"prompt": "hello"}}
    assert sent.headers["Authorization"] == f"Bearer {KEY}"


def test_runsync_finished_answers_the_full_record(client, service):
    record = {
        "id": f"sync-{JOB}",
        "status": "COMPLETED",
        "delayTime": 12,
        "executionTime": 340,
        "output": {"text": "hi"},
        "workerId": "w-1",
    }
    service.post("/runsync").respond(json=record)
    job = client.endpoint("ep").runsync({"prompt": "hi"})
    assert job.output() == {"text": "hi"}
    assert (job.record.delay_time, job.record.execution_time) == (12, 340)
    assert job.record.worker_id == "w-1"


def test_runsync_that_outlived_its_wait_goes_on_with_status_sync(client, service):
    service.post("/runsync").respond(json={"id": f"sync-{JOB}", "status": "IN_PROGRESS"})
    held = service.get(f"/status-sync/sync-{JOB}").respond(
        json={"id": f"sync-{JOB}", "status": "COMPLETED", "output": 42, "executionTime": 95000}
    )
    job = client.endpoint("ep").runsync({"n": 21}, wait=1000)
    assert job.output() == 42
    assert held.calls.last.request.url.params["wait"] == "90000"


def test_a_service_without_status_sync_is_polled(client, service):
    service.post("/runsync").respond(json={"id": f"sync-{JOB}", "status": "IN_QUEUE"})
    service.get(f"/status-sync/sync-{JOB}").respond(404, json={"error": "not found"})
    polled = service.get(f"/status/sync-{JOB}").mock(
        side_effect=[
            httpx.Response(200, json={"id": f"sync-{JOB}", "status": "IN_PROGRESS"}),
            httpx.Response(200, json={"id": f"sync-{JOB}", "status": "COMPLETED", "output": 1}),
        ]
    )
    assert client.endpoint("ep").runsync({}, wait=1000).output() == 1
    assert polled.call_count == 2


def test_progress_is_the_output_while_in_progress(client, service):
    service.get(f"/status/{JOB}").respond(
        json={"id": JOB, "status": "IN_PROGRESS", "delayTime": 5, "output": "50% done"}
    )
    record = client.endpoint("ep").status(JOB)
    assert record.status == "IN_PROGRESS" and record.output == "50% done"
    assert not record.is_terminal and record.execution_time is None


def test_a_result_without_output_completes_with_none(client, service):
    service.get(f"/status-sync/{JOB}").respond(json={"id": JOB, "status": "COMPLETED"})
    job = client.endpoint("ep").job(JOB)
    assert job.output() is None and not job.record.has_output


def test_a_runpod_worker_error_is_a_job_failed_with_its_traceback(client, service):
    service.get(f"/status-sync/{JOB}").respond(
        json={"id": JOB, "status": "FAILED", "error": RUNPOD_ERROR, "workerId": "w-1"}
    )
    with pytest.raises(JobFailed) as info:
        client.endpoint("ep").job(JOB).output()
    assert info.value.error.error_type == "<class 'ValueError'>"
    assert info.value.error.error_message == "prompt is empty"
    assert "handler.py" in info.value.error.traceback
    assert "\n" not in str(info.value) and "prompt is empty" in str(info.value)


@pytest.mark.parametrize(
    ("status", "raised"), [("CANCELLED", JobCancelled), ("TIMED_OUT", JobTimedOut)]
)
def test_other_final_statuses_raise(client, service, status, raised):
    service.get(f"/status-sync/{JOB}").respond(json={"id": JOB, "status": status})
    with pytest.raises(raised):
        client.endpoint("ep").job(JOB).output()


@pytest.mark.parametrize("final", ["COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"])
def test_stream_drains_chunks_until_final_and_empty(client, service, final):
    # The SDK's stream loop forgets CANCELLED and never ends; the client ends on every one.
    metrics = {"output_tokens": 2, "stream_index": 1, "scenario": "stream-demo"}
    service.get(f"/stream/{JOB}").mock(
        side_effect=[
            httpx.Response(200, json={"status": "IN_PROGRESS", "stream": [{"output": "a"}]}),
            httpx.Response(
                200, json={"status": final, "stream": [{"output": "b", "metrics": metrics}]}
            ),
            httpx.Response(200, json={"status": final, "stream": []}),
        ]
    )
    chunks = list(client.endpoint("ep").stream_chunks(JOB))
    assert [chunk.output for chunk in chunks] == ["a", "b"]
    assert chunks[1].metrics == metrics


def test_cancel_retry_and_purge_answers(client, service):
    service.post(f"/cancel/{JOB}").respond(json={"id": JOB, "status": "CANCELLED"})
    service.post(f"/retry/{JOB}").respond(json={"id": JOB, "status": "IN_QUEUE"})
    service.post("/purge-queue").respond(json={"removed": 2, "status": "completed"})
    endpoint = client.endpoint("ep")
    assert endpoint.cancel(JOB).status == "CANCELLED"
    assert endpoint.retry(JOB).status == "IN_QUEUE"
    purged = endpoint.purge_queue()
    assert (purged.removed, purged.status) == (2, "completed")


def test_health_with_the_worker_counts_the_js_sdk_knows(client, service):
    service.get("/health").respond(
        json={
            "jobs": {"completed": 7, "failed": 1, "inProgress": 2, "inQueue": 3, "retried": 1},
            "workers": {"idle": 1, "running": 2, "initializing": 1, "ready": 3, "throttled": 0},
        }
    )
    health = client.endpoint("ep").health()
    assert (health.jobs.completed, health.jobs.in_progress, health.jobs.in_queue) == (7, 2, 3)
    assert (health.workers.idle, health.workers.running) == (1, 2)
    assert to_wire(health)["workers"]["ready"] == 3  # fields the model does not name are kept


def test_wait_out_of_range_is_the_services_one_line_400(client, service):
    message = "wait is invalid; must be between 1000 and 300000"
    service.post("/runsync").respond(400, json={"error": message})
    with pytest.raises(BadRequest) as info:
        client.endpoint("ep").runsync({}, wait=1000)
    assert info.value.detail == message and str(info.value).endswith(message)
    assert "\n" not in str(info.value)


def test_an_expired_job_is_not_found(client, service):
    message = f"job {JOB!r} not found; it may have expired (TTL or result retention)"
    service.get(f"/status/{JOB}").respond(404, json={"error": message})
    with pytest.raises(NotFound) as info:
        client.endpoint("ep").status(JOB)
    assert info.value.detail == message and "\n" not in str(info.value)
