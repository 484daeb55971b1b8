"""Request validation through the shared wire contract (:mod:`podbook.api`).

The emulator validates each body with the same pydantic request models the client uses,
then works on the (validated) JSON itself, so wire names stay exactly as the seed writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from podbook.api.base import RequestModel
from podbook.api.container import container_size_errors
from podbook.api.validation import RequestRejected, validate_request

M = TypeVar("M", bound=RequestModel)


def validate(model: type[M], body: Any) -> M:
    """Validate ``body`` against a request model; raises a 400/422 :class:`RequestRejected`
    (answered problem+json)."""
    return validate_request(model, body)


def check_process_size(spec: Mapping[str, Any], whose: str) -> None:
    """400 when the ``args`` and ``env`` a pod would start with (``spec``, wire names: a body
    merged over its template, or a pod after a PATCH) exceed
    :data:`~podbook.api.container.MAX_ARGS_ENV_BYTES`; each part passed on its own."""
    errors = container_size_errors(spec.get("args"), spec.get("env"), whose=whose)
    if errors:
        raise RequestRejected.from_errors(400, errors)
