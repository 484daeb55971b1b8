"""Account SSH keys, container registry credentials (v2 CRUD and the v1 delete) and ECR
delegations (kept in the account record, like the SSH keys).

Registry usernames and passwords are write-only: stored, never returned, never logged.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timezone

from starlette.responses import Response

from podbook.api.account import CreateRegistryRequest, UpdateSshKeysRequest
from podbook.api.delegations import CreateDelegationRequest, parse_ecr_arn
from podbook.emulator.problems import not_found
from podbook.emulator.registries import drop_from_templates, refuse_delete_in_use
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable
from podbook.emulator.validation import validate

table = RouteTable()
"""The account and registry routes (delegations before ``/v2/registries/{id}``)."""


@table.get("/v2/account/ssh-keys")
async def get_ssh_keys(req: ApiRequest) -> Response:
    """``GET /v2/account/ssh-keys``."""
    account = req.store.ensure_account(req.account_id)
    return json_response({"keys": list(account.get("sshKeys", []))})


@table.put("/v2/account/ssh-keys")
async def put_ssh_keys(req: ApiRequest) -> Response:
    """``PUT /v2/account/ssh-keys``: complete replacement of the key list."""
    body = await req.json()
    validate(UpdateSshKeysRequest, body)
    account = req.store.ensure_account(req.account_id)
    req.store.save_account({**account, "sshKeys": list(body["keys"])})
    return json_response({"keys": list(body["keys"])})


_DELEGATIONS = "ecrDelegations"


@table.get("/v2/registries/delegations")
async def list_delegations(req: ApiRequest) -> Response:
    """``GET /v2/registries/delegations``."""
    account = req.store.ensure_account(req.account_id)
    return json_response({"delegations": list(account.get(_DELEGATIONS, []))})


@table.post("/v2/registries/delegations")
async def create_delegation(req: ApiRequest) -> Response:
    """``POST /v2/registries/delegations``: 201 with the delegation read from the ARN."""
    body = await req.json()
    validate(CreateDelegationRequest, body)
    resource = parse_ecr_arn(body["resource"])
    assert resource is not None  # checked by the request model's rules
    record = {
        "id": "deleg_" + secrets.token_hex(6),
        "name": body.get("name"),
        "delegatorUserId": req.account_id,
        "awsUser": resource.aws_account,
        "repository": resource.repository,
        "tag": resource.tag,
        "awsRegion": resource.region,
        "dockerRegistryUri": resource.docker_registry_uri,
        "createdAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    account = req.store.ensure_account(req.account_id)
    kept = list(account.get(_DELEGATIONS, []))
    req.store.save_account({**account, _DELEGATIONS: [*kept, record]})
    return json_response(record, status=201)


@table.delete("/v2/registries/delegations/{id}")
async def revoke_delegation(req: ApiRequest) -> Response:
    """``DELETE /v2/registries/delegations/{id}``: 204, or 404 for an unknown id."""
    delegation_id = req.param("id")
    account = req.store.ensure_account(req.account_id)
    kept = list(account.get(_DELEGATIONS, []))
    left = [d for d in kept if d["id"] != delegation_id]
    if len(left) == len(kept):
        raise not_found("ECR delegation", delegation_id)
    req.store.save_account({**account, _DELEGATIONS: left})
    return Response(status_code=204)


def _registry_view(record: dict) -> dict:
    return {"id": record["id"], "name": record["name"]}


@table.get("/v2/registries")
async def list_registries(req: ApiRequest) -> Response:
    """``GET /v2/registries``."""
    return json_response(
        {"registries": [_registry_view(r) for r in req.store.registries.all_of(req.account_id)]}
    )


@table.post("/v2/registries")
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


@table.get("/v2/registries/{id}")
async def get_registry(req: ApiRequest) -> Response:
    """``GET /v2/registries/{id}``."""
    return json_response(_registry_view(req.record(req.store.registries, "registry credential")))


@table.delete("/v2/registries/{id}")
async def delete_registry(req: ApiRequest) -> Response:
    """``DELETE /v2/registries/{id}`` and ``DELETE /v1/containerregistryauth/{id}``: 204."""
    registry_id = req.param("id")
    req.record(req.store.registries, "registry credential")  # 404 for one the caller lacks
    refuse_delete_in_use(req.store, req.account_id, registry_id)
    req.store.registries.delete(req.account_id, registry_id)
    drop_from_templates(req.store, req.account_id, registry_id)
    return Response(status_code=204)


table.add("/v1/containerregistryauth/{id}", delete_registry, "DELETE")  # REST v1's name
