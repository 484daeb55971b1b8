"""The emulator's built-in catalog: GPU types, CPU flavors, data centers, hosts, templates.

Data (``catalog.json`` beside this module, read once on import) and pure functions (no
Starlette, no randomness, no state): the routes call the ``list_*`` / ``get_*`` functions,
which return JSON-ready dicts shaped as the reference OpenAPI document says. Where a pod goes
is decided from these hosts by :mod:`podbook.emulator.placement`.

Capacity is static: a host row says how many GPUs (or vCPUs) are free on it. A row with 0
free is offered but full (EU-NL-1's H200 hosts, for one), which the catalog reports
(``available: false``, ``NONE``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = [
    "GPU_TYPES",
    "CPU_TYPES",
    "DATA_CENTERS",
    "GPU_HOSTS",
    "CPU_HOSTS",
    "PUBLIC_TEMPLATES",
    "GPU_BY_ID",
    "CPU_BY_ID",
    "DC_BY_ID",
    "DC_ORDER",
    "GpuHost",
    "CpuHost",
    "GpuQuery",
    "list_gpu_types",
    "get_gpu_type",
    "list_cpu_types",
    "get_cpu_type",
    "list_data_centers",
    "get_data_center",
    "public_templates",
    "availability_level",
    "cuda_key",
    "cuda_at_least",
    "cuda_versions_of",
    "join_ids",
]

# --- hosts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuHost:
    """A class of identical GPU machines in one data center and cloud.

    ``machine_gpus`` is the GPU count of one machine (the most one pod can have there);
    ``free_gpus`` how many are free across those machines right now; ``cuda_version`` what
    the hosts report (``None`` for hosts that report none, e.g. AMD).
    """

    data_center_id: str
    gpu_id: str
    cloud: str
    cuda_version: str | None
    machine_gpus: int
    free_gpus: int

    @property
    def host_id(self) -> str:
        """A stable id naming the machine class."""
        name = GPU_BY_ID[self.gpu_id]["name"] if self.gpu_id in GPU_BY_ID else self.gpu_id
        slug = "".join(ch for ch in name.lower() if ch.isalnum())
        cuda = f"cu{self.cuda_version.replace('.', '')}" if self.cuda_version else "nocuda"
        return f"{self.data_center_id.lower()}-{self.cloud[0].lower()}-{slug}-{cuda}"


@dataclass(frozen=True)
class CpuHost:
    """CPU machines of one flavor in one data center, and their free vCPUs."""

    data_center_id: str
    flavor_id: str
    free_vcpus: int

    @property
    def host_id(self) -> str:
        """A stable id naming the machine class."""
        return f"{self.data_center_id.lower()}-{self.flavor_id}"


# --- data: catalog.json ---------------------------------------------------------------------

_DATA: dict[str, Any] = json.loads(
    resources.files("podbook.emulator").joinpath("catalog.json").read_text(encoding="utf-8")
)

GPU_TYPES: tuple[dict[str, Any], ...] = tuple(_DATA["gpuTypes"])
"""GPU types as ``GET /v2/catalog/gpus`` lists them (before availability)."""
CPU_TYPES: tuple[dict[str, Any], ...] = tuple(_DATA["cpuTypes"])
"""CPU flavors as ``GET /v2/catalog/cpus`` lists them (before availability)."""
DATA_CENTERS: tuple[dict[str, Any], ...] = tuple(_DATA["dataCenters"])
"""Data centers, in the order listings and placement try them (``country`` is not public)."""
GPU_HOSTS: tuple[GpuHost, ...] = tuple(GpuHost(*row) for row in _DATA["gpuHosts"])
"""GPU machine classes (rows in :class:`GpuHost` field order)."""
CPU_HOSTS: tuple[CpuHost, ...] = tuple(CpuHost(*row) for row in _DATA["cpuHosts"])
"""CPU machine classes (rows in :class:`CpuHost` field order)."""
PUBLIC_TEMPLATES: tuple[dict[str, Any], ...] = tuple(_DATA["publicTemplates"])
"""The public templates ``GET /v2/catalog/templates`` lists."""
RTX4090 = "NVIDIA GeForce RTX 4090"
"""A GPU type id, the example in placement's error messages."""

# --- lookups and helpers -------------------------------------------------------------------

GPU_BY_ID: dict[str, dict[str, Any]] = {gpu["id"]: gpu for gpu in GPU_TYPES}
"""GPU types by id."""
CPU_BY_ID: dict[str, dict[str, Any]] = {cpu["id"]: cpu for cpu in CPU_TYPES}
"""CPU flavors by id."""
DC_BY_ID: dict[str, dict[str, Any]] = {dc["id"]: dc for dc in DATA_CENTERS}
"""Data centers by id."""
DC_ORDER: dict[str, int] = {dc["id"]: index for index, dc in enumerate(DATA_CENTERS)}
"""A data center's position in the catalog (the order listings and placement try them in)."""
_PUBLIC_DC_FIELDS = ("id", "name", "region", "globalNetwork", "networkVolumeTypes", "compliance")


def cuda_key(version: str) -> tuple[int, int]:
    """Numeric key of ``"major"`` or ``"major.minor"``: 12.11 sorts above 12.2.

    Unlike :func:`podbook.api.cuda_key` it does not check the form: the catalog routes accept
    more digits than the contract's pattern allows.
    """
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)


def cuda_at_least(version: str | None, floor: str) -> bool:
    """Whether a host's CUDA ``version`` (``None``: reports none) is ``floor`` or newer."""
    return version is not None and cuda_key(version) >= cuda_key(floor)


def cuda_versions_of(hosts: Iterable[GpuHost]) -> list[str]:
    """The CUDA versions these hosts report, oldest first, each once."""
    found = {host.cuda_version for host in hosts if host.cuda_version is not None}
    return sorted(found, key=cuda_key)


def join_ids(items: Sequence[str]) -> str:
    """``"a, b"`` for a message, or ``"none"`` when there are none."""
    return ", ".join(items) if items else "none"


def availability_level(units: int) -> str:
    """How many more pods fit → ``NONE`` (0), ``LOW`` (1-2), ``MEDIUM`` (3-7), ``HIGH`` (8+)."""
    if units <= 0:
        return "NONE"
    if units <= 2:
        return "LOW"
    if units <= 7:
        return "MEDIUM"
    return "HIGH"


def _pods_fitting(host: GpuHost, count: int) -> int:
    return host.free_gpus // count if count <= host.machine_gpus else 0


def _best_level(levels: Iterable[str]) -> str:
    order = ("NONE", "LOW", "MEDIUM", "HIGH")
    return max(levels, key=order.index, default="NONE")


# --- catalog listings ----------------------------------------------------------------------


def _gpu_hosts_for(
    gpu_id: str,
    cloud: str,
    cuda_versions: Sequence[str] | None,
    min_cuda_version: str | None,
    countries: Sequence[str] | None,
) -> list[GpuHost]:
    hosts = [h for h in GPU_HOSTS if h.gpu_id == gpu_id and h.cloud == cloud]
    if countries:
        hosts = [h for h in hosts if DC_BY_ID[h.data_center_id]["country"] in countries]
    if cuda_versions:
        hosts = [h for h in hosts if h.cuda_version in cuda_versions]
    if min_cuda_version:
        hosts = [h for h in hosts if cuda_at_least(h.cuda_version, min_cuda_version)]
    return hosts


@dataclass(frozen=True)
class GpuQuery:
    """What ``GET /v2/catalog/gpus`` and ``/gpus/{id}`` were asked: with
    ``include_availability``, the availability of ``count`` GPUs in ``cloud`` for ``product``,
    scoped by the CUDA filters and ``country_codes``; without it, the plain entries."""

    include_availability: bool = False
    product: Sequence[str] | str | None = None
    count: int = 1
    cloud: str = "SECURE"
    cuda_versions: Sequence[str] | None = None
    min_cuda_version: str | None = None
    country_codes: Sequence[str] | None = None


def list_gpu_types(query: GpuQuery = GpuQuery()) -> list[dict[str, Any]]:
    """``GET /v2/catalog/gpus`` → the ``gpus`` array.

    With ``include_availability``: ``availability`` (best level over data centers for
    ``count`` GPUs in ``cloud``), ``dataCenters`` (those that offer it in that configuration)
    and ``cudaVersions`` (each with ``available``), scoped by the CUDA filters and countries.
    A country filter drops GPU types with no data center there.
    """
    entries = (
        get_gpu_type(gpu["id"], query)
        for gpu in GPU_TYPES
        if not (query.country_codes and query.include_availability)
        or _gpu_hosts_for(gpu["id"], query.cloud, None, None, query.country_codes)
    )
    return [entry for entry in entries if entry is not None]


def get_gpu_type(gpu_id: str, query: GpuQuery = GpuQuery()) -> dict[str, Any] | None:
    """``GET /v2/catalog/gpus/{id}`` → one GPU type, or ``None`` when unknown (availability
    as :func:`list_gpu_types` gives it)."""
    gpu = GPU_BY_ID.get(gpu_id)
    if gpu is None:
        return None
    entry = copy.deepcopy(gpu)
    if not query.include_availability:
        return entry
    product, count = query.product, query.count
    products = [product] if isinstance(product, str) else list(product or ())
    in_product = not products or any(p != "SERVERLESS" or gpu["pool"] for p in products)
    hosts = []
    if in_product:
        hosts = _gpu_hosts_for(
            gpu_id, query.cloud, query.cuda_versions, query.min_cuda_version, query.country_codes
        )
    per_dc: dict[str, int] = {}
    for host in hosts:
        if count <= host.machine_gpus:
            per_dc[host.data_center_id] = per_dc.get(host.data_center_id, 0) + _pods_fitting(
                host, count
            )
    levels = {dc: availability_level(units) for dc, units in per_dc.items()}
    entry["availability"] = _best_level(levels.values())
    if per_dc:
        entry["dataCenters"] = [
            {"id": dc, "name": DC_BY_ID[dc]["name"], "availability": levels[dc]}
            for dc in sorted(per_dc, key=DC_ORDER.__getitem__)
        ]
    versions = cuda_versions_of(h for h in hosts if count <= h.machine_gpus)
    if versions:
        entry["cudaVersions"] = [
            {
                "version": version,
                "available": any(
                    _pods_fitting(h, count) > 0 for h in hosts if h.cuda_version == version
                ),
            }
            for version in versions
        ]
    return entry


def _cpu_entry(
    cpu: dict[str, Any], include_availability: bool, vcpu_count: int | None
) -> dict[str, Any]:
    entry = copy.deepcopy(cpu)
    if not include_availability:
        return entry
    need = vcpu_count or cpu["vcpu"]["min"]
    fits = cpu["vcpu"]["min"] <= need <= cpu["vcpu"]["max"]
    per_dc = {
        host.data_center_id: (host.free_vcpus // need if fits else 0)
        for host in CPU_HOSTS
        if host.flavor_id == cpu["id"]
    }
    entry["availability"] = _best_level(availability_level(units) for units in per_dc.values())
    if per_dc:
        entry["dataCenters"] = [
            {"id": dc, "name": DC_BY_ID[dc]["name"], "availability": availability_level(units)}
            for dc, units in sorted(per_dc.items(), key=lambda item: DC_ORDER[item[0]])
        ]
    return entry


def list_cpu_types(
    include_availability: bool = False,
    product: Sequence[str] | str | None = None,
    vcpu_count: int | None = None,
) -> list[dict[str, Any]]:
    """``GET /v2/catalog/cpus`` → the ``cpus`` array (availability per data center when asked)."""
    return [_cpu_entry(cpu, include_availability, vcpu_count) for cpu in CPU_TYPES]


def get_cpu_type(
    flavor_id: str, include_availability: bool = False, vcpu_count: int | None = None
) -> dict[str, Any] | None:
    """``GET /v2/catalog/cpus/{id}`` → one CPU flavor, or ``None`` when unknown."""
    cpu = CPU_BY_ID.get(flavor_id)
    return None if cpu is None else _cpu_entry(cpu, include_availability, vcpu_count)


def _dc_entry(dc: dict[str, Any], include: Sequence[str]) -> dict[str, Any]:
    entry = {key: copy.deepcopy(dc[key]) for key in _PUBLIC_DC_FIELDS}
    if "GPU_AVAILABILITY" in include:
        gpus: dict[str, int] = {}
        for host in GPU_HOSTS:
            if host.data_center_id == dc["id"]:
                gpus[host.gpu_id] = gpus.get(host.gpu_id, 0) + host.free_gpus
        if gpus:
            entry["gpuAvailability"] = [
                {
                    "id": gpu["id"],
                    "name": gpu["name"],
                    "availability": availability_level(gpus[gpu["id"]]),
                }
                for gpu in GPU_TYPES
                if gpu["id"] in gpus
            ]
    if "CPU_AVAILABILITY" in include:
        cpus = {h.flavor_id: h.free_vcpus for h in CPU_HOSTS if h.data_center_id == dc["id"]}
        if cpus:
            entry["cpuAvailability"] = [
                {
                    "id": cpu["id"],
                    "name": f"{cpu['name']} ({cpu['group']})",
                    "availability": availability_level(cpus[cpu["id"]] // cpu["vcpu"]["min"]),
                }
                for cpu in CPU_TYPES
                if cpu["id"] in cpus
            ]
    return entry


def list_data_centers(
    include: Sequence[str] | str = (),
    regions: Sequence[str] | None = None,
    network_volume_types: Sequence[str] | None = None,
    compliance: Sequence[str] | None = None,
    global_network: bool | None = None,
) -> list[dict[str, Any]]:
    """``GET /v2/catalog/datacenters`` → the ``dataCenters`` array.

    Filters combine with AND; ``regions`` matches any listed; ``network_volume_types`` and
    ``compliance`` need all listed. ``include`` takes ``GPU_AVAILABILITY``/``CPU_AVAILABILITY``.
    """
    wanted = [include] if isinstance(include, str) else list(include)
    result = []
    for dc in DATA_CENTERS:
        if regions and dc["region"] not in regions:
            continue
        if network_volume_types and not set(network_volume_types) <= set(dc["networkVolumeTypes"]):
            continue
        if compliance and not set(compliance) <= set(dc["compliance"]):
            continue
        if global_network is not None and dc["globalNetwork"] != global_network:
            continue
        result.append(_dc_entry(dc, wanted))
    return result


def get_data_center(data_center_id: str, include: Sequence[str] | str = ()) -> dict | None:
    """``GET /v2/catalog/datacenters/{id}`` → one data center, or ``None`` when unknown."""
    dc = DC_BY_ID.get(data_center_id)
    wanted = [include] if isinstance(include, str) else list(include)
    return None if dc is None else _dc_entry(dc, wanted)


def public_templates() -> list[dict[str, Any]]:
    """``GET /v2/catalog/templates`` → the ``templates`` array (fresh copies)."""
    return copy.deepcopy(list(PUBLIC_TEMPLATES))
