"""Request validation through the shared wire contract (:mod:`podbook.api`).

The emulator validates each body with the same pydantic request models the client uses,
then works on the (validated) JSON itself, so wire names stay exactly as the seed writes them.
"""

from __future__ import annotations

from typing import Any

from podbook.emulator.problems import Problem


def as_problem(exc: Any) -> Problem:
    """Turn an :class:`podbook.api.validation.RequestRejected` into a :class:`Problem`."""
    return Problem(
        int(exc.status),
        str(exc.detail),
        title=getattr(exc, "title", None) or None,
        errors=list(getattr(exc, "errors", None) or []) or None,
    )


def validate(model: type, body: Any) -> Any:
    """Validate ``body`` against a request model; raises a 400/422 :class:`Problem`."""
    from podbook.api.validation import RequestRejected, validate_request

    try:
        return validate_request(model, body)
    except RequestRejected as exc:
        raise as_problem(exc) from None
