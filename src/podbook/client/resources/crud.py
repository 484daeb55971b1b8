"""One generic CRUD resource of REST v2, declared once for the sync and the async face.

A :class:`Crud` names where a resource lives, its model, the key of its list answer and
its request models. Its call builders (``list``, ``get``, ``create``, ``update``,
``delete``), and any other a resource has, become methods of both faces through
:meth:`Crud.op`::

    TEMPLATES: Crud[Template, CreateTemplateRequest, UpdateTemplateRequest] = Crud(
        "/v2/templates", "podbook.api.catalog:Template", item="template", requests=...
    )

    class _TemplateOperations:
        list = TEMPLATES.op(TEMPLATES.list, "Your own templates.")
        get = TEMPLATES.op(TEMPLATES.get, "Read one template.")

    class Templates(_TemplateOperations, SyncResource): ...
    class AsyncTemplates(_TemplateOperations, AsyncResource): ...

``client.templates.get(...)`` is then typed as returning a ``Template``, and
``await async_client.templates.get(...)`` too. Models are named as ``"module:Name"`` and
imported on first use, so importing the client does not import every model.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Generic, ParamSpec, TypeVar

from pydantic import BaseModel

from podbook.client._core import Call
from podbook.client.resources.base import (
    Operation,
    camel_case,
    list_parser,
    model_parser,
    path_id,
    prepare_body,
)

__all__ = ["Body", "Crud"]

M = TypeVar("M", bound=BaseModel)
C = TypeVar("C")
U = TypeVar("U")
T = TypeVar("T")
P = ParamSpec("P")

Body = Mapping[str, Any] | None
"""A request given as a mapping (or nothing: keyword fields instead)."""


def load(name: str) -> Any:
    """The object ``"package.module:Name"`` names."""
    module, _, attribute = name.partition(":")
    return getattr(importlib.import_module(module), attribute)


class Crud(Generic[M, C, U]):
    """A resource at ``path`` and its ``model`` (``"module:Name"``). ``item`` is the public
    name of the id argument (``template``), ``what`` how an error names it (default
    ``"{item} id"``). What follows from these unless given: ``list_key``, the key of the list
    answer, is the path's last segment in camelCase (``networkVolumes``); the request models
    of ``create`` and ``update`` are ``Create{Name}Request`` and ``Update{Name}Request`` of
    the module ``requests`` (default: the model's). ``complete`` fills defaults into a
    create body after it is validated."""

    def __init__(
        self,
        path: str,
        model: str,
        *,
        item: str,
        what: str | None = None,
        list_key: str | None = None,
        requests: str | None = None,
        create: str | None = None,
        update: str | None = None,
        complete: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.path = path
        self._model = model
        module, _, name = model.partition(":")
        self.list_key = list_key or camel_case(path.rpartition("/")[2], "-")
        self.item = item
        self.what = what or f"{item} id"
        requests = requests or module
        self._requests = {
            "create": create or f"{requests}:Create{name}Request",
            "update": update or f"{requests}:Update{name}Request",
        }
        self._complete = complete
        named = {"M": model, "C": self._requests["create"], "U": self._requests["update"]}
        self._types = {var: name.rpartition(":")[2] for var, name in named.items()}

    @property
    def model(self) -> type[M]:
        """The resource's model (imported on first use)."""
        return load(self._model)  # type: ignore[no-any-return]

    def item_path(self, item: Any) -> str:
        """``{path}/{id}`` of one item (an id, or an object with ``.id``)."""
        return f"{self.path}/{path_id(item, self.what)}"

    def body(self, operation: str, request: Any, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The validated wire body of ``operation`` (``create`` or ``update``)."""
        return prepare_body(load(self._requests[operation]), request, fields)

    # -------------------------------------------------------------------- call builders

    def list(self) -> Call[list[M]]:
        """``GET {path}``."""
        return Call("GET", self.path, parse=list_parser(self.model, self.list_key))

    def get(self, item: M | str) -> Call[M]:
        """``GET {path}/{id}``."""
        return Call("GET", self.item_path(item), parse=model_parser(self.model))

    def create(self, request: C | Body = None, /, **fields: Any) -> Call[M]:
        """``POST {path}`` with a locally validated body."""
        body = self.body("create", request, fields)
        if self._complete is not None:
            self._complete(body)
        return Call("POST", self.path, json=body, parse=model_parser(self.model))

    def update(self, item: M | str, request: U | Body = None, /, **fields: Any) -> Call[M]:
        """``PATCH {path}/{id}``: only the given fields change."""
        body = self.body("update", request, fields)
        return Call("PATCH", self.item_path(item), json=body, parse=model_parser(self.model))

    def delete(self, item: M | str) -> Call[None]:
        """``DELETE {path}/{id}``."""
        return Call("DELETE", self.item_path(item))

    def op(self, build: Callable[P, Call[T]], doc: str) -> Operation[P, T]:
        """The method of both faces that sends ``build``'s call, documented by ``doc``; its
        ``item`` argument is public under this resource's name (``template``)."""
        return Operation(build, doc, rename={"item": self.item}, types=self._types)
