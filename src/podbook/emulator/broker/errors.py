"""Queue errors: ``{"error": "..."}`` bodies (the queue is not problem+json)."""

from __future__ import annotations

from starlette.responses import Response

from podbook.emulator.jsonresp import dumps


class QueueError(Exception):
    """Raised anywhere in a queue or worker handler to answer ``{"error": message}``."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def error_response(error: QueueError) -> Response:
    """Render a :class:`QueueError`."""
    return Response(
        dumps({"error": error.message}),
        status_code=error.status,
        headers=error.headers,
        media_type="application/json",
    )


def endpoint_not_found(endpoint_id: str) -> QueueError:
    """404 for an endpoint that does not exist for this account."""
    return QueueError(
        404,
        f"endpoint {endpoint_id!r} not found; create it with POST /v2/serverless or "
        "'podbook emulator --endpoint NAME', or use a built-in: 'echo', 'stream-demo', "
        "'chat-demo'",
    )


def job_not_found(job_id: str) -> QueueError:
    """404 for a job that never existed here or has expired (TTL or retention)."""
    return QueueError(
        404, f"job {job_id!r} not found; it may have expired (TTL or result retention)"
    )
