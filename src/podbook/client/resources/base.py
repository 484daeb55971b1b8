"""What every resource shares: how it reaches its client, and how bodies are prepared.

A resource module defines pure *call builders* (functions returning a
:class:`~podbook.client.core.Call`) and two thin faces over them: a sync resource whose
methods return results, and an async one whose methods return awaitables. New areas of
the interface (queue endpoints and jobs, templates, volumes, billing, logs) slot in as
more modules of this shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter

from podbook.client.core import Call, invalid_request_from
from podbook.errors import InvalidRequest

if TYPE_CHECKING:
    from podbook.client._async import AsyncClient
    from podbook.client._sync import Client

__all__ = [
    "AsyncResource",
    "SyncResource",
    "list_parser",
    "model_parser",
    "path_id",
    "prepare_body",
    "wire_keys",
]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


class SyncResource:
    """Base of the sync resources: sends its calls through a :class:`Client`."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def _request(self, call: Call[T]) -> T:
        return self._client.request(call)


class AsyncResource:
    """Base of the async resources: sends its calls through an :class:`AsyncClient`."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def _request(self, call: Call[T]) -> T:
        return await self._client.request(call)


def path_id(value: Any, what: str = "id") -> str:
    """A resource id (a string, or an object with ``.id``) quoted for a URL path."""
    raw = getattr(value, "id", value)
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidRequest(
            f"{what} must be a non-empty string or an object with .id, not {raw!r}",
            status=400,
        )
    return quote(raw.strip(), safe="")


def model_parser(model: type[M]) -> Callable[[Any], M]:
    """Parse a JSON object into ``model``."""
    return model.model_validate


def list_parser(model: type[M], key: str) -> Callable[[Any], list[M]]:
    """Parse ``{key: [...]}`` (or a bare list) into a list of ``model``."""
    adapter = TypeAdapter(list[model])  # type: ignore[valid-type]

    def parse(body: Any) -> list[M]:
        items = body.get(key, []) if isinstance(body, dict) else body
        return adapter.validate_python(items or [])

    return parse


def _camel(key: str) -> str:
    if "_" not in key:
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_keys(value: Any, *, keep: frozenset[str] = frozenset({"env"})) -> Any:
    """Python-style keys (``data_center_ids``) turned into wire keys (``dataCenterIds``).

    Values under a key in ``keep`` (environment variables) are left exactly as given.
    """
    if isinstance(value, Mapping):
        return {
            _camel(k): (v if _camel(k) in keep else wire_keys(v, keep=keep))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [wire_keys(item, keep=keep) for item in value]
    return value


def prepare_body(
    model: type[BaseModel],
    request: BaseModel | Mapping[str, Any] | None,
    fields: Mapping[str, Any],
) -> dict[str, Any]:
    """Validate a request locally and return its wire body.

    ``request`` is a request model or a mapping; ``fields`` are keyword arguments
    (snake_case or camelCase). A request the service would refuse raises
    :class:`InvalidRequest` before anything is sent.
    """
    from podbook.api.base import to_wire
    from podbook.api.validation import RequestRejected, validate_request

    if request is not None and fields:
        raise InvalidRequest(
            f"pass either a {model.__name__} or keyword fields, not both", status=400
        )
    if isinstance(request, BaseModel):
        body: Any = to_wire(request)
    elif request is not None:
        body = wire_keys(dict(request))
    else:
        body = wire_keys(dict(fields))
    try:
        validated = validate_request(model, body)
    except RequestRejected as exc:
        raise invalid_request_from(exc) from None
    return to_wire(validated)
