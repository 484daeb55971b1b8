"""Request models built from a magic's parsed flags, checked as the client checks them.

A command gathers the fields its line gave, by their Python names; :func:`request_model`
turns them into the :mod:`podbook.api` request model. A value the service would refuse
raises the client's own :class:`~podbook.errors.InvalidRequest` (the same one line, naming
the wire path such as ``$.cpu.vcpuCount``) before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from podbook.api.base import RequestModel

M = TypeVar("M", bound=RequestModel)


def request_model(model: type[M], /, *, cleared: Iterable[str] = (), **fields: Any) -> M:
    """``model`` from its fields (snake_case names; ``None`` values are left out); the fields
    named in ``cleared`` are sent as null (a merge patch clears them)."""
    from podbook.api.validation import RequestRejected, validate_request
    from podbook.client.resources.base import invalid_request_from, wire_keys

    given = {name: value for name, value in fields.items() if value is not None}
    given.update(dict.fromkeys(cleared))
    try:
        return validate_request(model, wire_keys(given))
    except RequestRejected as exc:
        raise invalid_request_from(exc) from None
