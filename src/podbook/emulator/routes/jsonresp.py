"""Fast, compact JSON responses (orjson)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response


def dumps(value: Any) -> bytes:
    """Encode ``value`` as compact UTF-8 JSON."""
    return orjson.dumps(value)


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON response with a body encoded once."""
    return Response(
        dumps(value), status_code=status, headers=headers, media_type="application/json"
    )


def raw_json_response(body: bytes, status: int = 200) -> Response:
    """A response whose JSON ``body`` is already encoded."""
    return Response(body, status_code=status, media_type="application/json")
