"""The problem+json error body every REST error carries."""

from __future__ import annotations

from .base import ResponseModel

__all__ = ["Problem", "PROBLEM_CONTENT_TYPE", "STATUS_TITLES"]

PROBLEM_CONTENT_TYPE = "application/problem+json"

STATUS_TITLES: dict[int, str] = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
"""Standard titles for the statuses the interface uses."""


class Problem(ResponseModel):
    """``{"title", "status", "detail", "errors"?}`` (``application/problem+json``)."""

    title: str
    status: int
    detail: str
    errors: list[str] | None = None

    @classmethod
    def of(cls, status: int, detail: str, errors: list[str] | None = None) -> Problem:
        """A problem with the standard title for ``status``."""
        problem = cls(title=STATUS_TITLES.get(status, "Error"), status=status, detail=detail)
        if errors:
            problem.errors = list(errors)
        return problem

    def __str__(self) -> str:
        """``"<status> <title>: <detail>"`` plus one ``"  - <error>"`` line per entry."""
        lines = [f"{self.status} {self.title}: {self.detail}"]
        lines.extend(f"  - {error}" for error in self.errors or ())
        return "\n".join(lines)
