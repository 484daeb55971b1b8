"""``/v2/billing`` and its per-kind routes, computed from what really ran.

``startTime``/``endTime`` or ``lastN`` (400 when both), ``bucketSize`` (default ``day``), the
window aligned to bucket boundaries (see :mod:`podbook.emulator.billing.window`). Per-kind
routes take their id filter (``podId``, ``serverlessId``, ``networkVolumeId``, ``clusterId``).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from podbook.emulator.billing import compute
from podbook.emulator.billing.window import Window, iso, resolve
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable

table = RouteTable()
"""The billing routes."""

_FILTERS = {
    "pods": "podId",
    "serverless": "serverlessId",
    "network-volumes": "networkVolumeId",
    "clusters": "clusterId",
}
_UNIQUE = {
    "pods": "uniquePodCount",
    "serverless": "uniqueServerlessCount",
    "network-volumes": "uniqueNetworkVolumeCount",
    "clusters": "uniqueClusterCount",
}


def _query(window: Window) -> dict[str, Any]:
    return {
        "startTime": iso(window.start),
        "endTime": iso(window.end),
        "bucketSize": window.bucket_size,
    }


def _setup(req: ApiRequest) -> tuple[Window, list[compute.Usage]]:
    now = req.emulator.clock()
    window = resolve(dict(req.request.query_params), now)
    queue = req.emulator.extras.get("queue")
    return window, compute.usages(req.store, req.account_id, now, queue)


@table.get("/v2/billing")
async def list_billing(req: ApiRequest) -> Response:
    """``GET /v2/billing``: every bucket, every component."""
    window, items = _setup(req)
    records = compute.aggregate(window, items)
    names = ["totalAmount", *compute.AGGREGATE_FIELDS.values()]
    metadata = {
        "query": _query(window),
        "recordCount": len(records),
        "totals": compute.totals(records, names),
    }
    return json_response({"records": records, "metadata": metadata})


def kind_route(kind: str) -> Any:
    """The handler of ``GET /v2/billing/{kind}``."""
    components, _ = compute.KIND_COMPONENTS[kind]
    filter_name = _FILTERS.get(kind)

    async def handler(req: ApiRequest) -> Response:
        window, items = _setup(req)
        wanted = req.request.query_params.get(filter_name) if filter_name else None
        records = compute.per_kind(window, items, kind, wanted or None)
        query = _query(window)
        if filter_name:
            query[filter_name] = wanted or None
        metadata: dict[str, Any] = {
            "query": query,
            "recordCount": len(records),
            "totals": compute.totals(records, ["totalAmount", *components]),
        }
        if kind in _UNIQUE:
            id_field = compute.KIND_COMPONENTS[kind][1]
            metadata[_UNIQUE[kind]] = len({r[id_field] for r in records})
        return json_response({"records": records, "metadata": metadata})

    handler.__doc__ = f"``GET /v2/billing/{kind}``."
    return handler


for _kind in compute.KIND_COMPONENTS:
    table.add(f"/v2/billing/{_kind}", kind_route(_kind), "GET")
