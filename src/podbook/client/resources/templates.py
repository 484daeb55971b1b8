"""Templates: the account's own (CRUD) and, read-only, the public catalog's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from podbook.client.resources.base import AsyncResource, SyncResource
from podbook.client.resources.crud import Crud

if TYPE_CHECKING:
    from podbook.api.catalog import Template
    from podbook.api.templates import CreateTemplateRequest, UpdateTemplateRequest

__all__ = ["TEMPLATES", "AsyncTemplates", "Templates"]

TEMPLATES: Crud[Template, CreateTemplateRequest, UpdateTemplateRequest] = Crud(
    "/v2/templates",
    "podbook.api.catalog:Template",
    item="template",
    requests="podbook.api.templates",
)


class _TemplateOperations:
    list = TEMPLATES.op(
        TEMPLATES.list, "Your own templates (public ones: ``client.catalog.templates()``)."
    )
    get = TEMPLATES.op(TEMPLATES.get, "Read one template, yours or a public one.")
    create = TEMPLATES.op(
        TEMPLATES.create,
        "Create a template: ``create(name=..., image=..., ports=[...], serverless=False)``.",
    )
    update = TEMPLATES.op(
        TEMPLATES.update, "Change some fields of one of your templates; returns the whole template."
    )
    delete = TEMPLATES.op(TEMPLATES.delete, "Delete one of your templates.")


class Templates(_TemplateOperations, SyncResource):
    """``client.templates``: container presets for pods and serverless endpoints."""


class AsyncTemplates(_TemplateOperations, AsyncResource):
    """``client.templates`` of the :class:`AsyncClient`."""
