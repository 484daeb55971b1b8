"""The emulator's own OpenAPI 3.1 document for the client-facing queue routes.

The public REST reference document has no queue operations, so the emulator describes
``/v2/{endpoint_id}/run|runsync|status|stream|cancel|retry|purge-queue|health`` itself. The
schemas are generated from the models of :mod:`podbook.api.queue` (the ones the client
validates with and the broker answers from); only the operations are declared here, in one
table. Also ``status-sync``, the long-polling status read the service's JS SDK
(``runpod-sdk``) sends when a ``/runsync`` answered before its job ended, and the emulator's
``?cursor=N`` extension of ``/stream`` (resumable reads). Served without a key at
``GET /openapi/queue.json``; the conformance run (``scripts/conformance.py``) fuzzes the
queue against it.

Also ``/requests`` (an emulator-defined shape: the service documents none) and the
OpenAI-compatible route ``/openai/v1/chat/completions|completions|models``: the request
bodies are described as far as a handler built with ``podbook.openai_handler`` (and the
built-in ``chat-demo``) checks them; any other handler decides for itself. Their errors are
OpenAI-shaped (``OpenAIError``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

import podbook
from podbook.api.queue import (
    REQUESTS_MAX_ITEMS,
    STREAM_CURSOR_MAX,
    TTL_MAX_MS,
    TTL_MIN_MS,
    WAIT_DEFAULT_MS,
    WAIT_MAX_MS,
    WAIT_MIN_MS,
    HealthResponse,
    JobRecord,
    JobSubmission,
    PurgeResponse,
    QueueError,
    RequestsResponse,
    StreamResponse,
)

QUEUE_OPENAPI_PATH = "/openapi/queue.json"

_JSON = "application/json"
_REF = "#/components/schemas/"


def _body(schema: str) -> dict[str, Any]:
    return {"content": {_JSON: {"schema": {"$ref": _REF + schema}}}}


def _errors(*statuses: int) -> dict[str, Any]:
    meaning = {
        400: "Bad request: the body or a query parameter is invalid (one line names it)",
        401: "Missing or unknown API key",
        403: "The key is read-only",
        404: "Unknown endpoint, or the job never existed or expired (TTL or retention)",
        429: "Too many requests for this operation of this endpoint (Retry-After set)",
    }
    return {
        str(status): {"description": meaning[status], **_body("QueueError")} for status in statuses
    }


_OPENAI_ERRORS = {
    400: "The body is not a JSON object, or the handler refused it (an error object)",
    401: "Missing or unknown API key",
    403: "The key is read-only",
    404: "Unknown endpoint",
    409: "The job was cancelled before it answered",
    429: "Too many /openai requests on this endpoint (Retry-After set)",
    500: "The handler failed",
    504: "The job timed out (executionTimeout) or expired (TTL)",
}


def _openai_op(
    operation_id: str, summary: str, ok: str, *, request: str | None, stream: bool
) -> dict[str, Any]:
    """An OpenAI-compatible operation: a job per request, OpenAI-shaped errors."""
    content: dict[str, Any] = {_JSON: {"schema": {"$ref": _REF + ok}}}
    if stream:
        content["text/event-stream"] = {
            "schema": {
                "type": "object",
                "required": ["data"],
                "properties": {"data": {"type": "string"}, "event": {"type": "string"}},
            },
            "description": 'With "stream": true: data: {chunk} events, then data: [DONE]',
        }
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "parameters": [],
        "responses": {
            "200": {"description": "OK (x-request-id: the job's id)", "content": content},
            **{
                str(status): {"description": text, **_body("OpenAIError")}
                for status, text in _OPENAI_ERRORS.items()
            },
        },
    }
    if request is not None:
        operation["requestBody"] = {"required": True, **_body(request)}
    return operation


def _ms_query(name: str, low: int, high: int, default: int | None, text: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": low, "maximum": high}
    if default is not None:
        schema["default"] = default
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": text}


_ENDPOINT_ID = {
    "name": "endpoint_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "pattern": "^[A-Za-z0-9_-]+$"},
    "example": "echo",
}
_JOB_ID = {
    "name": "job_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "pattern": "^[A-Za-z0-9_-]+$"},
}
_WAIT = _ms_query(
    "wait", WAIT_MIN_MS, WAIT_MAX_MS, WAIT_DEFAULT_MS, "How long the call holds, in ms."
)
_STREAM_WAIT = _ms_query(
    "wait", WAIT_MIN_MS, WAIT_MAX_MS, None, "How long the call holds while no chunk arrived."
)
_TTL = _ms_query("ttl", TTL_MIN_MS, TTL_MAX_MS, None, "Sets the job's time to live, in ms.")
_CURSOR = {
    "name": "cursor",
    "in": "query",
    "required": False,
    "schema": {"type": "integer", "minimum": 0, "maximum": STREAM_CURSOR_MAX},
    "description": (
        "Emulator extension (resumable reads): answer the chunks from index N on (0 is the"
        " job's first chunk) without draining them; the answer then carries `cursor` (the"
        " index of its first chunk) and `next` (the cursor to ask for next). A read that"
        " broke off asks again with the same cursor and loses nothing."
    ),
}


def _op(
    operation_id: str,
    summary: str,
    ok: str,
    *,
    errors: tuple[int, ...],
    params: tuple[dict[str, Any], ...] = (),
    body: bool = False,
) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "parameters": list(params),
        "responses": {"200": {"description": "OK", **_body(ok)}, **_errors(*errors)},
    }
    if body:
        operation["requestBody"] = {"required": True, **_body("JobSubmission")}
    return operation


_READ = (400, 401, 404, 429)
_WRITE = (400, 401, 403, 404, 429)

_NULLABLE_COUNT = {"type": ["integer", "null"], "minimum": 1}
_OPENAI_COMMON = {
    "model": {"type": "string"},
    "stream": {"type": ["boolean", "null"]},
    "stream_options": {
        "type": ["object", "null"],
        "properties": {"include_usage": {"type": ["boolean", "null"]}},
    },
    "max_tokens": _NULLABLE_COUNT,
}


def _completion_schema(kind: str) -> dict[str, Any]:
    """A whole (not streamed) OpenAI answer whose ``object`` is ``kind``."""
    return {
        "type": "object",
        "required": ["id", "object", "choices"],
        "properties": {
            "id": {"type": "string"},
            "object": {"const": kind},
            "model": {"type": "string"},
            "choices": {"type": "array", "items": {"type": "object"}},
            "usage": {"type": "object"},
        },
    }


_OPENAI_SCHEMAS: dict[str, Any] = {
    "OpenAIError": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["message", "type"],
                "properties": {
                    "message": {"type": "string"},
                    "type": {"type": "string"},
                    "param": {"type": ["string", "null"]},
                    "code": {"type": ["string", "integer", "null"]},
                },
            }
        },
    },
    "ChatCompletionRequest": {
        "type": "object",
        "required": ["messages"],
        "properties": {
            **_OPENAI_COMMON,
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["role"],
                    "properties": {
                        "role": {"type": "string"},
                        "content": {"type": ["string", "array", "null"]},
                    },
                },
            },
            "max_completion_tokens": _NULLABLE_COUNT,
        },
        "example": {
            "model": "chat-demo",
            "messages": [{"role": "user", "content": "Hello"}],
            "max_tokens": 8,
        },
    },
    "CompletionRequest": {
        "type": "object",
        "required": ["prompt"],
        "properties": {
            **_OPENAI_COMMON,
            "prompt": {
                "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
            },
        },
        "example": {"model": "chat-demo", "prompt": "Once upon a time", "max_tokens": 8},
    },
    "ChatCompletion": _completion_schema("chat.completion"),
    "Completion": _completion_schema("text_completion"),
    "ModelList": {
        "type": "object",
        "required": ["object", "data"],
        "properties": {
            "object": {"const": "list"},
            "data": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "object"],
                    "properties": {"id": {"type": "string"}, "object": {"const": "model"}},
                },
            },
        },
    },
}


_MODELS: tuple[type[BaseModel], ...] = (
    QueueError,
    JobSubmission,
    JobRecord,
    StreamResponse,
    PurgeResponse,
    HealthResponse,
    RequestsResponse,
)
"""The bodies of the queue operations; the models they hold are documented with them."""


def queue_schemas() -> dict[str, Any]:
    """``components.schemas`` of the queue routes, generated from :data:`_MODELS`."""
    _, generated = models_json_schema(
        [(model, "validation") for model in _MODELS], ref_template=_REF + "{model}"
    )
    return {name: _openapi_schema(schema) for name, schema in generated["$defs"].items()}


def _openapi_schema(schema: Any) -> Any:
    """A pydantic JSON schema as this document writes it: no generated titles, ``X | None``
    as ``"type": [X, "null"]``, no ``null`` default on a property that cannot be null."""
    if not isinstance(schema, dict):
        return schema
    out = {
        key: (
            {name: _openapi_schema(sub) for name, sub in value.items()}
            if key == "properties"
            else [_openapi_schema(sub) for sub in value]
            if isinstance(value, list) and key in ("anyOf", "allOf", "oneOf")
            else _openapi_schema(value)
            if key in ("items", "additionalProperties")
            else value
        )
        for key, value in schema.items()
        if key != "title"
    }
    options = out.get("anyOf", [])
    if len(options) == 2 and {"type": "null"} in options:
        (typed,) = [option for option in options if option != {"type": "null"}]
        if isinstance(typed.get("type"), str):
            del out["anyOf"]
            out = {**typed, **out, "type": [typed["type"], "null"]}
    kinds = out.get("type", [])
    if "default" in out and out["default"] is None and kinds and "null" not in kinds:
        del out["default"]
    if "$ref" in out and out.get("default", ...) is None:
        del out["default"]
    return out


def queue_openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the client-facing queue routes."""
    job = {"parameters": [_ENDPOINT_ID, _JOB_ID]}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "podbook emulator — serverless queue API",
            "version": podbook.__version__,
            "description": 'Client-facing queue routes; errors are {"error": ...} bodies.',
        },
        "security": [{"bearerAuth": []}],
        "paths": {
            "/v2/{endpoint_id}/run": {
                "parameters": [_ENDPOINT_ID],
                "post": _op("run", "Queue a job", "JobRecord", errors=_WRITE, body=True),
            },
            "/v2/{endpoint_id}/runsync": {
                "parameters": [_ENDPOINT_ID],
                "post": _op(
                    "runsync",
                    "Run a job and wait for its result (up to wait ms)",
                    "JobRecord",
                    errors=_WRITE,
                    params=(_WAIT,),
                    body=True,
                ),
            },
            "/v2/{endpoint_id}/status/{job_id}": {
                **job,
                "get": _op("status", "A job's record", "JobRecord", errors=_READ, params=(_TTL,)),
                "post": _op("statusPost", "A job's record (POST form)", "JobRecord", errors=_READ),
            },
            "/v2/{endpoint_id}/status-sync/{job_id}": {
                **job,
                "get": _op(
                    "statusSync",
                    "A job's record once it has ended, or when wait ms have passed",
                    "JobRecord",
                    errors=_READ,
                    params=(_WAIT,),
                ),
            },
            "/v2/{endpoint_id}/stream/{job_id}": {
                **job,
                "get": _op(
                    "stream",
                    "Drain the chunks streamed since the last call (or read from ?cursor=N)",
                    "StreamResponse",
                    errors=_READ,
                    params=(_STREAM_WAIT, _CURSOR),
                ),
                "post": _op(
                    "streamPost",
                    "Drain the streamed chunks (POST form)",
                    "StreamResponse",
                    errors=_READ,
                    params=(_STREAM_WAIT, _CURSOR),
                ),
            },
            "/v2/{endpoint_id}/cancel/{job_id}": {
                **job,
                "post": _op("cancel", "Cancel a job", "JobRecord", errors=_WRITE),
            },
            "/v2/{endpoint_id}/retry/{job_id}": {
                **job,
                "post": _op("retry", "Retry a failed job", "JobRecord", errors=_WRITE),
            },
            "/v2/{endpoint_id}/purge-queue": {
                "parameters": [_ENDPOINT_ID],
                "post": _op("purgeQueue", "Drop the queued jobs", "PurgeResponse", errors=_WRITE),
            },
            "/v2/{endpoint_id}/health": {
                "parameters": [_ENDPOINT_ID],
                "get": _op("health", "Job and worker counts", "HealthResponse", errors=_READ),
            },
            "/v2/{endpoint_id}/requests": {
                "parameters": [_ENDPOINT_ID],
                "get": _op(
                    "requests",
                    f"The endpoint's recent requests (jobs), newest first, at most "
                    f"{REQUESTS_MAX_ITEMS}",
                    "RequestsResponse",
                    errors=_READ,
                ),
            },
            "/v2/{endpoint_id}/openai/v1/chat/completions": {
                "parameters": [_ENDPOINT_ID],
                "post": _openai_op(
                    "openaiChatCompletions",
                    "OpenAI chat completion through a job (streamed with stream: true)",
                    "ChatCompletion",
                    request="ChatCompletionRequest",
                    stream=True,
                ),
            },
            "/v2/{endpoint_id}/openai/v1/completions": {
                "parameters": [_ENDPOINT_ID],
                "post": _openai_op(
                    "openaiCompletions",
                    "OpenAI text completion through a job (streamed with stream: true)",
                    "Completion",
                    request="CompletionRequest",
                    stream=True,
                ),
            },
            "/v2/{endpoint_id}/openai/v1/models": {
                "parameters": [_ENDPOINT_ID],
                "get": _openai_op(
                    "openaiModels",
                    "The models the endpoint's handler serves (through a job)",
                    "ModelList",
                    request=None,
                    stream=False,
                ),
            },
        },
        "components": {
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
            "schemas": {**queue_schemas(), **_OPENAI_SCHEMAS},
        },
    }
