"""``/v2/templates``: the account's own templates (CRUD); public ones are read-only.

1. ``GET /v2/templates`` lists only the caller's own templates.
2. ``GET /v2/templates/{id}`` reads an own or a public catalog template.
3. ``PATCH`` and ``DELETE`` of a public catalog (or another account's) template → 404.
4. ``isServerless`` is accepted for ``serverless`` (the record shows ``serverless``).
5. A ``registry`` must name one of the caller's credentials (404 otherwise).
6. Deleting a template a pod of the account still names in ``template`` → 400 naming the pod.
"""

from __future__ import annotations

import secrets
from typing import Any

from starlette.responses import Response

from podbook.api.base import to_wire
from podbook.api.templates import CreateTemplateRequest, UpdateTemplateRequest
from podbook.emulator.problems import Problem, not_found
from podbook.emulator.registries import check_registry
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable
from podbook.emulator.templates import normalize_template, public_templates
from podbook.emulator.validation import validate

table = RouteTable()
"""The template routes."""

_NO_REGISTRY = "send registry: null"
"""What a template may send instead of a registry credential the account lacks."""


def _fold_serverless(spec: dict[str, Any]) -> dict[str, Any]:
    """``isServerless`` folded into ``serverless`` (the name the record uses)."""
    if "isServerless" in spec:
        spec["serverless"] = spec.pop("isServerless")
    return spec


def _own_or_404(req: ApiRequest) -> dict[str, Any]:
    template_id = req.param("id")
    record = req.store.templates.get(req.account_id, template_id)
    if record is None:
        if any(t["id"] == template_id for t in public_templates()):
            raise Problem(
                404,
                f"template {template_id!r} is a public catalog template: it can be read, not "
                "changed; create your own template from its fields",
            )
        raise not_found("template", template_id)
    return record


@table.get("/v2/templates")
async def list_templates(req: ApiRequest) -> Response:
    """``GET /v2/templates``: the caller's own templates."""
    return json_response({"templates": list(req.store.templates.all_of(req.account_id))})


@table.post("/v2/templates")
async def create_template(req: ApiRequest) -> Response:
    """``POST /v2/templates`` → 201 with the template."""
    spec = _fold_serverless(to_wire(validate(CreateTemplateRequest, await req.json())))
    check_registry(req.store, req.account_id, spec.get("registry"), _NO_REGISTRY)
    template_id = req.store.templates.fresh_id(lambda: "tpl_" + secrets.token_hex(5))
    record = normalize_template({"startSsh": True, "startJupyter": True, **spec, "id": template_id})
    for name in ("startSsh", "startJupyter", "public", "category"):
        record[name] = spec.get(name, record[name] if name in ("public", "category") else True)
    req.store.templates.put(req.account_id, record)
    return json_response(record, status=201)


@table.get("/v2/templates/{id}")
async def get_template(req: ApiRequest) -> Response:
    """``GET /v2/templates/{id}``: own or public."""
    template_id = req.param("id")
    record = req.store.templates.get(req.account_id, template_id)
    if record is None:
        record = next((t for t in public_templates() if t["id"] == template_id), None)
    if record is None:
        raise not_found("template", template_id)
    return json_response(record)


@table.patch("/v2/templates/{id}")
async def update_template(req: ApiRequest) -> Response:
    """``PATCH /v2/templates/{id}``: only the sent fields change (own templates only)."""
    record = _own_or_404(req)
    patch = _fold_serverless(to_wire(validate(UpdateTemplateRequest, await req.json())))
    if "registry" in patch:
        check_registry(req.store, req.account_id, patch["registry"], _NO_REGISTRY)
    updated = {**record, **patch}
    req.store.templates.put(req.account_id, updated)
    return json_response(updated)


@table.delete("/v2/templates/{id}")
async def delete_template(req: ApiRequest) -> Response:
    """``DELETE /v2/templates/{id}`` → 204; 400 while a pod names it."""
    record = _own_or_404(req)
    user = next(
        (p for p in req.store.pods.all_of(req.account_id) if p.get("template") == record["id"]),
        None,
    )
    if user is not None:
        raise Problem(
            400,
            f"template {record['id']!r} is in use by pod {user['id']!r}; terminate that pod first",
        )
    req.store.templates.delete(req.account_id, record["id"])
    return Response(status_code=204)
