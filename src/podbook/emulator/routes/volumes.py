"""``/v2/network-volumes``: CRUD of the account's network volumes (rules in
:mod:`podbook.emulator.volumes`)."""

from __future__ import annotations

import secrets

from starlette.responses import Response

from podbook.api.account import CreateNetworkVolumeRequest
from podbook.api.base import to_wire
from podbook.api.templates import UpdateNetworkVolumeRequest
from podbook.emulator.problems import Problem
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable
from podbook.emulator.validation import validate
from podbook.emulator.volumes import data_center, volume_type

table = RouteTable()
"""The network volume routes."""


@table.get("/v2/network-volumes")
async def list_volumes(req: ApiRequest) -> Response:
    """``GET /v2/network-volumes``."""
    return json_response({"networkVolumes": list(req.store.network_volumes.all_of(req.account_id))})


@table.post("/v2/network-volumes")
async def create_volume(req: ApiRequest) -> Response:
    """``POST /v2/network-volumes`` → 201."""
    body = to_wire(validate(CreateNetworkVolumeRequest, await req.json()))
    data_center(body["dataCenter"])
    volume_id = req.store.network_volumes.fresh_id(lambda: secrets.token_hex(5))
    record = {
        "id": volume_id,
        "name": body["name"],
        "size": body["size"],
        "dataCenter": body["dataCenter"],
        "type": volume_type(body["dataCenter"], body.get("type")),
    }
    req.store.network_volumes.put(req.account_id, record)
    return json_response(record, status=201)


@table.get("/v2/network-volumes/{id}")
async def get_volume(req: ApiRequest) -> Response:
    """``GET /v2/network-volumes/{id}``."""
    return json_response(req.record(req.store.network_volumes, "network volume"))


@table.patch("/v2/network-volumes/{id}")
async def update_volume(req: ApiRequest) -> Response:
    """``PATCH /v2/network-volumes/{id}``: name and/or a larger size."""
    record = req.record(req.store.network_volumes, "network volume")
    patch = to_wire(validate(UpdateNetworkVolumeRequest, await req.json()))
    size = patch.get("size")
    if size is not None and size < record["size"]:
        raise Problem(
            400,
            f"network volume {record['id']!r} is {record['size']} GB and cannot shrink; "
            f"send a size of at least {record['size']}",
            errors=[f"$.size: must be at least the current {record['size']}"],
        )
    updated = {**record, **patch}
    req.store.network_volumes.put(req.account_id, updated)
    return json_response(updated)


@table.delete("/v2/network-volumes/{id}")
async def delete_volume(req: ApiRequest) -> Response:
    """``DELETE /v2/network-volumes/{id}`` → 204."""
    record = req.record(req.store.network_volumes, "network volume")
    req.store.network_volumes.delete(req.account_id, record["id"])
    return Response(status_code=204)
