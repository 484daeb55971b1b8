"""``/v2/pods``: create, list, read, merge-patch, actions and delete."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from podbook.api.base import to_wire
from podbook.api.pods import CreatePodRequest, PodActionRequest, UpdatePodRequest
from podbook.api.validation import RequestRejected, check_patch_mounts
from podbook.emulator.lifecycle import ERROR, EXITED, check_action
from podbook.emulator.placement import Placement, choose_cpu_host, choose_gpu_host, pod_placement
from podbook.emulator.podlogs import log_book
from podbook.emulator.podruntime.capacity import check_capacity
from podbook.emulator.pods import (
    apply_action,
    current_status,
    ensure_not_member,
    new_id,
    new_pod_record,
)
from podbook.emulator.problems import Problem
from podbook.emulator.registries import check_registry
from podbook.emulator.routes.jsonresp import json_response, raw_json_response
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable
from podbook.emulator.templates import apply_template, find_template
from podbook.emulator.validation import check_process_size, validate
from podbook.emulator.volumes import place_with_volume

table = RouteTable()
"""The pod routes."""


def place(spec: dict[str, Any]) -> Placement:
    """Place a pod described by a merged create spec (wire names)."""
    dc_ids = spec.get("dataCenterIds")
    cloud = spec.get("cloud") or "SECURE"
    global_networking = bool(spec.get("globalNetworking"))
    if "gpu" in spec:
        gpu = spec["gpu"]
        choice = choose_gpu_host(
            gpu["id"],
            count=gpu.get("count", 1),
            cloud=cloud,
            data_center_ids=dc_ids,
            allowed_cuda_versions=gpu.get("allowedCudaVersions"),
            min_cuda_version=gpu.get("minCudaVersion"),
            global_network=global_networking,
        )
        return pod_placement(choice, global_networking=global_networking)
    if global_networking:
        raise Problem(
            400,
            "globalNetworking requires an NVIDIA GPU pod; remove it for a CPU pod",
            errors=["$.globalNetworking: requires an NVIDIA GPU pod"],
        )
    cpu = spec["cpu"]
    return pod_placement(choose_cpu_host(cpu["id"], cpu["vcpuCount"], cloud, dc_ids))


def resolve_create_spec(req: ApiRequest, body: Any) -> dict[str, Any]:
    """Validate a create body and merge its template: the spec a pod is built from."""

    model = validate(CreatePodRequest, body)
    spec = to_wire(model)
    template_id = spec.pop("templateId", None)
    if template_id is not None:
        template = find_template(req.store, req.account_id, template_id)
        spec = apply_template(template, spec, cpu="cpu" in spec)
        check_process_size(spec, f" (with template {template_id!r}'s)")
    return spec


@table.get("/v2/pods")
async def list_pods(req: ApiRequest) -> Response:
    """``GET /v2/pods[?includeClusterPods=true]`` → ``{"pods": [...]}``."""
    include_members = req.query_flag("includeClusterPods")
    now = req.emulator.clock()
    render = req.emulator.views.render_json  # thousands of pods: cached JSON, no dict each
    body = [b'{"pods":[']
    for record in req.store.pods.all_of(req.account_id):
        if include_members or "cluster" not in record:
            body.extend((*render(record, now), b","))
    if len(body) > 1:
        body.pop()  # the last comma
    body.append(b"]}")
    return raw_json_response(b"".join(body))


@table.post("/v2/pods")
async def create_pod(req: ApiRequest) -> Response:
    """``POST /v2/pods`` → 201 with a PROVISIONING pod."""
    spec = resolve_create_spec(req, await req.json())
    check_registry(req.store, req.account_id, spec.get("registry"))
    spec = place_with_volume(req.store, req.account_id, spec)
    placement = place(spec)
    check_capacity(req.emulator, 1)
    account = req.store.ensure_account(req.account_id)
    now = req.emulator.clock()
    pod_id = req.store.pods.fresh_id(new_id)
    record = new_pod_record(
        pod_id=pod_id,
        spec=spec,
        placement=placement,
        now=now,
        settings=req.emulator.settings,
        ssh_keys=list(account.get("sshKeys") or []),
    )
    if placement.global_ip_candidate:
        record["globalIpCandidate"] = placement.global_ip_candidate
    req.store.pods.put(req.account_id, record)
    return json_response(req.emulator.views.render(record, now, creating=True), status=201)


@table.get("/v2/pods/{id}")
async def get_pod(req: ApiRequest) -> Response:
    """``GET /v2/pods/{id}``."""
    record = req.record(req.store.pods, "pod")
    return json_response(req.emulator.views.render(record, req.emulator.clock()))


@table.patch("/v2/pods/{id}")
async def update_pod(req: ApiRequest) -> Response:
    """``PATCH /v2/pods/{id}``: merge patch; mount rules; create-time flags refused."""
    record, body = await req.record_with_body(req.store.pods, "pod")
    patch = to_wire(validate(UpdatePodRequest, body))
    ensure_not_member(record, "changed")
    mount_errors = check_patch_mounts(record["mounts"] or None, patch.get("mounts") or None)
    if mount_errors:
        raise RequestRejected.from_errors(400, mount_errors)
    template_id = patch.pop("templateId", None)
    if template_id is not None:
        template = find_template(req.store, req.account_id, template_id)
        for name in ("image", "args", "disk", "ports", "registry"):
            if name not in patch and template.get(name) is not None:
                patch[name] = template[name]
        patch["env"] = {**(template.get("env") or {}), **(patch.get("env") or {})}
    if "registry" in patch:
        check_registry(req.store, req.account_id, patch["registry"])
    updated = dict(record)
    for name in ("name", "image", "args", "disk", "env", "registry", "locked"):
        if name in patch:
            updated[name] = patch[name]
    if "ports" in patch:
        updated["ports"] = list(patch["ports"])
        kept = (*patch["ports"], "ssh-proxy")
        updated["portMap"] = {k: v for k, v in record["portMap"].items() if k in kept}
    if "args" in patch or "env" in patch:
        check_process_size(updated, " (the pod's, after this PATCH)")
    mounts = patch.get("mounts")
    if mounts:
        updated["mounts"] = _merge_mounts(record["mounts"], mounts)
    if "globalNetworking" in patch:
        wanted = bool(patch["globalNetworking"])
        if wanted and not record.get("globalIpCandidate"):
            raise Problem(
                400,
                f"globalNetworking is not available for pod {record['id']!r}: it needs an NVIDIA "
                f"GPU pod in a data center with global networking (this one is in "
                f"{record['dataCenterId']})",
                errors=["$.globalNetworking: not supported where this pod runs"],
            )
        if wanted != bool(record.get("globalIp")):
            updated["globalNetworkingWanted"] = wanted  # takes effect on the next start
        else:
            updated.pop("globalNetworkingWanted", None)
    req.store.pods.put(req.account_id, updated)
    return json_response(req.emulator.views.render(updated, req.emulator.clock()))


def _merge_mounts(current: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    merged = dict(current)
    if "persistent" in patch:
        merged["persistent"] = {**current.get("persistent", {}), **patch["persistent"]}
    if patch.get("network"):
        merged["network"] = [dict(patch["network"][0])]
    return merged


@table.delete("/v2/pods/{id}")
async def delete_pod(req: ApiRequest) -> Response:
    """``DELETE /v2/pods/{id}`` → 204; the pod is gone (404, absent from lists)."""
    return _terminate(req, req.record(req.store.pods, "pod"))


def _terminate(req: ApiRequest, record: dict[str, Any]) -> Response:
    ensure_not_member(record, "deleted")
    log_book(req.emulator).note_action(record, "terminate", req.emulator.clock())
    req.store.pods.delete(req.account_id, record["id"])
    req.emulator.views.forget(record["id"])
    return Response(status_code=204)


@table.post("/v2/pods/{id}/action")
async def pod_action(req: ApiRequest) -> Response:
    """``POST /v2/pods/{id}/action``: 200 with the pod, or 204 for terminate; 409 if not allowed."""
    record, body = await req.record_with_body(req.store.pods, "pod")
    action = validate(PodActionRequest, body).action
    if action == "terminate":
        return _terminate(req, record)
    ensure_not_member(record, "changed")
    now = req.emulator.clock()
    status = current_status(record, now)
    check_action(status, action, locked=record["locked"], pod_id=record["id"])
    if action == "start" and status in (EXITED, ERROR):
        check_capacity(req.emulator, 1)
    log_book(req.emulator).note_action(record, action, now)
    updated = dict(record)
    apply_action(updated, action, now, req.emulator.settings)
    req.store.pods.put(req.account_id, updated)
    return json_response(req.emulator.views.render(updated, now))
