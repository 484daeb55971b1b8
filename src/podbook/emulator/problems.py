"""problem+json answers: every error the emulator gives has title, status, detail, errors[]."""

from __future__ import annotations

from http import HTTPStatus

from starlette.responses import Response

from podbook.emulator.jsonresp import dumps

PROBLEM_TYPE = "application/problem+json"


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


def problem_response(problem: Problem, extra_headers: dict[str, str] | None = None) -> Response:
    """Render a :class:`Problem` as an HTTP response."""
    body: dict[str, object] = {
        "title": problem.title,
        "status": problem.status,
        "detail": problem.detail,
    }
    if problem.errors:
        body["errors"] = problem.errors
    headers = dict(problem.headers)
    if extra_headers:
        headers.update(extra_headers)
    return Response(
        dumps(body), status_code=problem.status, headers=headers, media_type=PROBLEM_TYPE
    )


def not_found(kind: str, resource_id: str) -> Problem:
    """404 for a resource that does not exist or belongs to someone else (same answer)."""
    return Problem(
        404, f"{kind} {resource_id!r} not found; check the id (it may have been deleted)"
    )
