"""``/v2/clusters``: create, list, read, rename, delete, and the members' full pods."""

from __future__ import annotations

import secrets
from typing import Any

from starlette.responses import Response

from podbook.api.base import to_wire
from podbook.api.clusters import CreateClusterRequest, UpdateClusterRequest
from podbook.emulator.clusters import membership, render_cluster
from podbook.emulator.placement import choose_gpu_host, pod_placement
from podbook.emulator.podruntime.capacity import check_capacity, free_loopback_ip
from podbook.emulator.pods import iso, new_id, new_pod_record
from podbook.emulator.problems import Problem
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable
from podbook.emulator.validation import validate

table = RouteTable()
"""The cluster routes."""


def _members(req: ApiRequest, cluster: dict[str, Any]) -> list[dict[str, Any]]:
    found = (req.store.pods.get(req.account_id, pod_id) for pod_id in cluster["memberIds"])
    return [pod for pod in found if pod is not None]


def _view(req: ApiRequest, cluster: dict[str, Any]) -> dict[str, Any]:
    return render_cluster(cluster, _members(req, cluster), req.emulator.clock())


@table.get("/v2/clusters")
async def list_clusters(req: ApiRequest) -> Response:
    """``GET /v2/clusters`` → ``{"clusters": [...]}``."""
    return json_response(
        {"clusters": [_view(req, c) for c in req.store.clusters.all_of(req.account_id)]}
    )


@table.post("/v2/clusters")
async def create_cluster(req: ApiRequest) -> Response:
    """``POST /v2/clusters`` → 201 with the cluster; its members start provisioning."""

    spec = to_wire(validate(CreateClusterRequest, await req.json()))
    if not spec.get("image"):
        raise Problem(
            422,
            "$.image: is required; name the container image every member runs",
            errors=["$.image: is required"],
        )
    compute = spec["compute"]
    settings = req.emulator.settings
    now = req.emulator.clock()
    choice = choose_gpu_host(
        compute["gpuTypeId"],
        count=compute["gpuCountPerPod"],
        data_center_ids=spec.get("dataCenterIds"),
        pod_count=compute["podCount"],
    )
    check_capacity(req.emulator, compute["podCount"])
    placements = [pod_placement(choice) for _ in range(compute["podCount"])]
    cluster_id = req.store.clusters.fresh_id(new_id)
    assign_at = now + settings.provision_seconds / 2
    account = req.store.ensure_account(req.account_id)
    with req.store.transaction():  # members and cluster: all in the file, or none
        member_ids = []
        for rank, placement in enumerate(placements):
            pod_id = req.store.pods.fresh_id(new_id)
            pod_spec = {
                **{k: v for k, v in spec.items() if k not in ("compute", "type", "dataCenterIds")},
                "name": f"{spec['name']}-{rank}",
                "gpu": {"id": compute["gpuTypeId"], "count": compute["gpuCountPerPod"]},
            }
            record = new_pod_record(
                pod_id=pod_id,
                spec=pod_spec,
                placement=placement,
                now=now,
                settings=settings,
                ssh_keys=list(account.get("sshKeys") or []),
                cluster=membership(cluster_id, spec["type"], rank, assign_at),
            )
            if settings.runtime == "local":
                record["cluster"]["ip"] = free_loopback_ip(req.store)
            req.store.pods.put(req.account_id, record)
            member_ids.append(pod_id)
        cluster = {
            "id": cluster_id,
            "name": spec["name"],
            "type": spec["type"],
            "compute": compute,
            "createdAt": iso(now),
            "memberIds": member_ids,
            "networkAt": assign_at,
            "vxlanId": secrets.randbelow(16_000_000) + 1,
        }
        req.store.clusters.put(req.account_id, cluster)
    return json_response(_view(req, cluster), status=201)


@table.get("/v2/clusters/{id}")
async def get_cluster(req: ApiRequest) -> Response:
    """``GET /v2/clusters/{id}``."""
    return json_response(_view(req, req.record(req.store.clusters, "cluster")))


@table.patch("/v2/clusters/{id}")
async def update_cluster(req: ApiRequest) -> Response:
    """``PATCH /v2/clusters/{id}``: rename."""
    cluster, body = await req.record_with_body(req.store.clusters, "cluster")
    patch = to_wire(validate(UpdateClusterRequest, body))
    updated = {**cluster, **({"name": patch["name"]} if "name" in patch else {})}
    req.store.clusters.put(req.account_id, updated)
    return json_response(_view(req, updated))


@table.delete("/v2/clusters/{id}")
async def delete_cluster(req: ApiRequest) -> Response:
    """``DELETE /v2/clusters/{id}`` → 204; its member pods are terminated with it."""
    cluster = req.record(req.store.clusters, "cluster")
    with req.store.transaction():  # no cluster left with some of its members
        for pod_id in cluster["memberIds"]:
            if req.store.pods.get(req.account_id, pod_id) is not None:
                req.store.pods.delete(req.account_id, pod_id)
                req.emulator.views.forget(pod_id)
        req.store.clusters.delete(req.account_id, cluster["id"])
    return Response(status_code=204)


@table.get("/v2/clusters/{id}/pods")
async def cluster_pods(req: ApiRequest) -> Response:
    """``GET /v2/clusters/{id}/pods`` → ``{"pods": [...]}`` (full member pods, by rank)."""
    cluster = req.record(req.store.clusters, "cluster")
    now = req.emulator.clock()
    return json_response(
        {"pods": [req.emulator.views.render(p, now) for p in _members(req, cluster)]}
    )
