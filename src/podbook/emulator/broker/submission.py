"""Checks of what clients send to the queue, through the shared contract
(:mod:`podbook.api.queue`): submission bodies, ``wait`` and ``ttl``. Each failure is one
``QueueError(400)`` line naming the field and the allowed range."""

from __future__ import annotations

from typing import Any, Literal

import orjson

from podbook.api.queue import check_payload_size, error_text, parse_ms_query, validate_submission
from podbook.api.validation import RequestRejected
from podbook.emulator.broker.errors import QueueError


def parse_submission(raw: bytes, operation: Literal["run", "runsync"]) -> dict[str, Any]:
    """The submission body of ``/run`` or ``/runsync`` (size, then schema), or a 400.

    The common body, ``{"input": {...}}`` alone, is checked without the schema model (it is
    all the model would check); any other goes through it, for its errors.
    """
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        body = None
    try:
        if isinstance(body, dict) and len(body) == 1 and isinstance(body.get("input"), dict):
            check_payload_size(len(raw), operation)
            return body
        validate_submission(raw, operation)
    except RequestRejected as exc:
        raise QueueError(400, error_text(exc)) from None
    return body  # type: ignore[no-any-return]  # a JSON object: the schema said so


def query_ms(raw: str | None, name: Literal["wait", "ttl"], default: int | None) -> int | None:
    """A millisecond query parameter (``wait`` or ``ttl``) within its range, or a 400."""
    try:
        return parse_ms_query(name, raw, default=default)
    except RequestRejected as exc:
        raise QueueError(400, error_text(exc)) from None
