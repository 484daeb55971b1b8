"""Queue errors: a :class:`QueueRefusal` raised anywhere is answered ``{"error": "..."}`` (the
queue is not problem+json) by the app's exception handlers (:mod:`podbook.emulator.routes.errors`)."""

from __future__ import annotations


class QueueRefusal(Exception):
    """Raised anywhere in a queue or worker handler to answer ``{"error": message}``."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def endpoint_not_found(endpoint_id: str) -> QueueRefusal:
    """404 for an endpoint that does not exist for this account."""
    return QueueRefusal(
        404,
        f"endpoint {endpoint_id!r} not found; create it with POST /v2/serverless or "
        "'podbook emulator --endpoint NAME', or use a built-in: 'echo', 'stream-demo', "
        "'chat-demo'",
    )


def job_not_found(job_id: str) -> QueueRefusal:
    """404 for a job that never existed here or has expired (TTL or retention)."""
    return QueueRefusal(
        404, f"job {job_id!r} not found; it may have expired (TTL or result retention)"
    )
