"""Templates: the account's own (CRUD) and, read-only, the public catalog's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from podbook.client.core import Call
from podbook.client.resources.base import (
    AsyncResource,
    SyncResource,
    list_parser,
    model_parser,
    path_id,
    prepare_body,
)

if TYPE_CHECKING:
    from podbook.api.catalog import Template
    from podbook.api.templates import CreateTemplateRequest, UpdateTemplateRequest

__all__ = ["AsyncTemplates", "Templates", "template_calls"]

Body = Mapping[str, Any] | None


def _template_model() -> type[Template]:
    from podbook.api.catalog import Template

    return Template


class template_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the template calls (no I/O)."""

    @staticmethod
    def list() -> Call[list[Template]]:
        """``GET /v2/templates``: the caller's own templates."""
        return Call("GET", "/v2/templates", parse=list_parser(_template_model(), "templates"))

    @staticmethod
    def get(template: Any) -> Call[Template]:
        """``GET /v2/templates/{id}``: an own or a public template."""
        template_id = path_id(template, "template id")
        return Call("GET", f"/v2/templates/{template_id}", parse=model_parser(_template_model()))

    @staticmethod
    def create(request: CreateTemplateRequest | Body, fields: Mapping[str, Any]) -> Call[Template]:
        """``POST /v2/templates``."""
        from podbook.api.templates import CreateTemplateRequest

        body = prepare_body(CreateTemplateRequest, request, fields)
        return Call("POST", "/v2/templates", json=body, parse=model_parser(_template_model()))

    @staticmethod
    def update(
        template: Any, request: UpdateTemplateRequest | Body, fields: Mapping[str, Any]
    ) -> Call[Template]:
        """``PATCH /v2/templates/{id}``: only the given fields change."""
        from podbook.api.templates import UpdateTemplateRequest

        template_id = path_id(template, "template id")
        body = prepare_body(UpdateTemplateRequest, request, fields)
        return Call(
            "PATCH",
            f"/v2/templates/{template_id}",
            json=body,
            parse=model_parser(_template_model()),
        )

    @staticmethod
    def delete(template: Any) -> Call[None]:
        """``DELETE /v2/templates/{id}``."""
        return Call("DELETE", f"/v2/templates/{path_id(template, 'template id')}")


class Templates(SyncResource):
    """``client.templates``: container presets for pods and serverless endpoints."""

    def list(self) -> list[Template]:
        """Your own templates (public ones: ``client.catalog.templates()``)."""
        return self._request(template_calls.list())

    def get(self, template: Template | str) -> Template:
        """Read one template, yours or a public one."""
        return self._request(template_calls.get(template))

    def create(self, request: CreateTemplateRequest | Body = None, /, **fields: Any) -> Template:
        """Create a template: ``create(name=..., image=..., ports=[...], serverless=False)``."""
        return self._request(template_calls.create(request, fields))

    def update(
        self,
        template: Template | str,
        request: UpdateTemplateRequest | Body = None,
        /,
        **fields: Any,
    ) -> Template:
        """Change some fields of one of your templates; returns the whole template."""
        return self._request(template_calls.update(template, request, fields))

    def delete(self, template: Template | str) -> None:
        """Delete one of your templates."""
        self._request(template_calls.delete(template))


class AsyncTemplates(AsyncResource):
    """``client.templates`` of the :class:`AsyncClient`."""

    async def list(self) -> list[Template]:
        """Your own templates."""
        return await self._request(template_calls.list())

    async def get(self, template: Template | str) -> Template:
        """Read one template, yours or a public one."""
        return await self._request(template_calls.get(template))

    async def create(
        self, request: CreateTemplateRequest | Body = None, /, **fields: Any
    ) -> Template:
        """Create a template."""
        return await self._request(template_calls.create(request, fields))

    async def update(
        self,
        template: Template | str,
        request: UpdateTemplateRequest | Body = None,
        /,
        **fields: Any,
    ) -> Template:
        """Change some fields of one of your templates."""
        return await self._request(template_calls.update(template, request, fields))

    async def delete(self, template: Template | str) -> None:
        """Delete one of your templates."""
        await self._request(template_calls.delete(template))
