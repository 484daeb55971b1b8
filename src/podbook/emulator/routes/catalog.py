"""``/v2/catalog/...``: GPU types, CPU flavors, data centers and public templates (the
account's own templates are in :mod:`podbook.emulator.routes.templates`).

Query rules follow the reference document: availability filters (``product``, ``count``,
``cloud``, ``cudaVersions``, ``minCudaVersion``, ``countryCodes``) are valid only with
``include=AVAILABILITY`` (400 otherwise); ``cudaVersions`` and ``minCudaVersion`` exclude each
other (400); a malformed value is 422. ``product`` is optional: the seed reads
``?include=AVAILABILITY`` alone, which means pod availability.
"""

from __future__ import annotations

import re
from typing import Any, get_args

from starlette.responses import Response

from podbook.api.types import Compliance, DataCenterRegion, VolumeType
from podbook.emulator import catalog_data
from podbook.emulator.problems import Problem, not_found
from podbook.emulator.routes.jsonresp import json_response
from podbook.emulator.routes.rest import ApiRequest
from podbook.emulator.routes.table import RouteTable
from podbook.emulator.templates import public_templates

table = RouteTable()
"""The catalog routes."""

_CUDA = re.compile(r"^\d+\.\d+$")
_MIN_CUDA = re.compile(r"^\d{1,4}(\.\d{1,4})?$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")


def _list(req: ApiRequest, name: str) -> list[str] | None:
    raw = req.request.query_params.get(name)
    if raw is None:
        return None
    items = [item.strip() for item in raw.split(",")]
    if "" in items:
        raise _invalid(name, "has an empty item; send comma-separated values, e.g. A,B")
    return items


def _invalid(name: str, message: str) -> Problem:
    return Problem(422, f"query parameter {name} {message}", errors=[f"{name}: {message}"])


def _enum_list(req: ApiRequest, name: str, allowed: tuple[str, ...]) -> list[str]:
    values = _list(req, name) or []
    for value in values:
        if value not in allowed:
            raise _invalid(name, f"has unknown value {value!r}; use {', '.join(allowed)}")
    if len(set(values)) < len(values):
        raise _invalid(name, "lists a value twice; send each once")
    return values


def _availability_filters(req: ApiRequest, names: tuple[str, ...]) -> bool:
    include = _enum_list(req, "include", ("AVAILABILITY",))
    if not include:
        sent = [n for n in names if n in req.request.query_params]
        if sent:
            raise Problem(
                400,
                f"query parameter {sent[0]} is valid only with include=AVAILABILITY; add it or "
                f"drop {sent[0]}",
            )
        return False
    return True


def _positive_int(req: ApiRequest, name: str) -> int | None:
    raw = req.request.query_params.get(name)
    if raw is None:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise _invalid(name, "must be a positive integer")
    return int(raw)


def _vcpu_count(req: ApiRequest) -> int | None:
    """``vcpuCount``: a power of two, at least 2 (the reference's filter)."""
    count = _positive_int(req, "vcpuCount")
    if count is not None and (count < 2 or count & (count - 1)):
        raise _invalid("vcpuCount", "must be a power of two of at least 2 (2, 4, 8, ...)")
    return count


_GPU_FILTERS = ("product", "count", "cloud", "cudaVersions", "minCudaVersion", "countryCodes")


def _gpu_query(req: ApiRequest) -> catalog_data.GpuQuery:
    if not _availability_filters(req, _GPU_FILTERS):
        return catalog_data.GpuQuery()
    products = _enum_list(req, "product", ("POD", "CLUSTER", "SERVERLESS")) or ["POD"]
    cloud = req.request.query_params.get("cloud", "SECURE")
    if cloud not in ("SECURE", "COMMUNITY"):
        raise _invalid("cloud", "must be SECURE or COMMUNITY")
    cuda = _list(req, "cudaVersions")
    minimum = req.request.query_params.get("minCudaVersion")
    if cuda is not None and minimum is not None:
        raise Problem(400, "cudaVersions and minCudaVersion exclude each other; send one")
    for version in cuda or []:
        if not _CUDA.match(version):
            raise _invalid("cudaVersions", f"entry {version!r} must be major.minor (e.g. 12.8)")
    if minimum is not None and not _MIN_CUDA.match(minimum):
        raise _invalid("minCudaVersion", "must be major or major.minor (e.g. 12 or 12.4)")
    countries = _list(req, "countryCodes")
    for code in countries or []:
        if not _COUNTRY.match(code):
            raise _invalid("countryCodes", f"entry {code!r} must be an uppercase ISO country code")
    return catalog_data.GpuQuery(
        include_availability=True,
        product=products,
        count=_positive_int(req, "count") or 1,
        cloud=cloud,
        cuda_versions=cuda,
        min_cuda_version=minimum,
        country_codes=countries,
    )


def _cpu_query(req: ApiRequest) -> dict[str, Any]:
    if not _availability_filters(req, ("product", "vcpuCount")):
        return {}
    return {
        "include_availability": True,
        "product": _enum_list(req, "product", ("POD", "SERVERLESS")) or ["POD"],
        "vcpu_count": _vcpu_count(req),
    }


@table.get("/v2/catalog/gpus")
async def list_gpus(req: ApiRequest) -> Response:
    """``GET /v2/catalog/gpus``."""
    return json_response({"gpus": catalog_data.list_gpu_types(_gpu_query(req))})


@table.get("/v2/catalog/gpus/{id}")
async def get_gpu(req: ApiRequest) -> Response:
    """``GET /v2/catalog/gpus/{id}``."""
    entry = catalog_data.get_gpu_type(req.param("id"), _gpu_query(req))
    if entry is None:
        raise not_found("GPU type", req.param("id"))
    return json_response(entry)


@table.get("/v2/catalog/cpus")
async def list_cpus(req: ApiRequest) -> Response:
    """``GET /v2/catalog/cpus``."""
    return json_response({"cpus": catalog_data.list_cpu_types(**_cpu_query(req))})


@table.get("/v2/catalog/cpus/{id}")
async def get_cpu(req: ApiRequest) -> Response:
    """``GET /v2/catalog/cpus/{id}``."""
    query = _cpu_query(req)
    query.pop("product", None)
    entry = catalog_data.get_cpu_type(req.param("id"), **query)
    if entry is None:
        raise not_found("CPU flavor", req.param("id"))
    return json_response(entry)


def _dc_include(req: ApiRequest) -> list[str]:
    return _enum_list(req, "include", ("GPU_AVAILABILITY", "CPU_AVAILABILITY"))


@table.get("/v2/catalog/datacenters")
async def list_datacenters(req: ApiRequest) -> Response:
    """``GET /v2/catalog/datacenters`` with the reference's filters."""
    global_network = None
    if "globalNetwork" in req.request.query_params:
        global_network = req.query_flag("globalNetwork")
    centers = catalog_data.list_data_centers(
        include=_dc_include(req),
        regions=_enum_list(req, "regions", get_args(DataCenterRegion)) or None,
        network_volume_types=_enum_list(req, "networkVolumeTypes", get_args(VolumeType)) or None,
        compliance=_enum_list(req, "compliance", get_args(Compliance)) or None,
        global_network=global_network,
    )
    return json_response({"dataCenters": centers})


@table.get("/v2/catalog/datacenters/{id}")
async def get_datacenter(req: ApiRequest) -> Response:
    """``GET /v2/catalog/datacenters/{id}``."""
    entry = catalog_data.get_data_center(req.param("id"), include=_dc_include(req))
    if entry is None:
        raise not_found("data center", req.param("id"))
    return json_response(entry)


_TEMPLATE_SOURCES = ("official", "verified", "community")


@table.get("/v2/catalog/templates")
async def list_public_templates(req: ApiRequest) -> Response:
    """``GET /v2/catalog/templates[?source=official|verified|community]``: the emulator's
    public templates are all official, so the other slices are empty."""
    source = req.request.query_params.get("source", "official")
    if source not in _TEMPLATE_SOURCES:
        raise _invalid(
            "source", f"has unknown value {source!r}; use {', '.join(_TEMPLATE_SOURCES)}"
        )
    return json_response({"templates": public_templates() if source == "official" else []})
