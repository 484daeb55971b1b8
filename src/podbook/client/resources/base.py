"""What every resource shares: how it reaches its client, and how bodies are prepared.

A resource module defines pure *call builders* (functions returning a
:class:`~podbook.client._core.Call`) and two thin faces over them: a sync resource whose
methods return results, and an async one whose methods return awaitables. An
:class:`Operation` declares such a method once for both faces; the CRUD resources are
declared whole with :class:`~podbook.client.resources.crud.Crud`.
"""

from __future__ import annotations

import functools
import gc
import inspect
import re
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from types import MethodType
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, overload
from urllib.parse import quote

from pydantic import BaseModel, Field, TypeAdapter, create_model

from podbook.client._core import BodyParser, Call, invalid_request_from
from podbook.errors import InvalidRequest

if TYPE_CHECKING:
    from podbook.client._async import AsyncClient
    from podbook.client._sync import Client

__all__ = [
    "AsyncResource",
    "ListParser",
    "ModelParser",
    "Operation",
    "SyncResource",
    "camel_case",
    "gc_paused",
    "list_parser",
    "model_parser",
    "path_id",
    "prepare_body",
    "wire_keys",
]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
P = ParamSpec("P")


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


_TYPE_VARIABLE = re.compile(r"\b[A-Z]\b")


class Operation(Generic[P, T]):
    """One method of a resource, declared once for both faces from its call builder.

    ``build(*args, **kwargs)`` returns the :class:`~podbook.client._core.Call`; on a
    :class:`SyncResource` the method sends it and returns the result, on an
    :class:`AsyncResource` it is a coroutine method. ``doc`` is the method's docstring;
    ``rename`` gives public names to the builder's parameters (``{"item": "template"}``),
    ``types`` names the type variables of its annotations in the method's signature
    (``{"M": "Template"}``), so that ``help()`` shows what it takes and returns.
    """

    def __init__(
        self,
        build: Callable[P, Call[T]],
        doc: str,
        *,
        rename: Mapping[str, str] | None = None,
        types: Mapping[str, str] | None = None,
    ) -> None:
        self.build = build
        built = inspect.signature(build)
        self._builder_names = {  # only names a caller may pass by keyword
            new: old
            for old, new in (rename or {}).items()
            if old in built.parameters
            and built.parameters[old].kind is not inspect.Parameter.POSITIONAL_ONLY
        }

        def send(resource: SyncResource, /, *args: Any, **kwargs: Any) -> T:
            return resource._request(self._call(args, kwargs))

        async def send_async(resource: AsyncResource, /, *args: Any, **kwargs: Any) -> T:
            return await resource._request(self._call(args, kwargs))

        def named(annotation: Any) -> Any:
            if not isinstance(annotation, str):
                return annotation
            return _TYPE_VARIABLE.sub(lambda m: (types or {}).get(m[0], m[0]), annotation)

        kinds = [p.kind for p in built.parameters.values()]
        first = inspect.Parameter.POSITIONAL_ONLY  # self comes before any positional-only one
        if inspect.Parameter.POSITIONAL_ONLY not in kinds:
            first = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter("self", first)]
        params += [
            p.replace(name=(rename or {}).get(p.name, p.name), annotation=named(p.annotation))
            for p in built.parameters.values()
        ]
        returns = named(built.return_annotation)  # "Call[Template]": the method returns a Template
        if isinstance(returns, str) and returns.startswith("Call[") and returns.endswith("]"):
            returns = returns[len("Call[") : -1]
        signature = built.replace(parameters=params, return_annotation=returns)
        for method in (send, send_async):
            method.__doc__ = doc
            method.__signature__ = signature  # type: ignore[union-attr]
        self._sync, self._async = send, send_async

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call[T]:
        """The builder's call; arguments given by their public names reach it by its own."""
        for public, name in self._builder_names.items():
            if public in kwargs:
                kwargs[name] = kwargs.pop(public)
        return self.build(*args, **kwargs)  # type: ignore[arg-type]

    def __set_name__(self, owner: type, name: str) -> None:
        for method in (self._sync, self._async):
            method.__name__ = name
            method.__qualname__ = f"{owner.__qualname__}.{name}"

    @overload
    def __get__(self, resource: None, owner: type) -> Callable[..., Any]: ...

    @overload
    def __get__(self, resource: SyncResource, owner: type) -> Callable[P, T]: ...

    @overload
    def __get__(
        self, resource: AsyncResource, owner: type
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, resource: Any, owner: type) -> Any:
        """The bound method on a resource; on its class, the function (as for a ``def``), so
        that ``help()`` and documentation tools list it as a method."""
        if resource is None:
            return self._async if issubclass(owner, AsyncResource) else self._sync
        method = self._async if isinstance(resource, AsyncResource) else self._sync
        return MethodType(method, resource)


def path_id(value: Any, what: str = "id") -> str:
    """A resource id (a string, or an object with ``.id``) quoted for a URL path."""
    raw = getattr(value, "id", value)
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidRequest(
            f"{what} must be a non-empty string or an object with .id, not {raw!r}",
            status=400,
        )
    return quote(raw.strip(), safe="")


# Validating a large body builds many small objects (about 80 per pod); the cyclic garbage
# collector would run several passes over them, and over the rest of the heap, meanwhile,
# doubling the time of a 1,000-pod list. Nothing built there can form garbage cycles, so the
# collector is paused while a large body is validated.
GC_PAUSE_MIN_BYTES = 32 * 1024
_JSON_ARRAY = re.compile(rb"[ \t\r\n]*\[")
_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_resume = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (nested and thread-safe: it
    resumes when the last pause ends, and only if it was enabled when the first began)."""
    global _gc_pauses, _gc_resume
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_resume:
                gc.enable()


class ModelParser(BodyParser[M]):
    """Parse a JSON object into ``model`` (from bytes: pydantic-core's JSON parser)."""

    def __init__(self, model: type[M]) -> None:
        self.model = model

    def __call__(self, body: Any) -> M:
        """``model`` from decoded JSON."""
        return self.model.model_validate(body)

    def from_json(self, data: bytes) -> M:
        """``model`` straight from the body's bytes."""
        if len(data) < GC_PAUSE_MIN_BYTES:
            return self.model.model_validate_json(data)
        with gc_paused():
            return self.model.model_validate_json(data)


class ListParser(BodyParser[list[M]]):
    """Parse ``{key: [...]}`` (or a bare list) into a list of ``model``.

    A missing or ``null`` ``key`` gives an empty list; other properties are ignored.
    """

    def __init__(self, model: type[M], key: str) -> None:
        self.model = model
        self.key = key
        self._items = TypeAdapter(list[model])  # type: ignore[valid-type]
        self._wrapper: type[BaseModel] = create_model(
            f"{model.__name__}ListBody",
            items=(list[model] | None, Field(default=None, validation_alias=key)),  # type: ignore[valid-type]
        )

    def __call__(self, body: Any) -> list[M]:
        """The list from decoded JSON."""
        items = body.get(self.key, []) if isinstance(body, dict) else body
        return self._items.validate_python(items or [])

    def from_json(self, data: bytes) -> list[M]:
        """The list straight from the body's bytes."""
        if len(data) < GC_PAUSE_MIN_BYTES:
            return self._from_json(data)
        with gc_paused():
            return self._from_json(data)

    def _from_json(self, data: bytes) -> list[M]:
        if _JSON_ARRAY.match(data):
            return self._items.validate_json(data)
        return self._wrapper.model_validate_json(data).items or []  # type: ignore[attr-defined]


@functools.cache
def model_parser(model: type[M]) -> ModelParser[M]:
    """The (cached) parser of a JSON object into ``model``."""
    return ModelParser(model)


@functools.cache
def list_parser(model: type[M], key: str) -> ListParser[M]:
    """The (cached) parser of ``{key: [...]}`` (or a bare list) into a list of ``model``."""
    return ListParser(model, key)


def camel_case(key: str, separator: str = "_") -> str:
    """``data_center_ids`` (or, with ``separator="-"``, ``network-volumes``) in camelCase."""
    if separator not in key:
        return key
    head, *rest = key.split(separator)
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_keys(value: Any, *, keep: frozenset[str] = frozenset({"env"})) -> Any:
    """Python-style keys (``data_center_ids``) turned into wire keys (``dataCenterIds``).

    Values under a key in ``keep`` (environment variables) are left exactly as given.
    """
    if isinstance(value, Mapping):
        return {
            camel_case(k): (v if camel_case(k) in keep else wire_keys(v, keep=keep))
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
