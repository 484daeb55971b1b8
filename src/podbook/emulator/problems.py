"""REST errors: a :class:`Problem` raised anywhere is answered problem+json (title, status,
detail, errors[]) by the app's exception handlers (:mod:`podbook.emulator.routes.errors`)."""

from __future__ import annotations

from http import HTTPStatus


class Problem(Exception):
    """Raised anywhere in a handler to answer with a problem+json body."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        title: str | None = None,
        errors: list[str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title or HTTPStatus(status).phrase
        self.detail = detail
        self.errors = errors
        self.headers = headers or {}


def not_found(kind: str, resource_id: str) -> Problem:
    """404 for a resource that does not exist or belongs to someone else (same answer)."""
    return Problem(
        404, f"{kind} {resource_id!r} not found; check the id (it may have been deleted)"
    )
