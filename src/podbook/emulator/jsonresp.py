"""Fast, compact JSON responses."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


def dumps(value: Any) -> bytes:
    """Encode ``value`` as compact UTF-8 JSON."""
    return _encoder.encode(value).encode("utf-8")


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON response with a body encoded once."""
    return Response(
        dumps(value), status_code=status, headers=headers, media_type="application/json"
    )
