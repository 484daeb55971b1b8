"""Account SSH keys and container registry credentials (v2 CRUD and the v1 delete).

Registry usernames and passwords are write-only: stored, never returned, never logged.
"""

from __future__ import annotations

import secrets

from starlette.responses import Response
from starlette.routing import BaseRoute

from podbook.api.account import CreateRegistryRequest, UpdateSshKeysRequest
from podbook.emulator.context import ApiRequest, api_route
from podbook.emulator.jsonresp import json_response
from podbook.emulator.problems import not_found
from podbook.emulator.registries import drop_from_templates, refuse_delete_in_use
from podbook.emulator.validation import validate


async def get_ssh_keys(req: ApiRequest) -> Response:
    """``GET /v2/account/ssh-keys``."""
    account = req.store.ensure_account(req.account_id)
    return json_response({"keys": list(account.get("sshKeys", []))})


async def put_ssh_keys(req: ApiRequest) -> Response:
    """``PUT /v2/account/ssh-keys``: complete replacement of the key list."""
    body = await req.json()
    validate(UpdateSshKeysRequest, body)
    account = req.store.ensure_account(req.account_id)
    req.store.save_account({**account, "sshKeys": list(body["keys"])})
    return json_response({"keys": list(body["keys"])})


def _registry_view(record: dict) -> dict:
    return {"id": record["id"], "name": record["name"]}


async def list_registries(req: ApiRequest) -> Response:
    """``GET /v2/registries``."""
    return json_response(
        {"registries": [_registry_view(r) for r in req.store.registries.all_of(req.account_id)]}
    )


async def get_registry(req: ApiRequest) -> Response:
    """``GET /v2/registries/{id}``."""
    record = req.store.registries.get(req.account_id, req.param("id"))
    if record is None:
        raise not_found("registry credential", req.param("id"))
    return json_response(_registry_view(record))


async def create_registry(req: ApiRequest) -> Response:
    """``POST /v2/registries``: name plus write-only username/password."""
    body = await req.json()
    validate(CreateRegistryRequest, body)
    registry_id = "reg_" + secrets.token_hex(6)
    record = {
        "id": registry_id,
        "name": body["name"],
        "username": body["username"],
        "password": body["password"],
    }
    req.store.registries.put(req.account_id, record)
    return json_response(_registry_view(record), status=201)


async def delete_registry(req: ApiRequest) -> Response:
    """``DELETE /v2/registries/{id}`` and ``DELETE /v1/containerregistryauth/{id}``: 204."""
    registry_id = req.param("id")
    if req.store.registries.get(req.account_id, registry_id) is None:
        raise not_found("registry credential", registry_id)
    refuse_delete_in_use(req.store, req.account_id, registry_id)
    req.store.registries.delete(req.account_id, registry_id)
    drop_from_templates(req.store, req.account_id, registry_id)
    return Response(status_code=204)


def routes() -> list[BaseRoute]:
    """The account and registry routes."""
    return [
        api_route("/v2/account/ssh-keys", get_ssh_keys, ["GET"]),
        api_route("/v2/account/ssh-keys", put_ssh_keys, ["PUT"]),
        api_route("/v2/registries", list_registries, ["GET"]),
        api_route("/v2/registries", create_registry, ["POST"]),
        api_route("/v2/registries/{id}", get_registry, ["GET"]),
        api_route("/v2/registries/{id}", delete_registry, ["DELETE"]),
        api_route("/v1/containerregistryauth/{id}", delete_registry, ["DELETE"]),
    ]
