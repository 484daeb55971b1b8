"""Checks of what clients send to the queue, through the shared contract
(:mod:`podbook.api.queue`): submission bodies (``wait`` and ``ttl``: ``parse_ms_query``). Each failure is a
:class:`~podbook.api.validation.RequestRejected`, which the queue routes answer as one
``{"error": ...}`` 400 line naming the field and the allowed range."""

from __future__ import annotations

from typing import Any, Literal

import orjson

from podbook.api.queue import check_payload_size, validate_submission


def parse_submission(raw: bytes, operation: Literal["run", "runsync"]) -> dict[str, Any]:
    """The submission body of ``/run`` or ``/runsync`` (size, then schema).

    The common body, ``{"input": {...}}`` alone, is checked without the schema model (it is
    all the model would check); any other goes through it, for its errors.
    """
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and len(body) == 1 and isinstance(body.get("input"), dict):
        check_payload_size(len(raw), operation)
        return body
    validate_submission(raw, operation)
    return body  # type: ignore[no-any-return]  # a JSON object: the schema said so
