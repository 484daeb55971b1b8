"""What the OpenAI-compatible route writes: handler outputs as SSE text or a JSON body, and
OpenAI-shaped errors.

A worker answers a request that came through ``/openai/...`` as the service's vLLM worker does
(``reference/openai-and-load-balancing.md``): for ``"stream": true`` each yielded item is a
string that is already SSE text (``data: {json}\\n\\n``, possibly several, possibly ending
``data: [DONE]\\n\\n``), or a chunk object, or a list of them; without ``stream`` the first
(only) yielded or returned object is the body. An error object
``{"object": "error", "message", "type", "code"}`` (vLLM's) or ``{"error": {...}}`` (OpenAI's)
becomes an HTTP error, its status the ``code`` when that is a 4xx/5xx number, else 400.
Everything here is pure: no I/O, no broker.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

DONE = b"data: [DONE]\n\n"
"""The event that ends an OpenAI stream."""

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}


def error_type(status: int) -> str:
    """The OpenAI error ``type`` that goes with an HTTP status."""
    return _TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")


def error_body(
    message: str, status: int, *, type_: str | None = None, code: Any = None, param: Any = None
) -> dict[str, Any]:
    """``{"error": {"message", "type", "param", "code"}}``, as OpenAI clients read it."""
    return {
        "error": {
            "message": message,
            "type": type_ or error_type(status),
            "param": param,
            "code": code,
        }
    }


def handler_error(output: Any) -> tuple[int, dict[str, Any]] | None:
    """``(status, body)`` when a handler's output is an error object, else None."""
    if not isinstance(output, dict):
        return None
    if output.get("object") == "error":
        detail = output
    elif isinstance(output.get("error"), dict):
        detail = output["error"]
    elif isinstance(output.get("error"), str) and output["error"]:
        detail = {"message": output["error"]}
    else:
        return None
    code = detail.get("code")
    status = code if isinstance(code, int) and 400 <= code <= 599 else 400
    message = str(detail.get("message") or "the handler answered an error")
    return status, error_body(
        message, status, type_=detail.get("type"), code=code, param=detail.get("param")
    )


def job_failure(error: Any) -> tuple[int, dict[str, Any]]:
    """``(status, body)`` for a job that FAILED with ``error`` (the job's ``error`` field).

    A handler that raised left JSON text with ``error_type`` and ``error_message`` (podbook's
    and the ``runpod`` SDK's workers): the message names both; an OpenAI-style error object
    keeps its own status. Anything else is a 500 with the text.
    """
    parsed: Any = error
    if isinstance(error, str):
        try:
            parsed = json.loads(error)
        except ValueError:
            parsed = error
    if isinstance(parsed, dict):
        found = handler_error(parsed) or handler_error({"error": parsed})
        if "error_message" in parsed:
            kind = parsed.get("error_type") or "Error"
            message = f"the handler failed: {kind}: {parsed['error_message']}"
        elif found is not None:
            return found
        else:
            message = f"the handler failed: {json.dumps(parsed, default=str)[:2000]}"
    else:
        message = f"the handler failed: {str(parsed)[:2000]}" if parsed else "the handler failed"
    return 500, error_body(message, 500, type_="server_error", code="handler_failed")


def _event(data: Any) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"


def sse_bytes(output: Any) -> tuple[bytes, bool]:
    """One yielded item as SSE text, and whether it ended the stream (``[DONE]``).

    A string is written as it is (it already is SSE text); a chunk object becomes one
    ``data:`` event (an error object becomes OpenAI's in-stream ``{"error": ...}`` event);
    a list is each of its items in turn.
    """
    if isinstance(output, str):
        data = output.encode("utf-8")
        return data, b"data: [DONE]" in data
    if isinstance(output, list):
        parts = [sse_bytes(item) for item in output]
        return b"".join(p for p, _ in parts), any(done for _, done in parts)
    failure = handler_error(output)
    if failure is not None:
        return _event(failure[1]), False
    return _event(output), False


def sse_payload(text: str) -> Any:
    """The first ``data:`` payload of SSE text, parsed (or the text when none is JSON)."""
    for line in text.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            if data and data != "[DONE]":
                try:
                    return json.loads(data)
                except ValueError:
                    return data
    return text


def response_body(chunks: list[Any] | None, output: Any, has_output: bool) -> Any:
    """The JSON body of a non-streaming request from what its job produced.

    The first streamed chunk when there is one (a generator handler yields its body), else
    the job's output (a handler that returned it; an aggregated stream of one item is that
    item). A string of SSE text gives its first ``data:`` payload.
    """
    if chunks:
        body = chunks[0]
    elif has_output:
        body = output[0] if isinstance(output, list) and len(output) == 1 else output
    else:
        body = None
    if isinstance(body, str):
        return sse_payload(body)
    return body
