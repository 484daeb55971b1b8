"""Job records and stream chunks in the plain-dict form the panels keep in their traits.

A job's ``output`` can be large (a 10 MB result, or every chunk of a stream aggregated), so
what reaches a trait is bounded: an output larger than :data:`OUTPUT_PREVIEW_BYTES` of JSON
is replaced by a preview, and ``Job.output()`` still returns all of it.
"""

from __future__ import annotations

import json
from typing import Any

from podbook.api.queue import (
    ACTIVE_JOB_STATUSES,
    RETRYABLE_JOB_STATUSES,
    TERMINAL_JOB_STATUSES,
    parse_job_error,
)

__all__ = [
    "ACTIVE_JOB_STATUSES",
    "OUTPUT_PREVIEW_BYTES",
    "RETRYABLE_JOB_STATUSES",
    "TERMINAL_JOB_STATUSES",
    "bounded_output",
    "chunk_parts",
    "error_state",
    "job_state",
    "to_plain",
]

OUTPUT_PREVIEW_BYTES = 64_000


def to_plain(obj: Any) -> Any:
    """A model (pydantic) as its wire-form JSON value; anything else unchanged."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True)
    return obj


def bounded_output(output: Any) -> Any:
    """``output`` itself when its JSON is small, else a preview string that says so."""
    if output is None or isinstance(output, (bool, int, float)):
        return output
    try:
        text = json.dumps(output, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(output)
    if len(text) <= OUTPUT_PREVIEW_BYTES:
        return output
    return (
        f"{text[: OUTPUT_PREVIEW_BYTES // 8]}… ({len(text):,} characters of JSON; "
        "job.output() returns all of it)"
    )


def error_state(value: Any) -> dict[str, Any] | None:
    """A handler's error as ``{"type", "message", "traceback"}`` (or None when there is none)."""
    error = parse_job_error(value)
    if error is None:
        return None
    return {
        "type": error.error_type or "",
        "message": error.error_message,
        "traceback": error.error_traceback or "",
    }


def job_state(record: Any, endpoint_id: str, previous: dict[str, Any] | None = None) -> dict:
    """The ``job`` trait of a JobPanel from a job record (a ``JobRecord`` or its dict).

    Keys: ``id``, ``endpointId``, ``status``, ``delayTime``, ``executionTime``, ``error``
    (``{type, message, traceback}`` or None) and ``output`` (bounded; the progress update
    while IN_PROGRESS). Fields the record lacks keep their ``previous`` values.
    """
    data = to_plain(record) or {}
    state = dict(previous or {})
    state["id"] = data.get("id") or state.get("id", "")
    state["endpointId"] = endpoint_id
    state["status"] = data.get("status") or state.get("status", "")
    for key in ("delayTime", "executionTime"):
        if data.get(key) is not None:
            state[key] = data[key]
        state.setdefault(key, None)
    if "output" in data:
        state["output"] = bounded_output(data["output"])
    state.setdefault("output", None)
    state["error"] = error_state(data.get("error"))
    return state


def chunk_parts(item: Any) -> tuple[Any, dict[str, Any] | None]:
    """``(output, metrics)`` of one streamed item.

    The client's stream yields chunk outputs; an item may also be a whole stream entry
    (``{"output": ..., "metrics": {...}}``, a ``StreamChunk``). ``metrics`` is the seed's
    metrics dict when the item carries one.
    """
    item = to_plain(item)
    if isinstance(item, dict) and set(item) <= {"output", "metrics"} and "output" in item:
        metrics = item.get("metrics")
        return item["output"], metrics if isinstance(metrics, dict) else None
    if isinstance(item, dict) and isinstance(item.get("metrics"), dict):
        return item, item["metrics"]
    return item, None
