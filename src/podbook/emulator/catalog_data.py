"""The emulator's built-in catalog: GPU types, CPU flavors, data centers, hosts, templates.

Pure data and pure functions (no Starlette, no randomness, no state): the routes call the
``list_*`` / ``get_*`` functions, which return JSON-ready dicts shaped as the reference OpenAPI
document says. Where a pod goes is decided from these hosts by
:mod:`podbook.emulator.placement`.

Capacity is static: a host row says how many GPUs (or vCPUs) are free on it. A row with 0
free is offered but full, which the catalog reports (``available: false``, ``NONE``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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

# --- data: GPU types -----------------------------------------------------------------------

GPU_TYPES: tuple[dict[str, Any], ...] = (
    {
        "id": "NVIDIA GeForce RTX 4090",
        "name": "RTX 4090",
        "pool": "ADA_24",
        "manufacturer": "NVIDIA",
        "memory": 24,
        "secure": True,
        "community": True,
        "price": {"secure": 0.69, "community": 0.34, "serverless": 1.1},
        "maxCount": {"secure": 8, "community": 8},
    },
    {
        "id": "NVIDIA GeForce RTX 3090",
        "name": "RTX 3090",
        "pool": "AMPERE_24",
        "manufacturer": "NVIDIA",
        "memory": 24,
        "secure": False,
        "community": True,
        "price": {"secure": 0.43, "community": 0.22, "serverless": 0.68},
        "maxCount": {"secure": 0, "community": 4},
    },
    {
        "id": "NVIDIA RTX A6000",
        "name": "RTX A6000",
        "pool": "AMPERE_48",
        "manufacturer": "NVIDIA",
        "memory": 48,
        "secure": True,
        "community": True,
        "price": {"secure": 0.49, "community": 0.33, "serverless": 1.22},
        "maxCount": {"secure": 8, "community": 4},
    },
    {
        "id": "NVIDIA A40",
        "name": "A40",
        "pool": "AMPERE_48",
        "manufacturer": "NVIDIA",
        "memory": 48,
        "secure": True,
        "community": False,
        "price": {"secure": 0.40, "community": 0.35, "serverless": 1.22},
        "maxCount": {"secure": 8, "community": 0},
    },
    {
        "id": "NVIDIA L40S",
        "name": "L40S",
        "pool": "ADA_48_PRO",
        "manufacturer": "NVIDIA",
        "memory": 48,
        "secure": True,
        "community": False,
        "price": {"secure": 0.86, "community": 0.79, "serverless": 1.9},
        "maxCount": {"secure": 8, "community": 0},
    },
    {
        "id": "NVIDIA A100 80GB PCIe",
        "name": "A100 PCIe",
        "pool": "AMPERE_80",
        "manufacturer": "NVIDIA",
        "memory": 80,
        "secure": True,
        "community": True,
        "price": {"secure": 1.64, "community": 1.19, "serverless": 2.72},
        "maxCount": {"secure": 8, "community": 2},
    },
    {
        "id": "NVIDIA A100-SXM4-80GB",
        "name": "A100 SXM",
        "pool": "AMPERE_80",
        "manufacturer": "NVIDIA",
        "memory": 80,
        "secure": True,
        "community": False,
        "price": {"secure": 1.74, "community": 1.39, "serverless": 2.72},
        "maxCount": {"secure": 8, "community": 0},
    },
    {
        "id": "NVIDIA H100 80GB HBM3",
        "name": "H100 SXM",
        "pool": "ADA_80_PRO",
        "manufacturer": "NVIDIA",
        "memory": 80,
        "secure": True,
        "community": True,
        "price": {"secure": 2.69, "community": 2.39, "serverless": 4.18},
        "maxCount": {"secure": 8, "community": 4},
    },
    {
        "id": "NVIDIA H200",
        "name": "H200 SXM",
        "pool": "HOPPER_141",
        "manufacturer": "NVIDIA",
        "memory": 141,
        "secure": True,
        "community": False,
        "price": {"secure": 3.59, "community": 3.59, "serverless": 5.58},
        "maxCount": {"secure": 8, "community": 0},
    },
    {
        "id": "AMD Instinct MI300X OAM",
        "name": "MI300X",
        "pool": None,
        "manufacturer": "AMD",
        "memory": 192,
        "secure": True,
        "community": False,
        "price": {"secure": 2.49, "community": 2.49},
        "maxCount": {"secure": 8, "community": 0},
    },
)

# --- data: data centers --------------------------------------------------------------------

DATA_CENTERS: tuple[dict[str, Any], ...] = (
    {
        "id": "US-TX-3",
        "name": "US Texas 3",
        "region": "NORTH_AMERICA",
        "country": "US",
        "globalNetwork": True,
        "networkVolumeTypes": ["STANDARD"],
        "compliance": ["ISO_IEC_27001", "SOC_2_TYPE_2"],
    },
    {
        "id": "US-CA-2",
        "name": "US California 2",
        "region": "NORTH_AMERICA",
        "country": "US",
        "globalNetwork": True,
        "networkVolumeTypes": ["STANDARD", "HIGH_PERFORMANCE"],
        "compliance": ["HIPAA", "ISO_IEC_27001", "SOC_2_TYPE_2"],
    },
    {
        "id": "US-KS-2",
        "name": "US Kansas 2",
        "region": "NORTH_AMERICA",
        "country": "US",
        "globalNetwork": False,
        "networkVolumeTypes": ["STANDARD"],
        "compliance": ["SOC_2_TYPE_2"],
    },
    {
        "id": "EU-RO-1",
        "name": "EU Romania 1",
        "region": "EUROPE",
        "country": "RO",
        "globalNetwork": True,
        "networkVolumeTypes": ["STANDARD"],
        "compliance": ["GDPR", "ISO_IEC_27001", "SOC_2_TYPE_2"],
    },
    {
        "id": "EU-SE-1",
        "name": "EU Sweden 1",
        "region": "EUROPE",
        "country": "SE",
        "globalNetwork": False,
        "networkVolumeTypes": ["STANDARD"],
        "compliance": ["GDPR", "ISO_IEC_27001", "RENEWABLE"],
    },
    {
        "id": "EU-NL-1",
        "name": "EU Netherlands 1",
        "region": "EUROPE",
        "country": "NL",
        "globalNetwork": True,
        "networkVolumeTypes": ["STANDARD", "HIGH_PERFORMANCE"],
        "compliance": ["GDPR", "ISO_IEC_27001", "SOC_2_TYPE_2"],
    },
    {
        "id": "CA-MTL-1",
        "name": "CA Montreal 1",
        "region": "NORTH_AMERICA",
        "country": "CA",
        "globalNetwork": False,
        "networkVolumeTypes": ["STANDARD"],
        "compliance": ["ISO_IEC_27001", "RENEWABLE"],
    },
    {
        "id": "AP-JP-1",
        "name": "AP Japan 1",
        "region": "ASIA",
        "country": "JP",
        "globalNetwork": False,
        "networkVolumeTypes": ["STANDARD"],
        "compliance": ["ISO_IEC_27001"],
    },
)

# --- data: hosts ---------------------------------------------------------------------------


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


RTX4090 = "NVIDIA GeForce RTX 4090"
RTX3090 = "NVIDIA GeForce RTX 3090"
A6000 = "NVIDIA RTX A6000"
A40 = "NVIDIA A40"
L40S = "NVIDIA L40S"
A100_PCIE = "NVIDIA A100 80GB PCIe"
A100_SXM = "NVIDIA A100-SXM4-80GB"
H100 = "NVIDIA H100 80GB HBM3"
H200 = "NVIDIA H200"
MI300X = "AMD Instinct MI300X OAM"

GPU_HOSTS: tuple[GpuHost, ...] = (
    # US-TX-3: a large secure site with the flagship GPUs.
    GpuHost("US-TX-3", RTX4090, "SECURE", "12.4", 8, 24),
    GpuHost("US-TX-3", RTX4090, "SECURE", "12.8", 8, 16),
    GpuHost("US-TX-3", H100, "SECURE", "12.4", 8, 32),
    GpuHost("US-TX-3", H100, "SECURE", "12.8", 8, 16),
    GpuHost("US-TX-3", H200, "SECURE", "12.8", 8, 8),
    GpuHost("US-TX-3", A100_SXM, "SECURE", "12.4", 8, 16),
    GpuHost("US-TX-3", L40S, "SECURE", "12.6", 8, 8),
    # US-CA-2
    GpuHost("US-CA-2", A6000, "SECURE", "12.2", 8, 8),
    GpuHost("US-CA-2", A6000, "SECURE", "12.4", 8, 12),
    GpuHost("US-CA-2", A6000, "COMMUNITY", "12.4", 4, 6),
    GpuHost("US-CA-2", RTX4090, "COMMUNITY", "12.2", 4, 4),
    GpuHost("US-CA-2", RTX4090, "COMMUNITY", "12.6", 8, 10),
    GpuHost("US-CA-2", A40, "SECURE", "12.4", 8, 16),
    GpuHost("US-CA-2", H100, "SECURE", "12.6", 8, 8),
    # US-KS-2
    GpuHost("US-KS-2", RTX4090, "SECURE", "12.6", 8, 8),
    GpuHost("US-KS-2", RTX4090, "SECURE", "12.8", 8, 16),
    GpuHost("US-KS-2", A100_PCIE, "SECURE", "12.4", 8, 8),
    GpuHost("US-KS-2", A100_PCIE, "SECURE", "12.8", 8, 4),
    GpuHost("US-KS-2", L40S, "SECURE", "12.4", 8, 12),
    GpuHost("US-KS-2", L40S, "SECURE", "12.8", 8, 8),
    GpuHost("US-KS-2", RTX3090, "COMMUNITY", "12.2", 4, 0),
    GpuHost("US-KS-2", MI300X, "SECURE", None, 8, 16),
    # EU-RO-1
    GpuHost("EU-RO-1", RTX4090, "SECURE", "12.4", 8, 16),
    GpuHost("EU-RO-1", RTX4090, "SECURE", "12.8", 8, 8),
    GpuHost("EU-RO-1", RTX4090, "COMMUNITY", "12.6", 4, 8),
    GpuHost("EU-RO-1", A40, "SECURE", "12.2", 8, 8),
    GpuHost("EU-RO-1", RTX3090, "COMMUNITY", "11.8", 4, 4),
    GpuHost("EU-RO-1", RTX3090, "COMMUNITY", "12.2", 4, 8),
    GpuHost("EU-RO-1", H100, "SECURE", "12.4", 8, 8),
    # EU-SE-1
    GpuHost("EU-SE-1", A100_PCIE, "SECURE", "12.2", 8, 8),
    GpuHost("EU-SE-1", A100_PCIE, "SECURE", "12.4", 8, 8),
    GpuHost("EU-SE-1", A100_PCIE, "COMMUNITY", "12.4", 2, 2),
    GpuHost("EU-SE-1", A6000, "COMMUNITY", "12.0", 4, 4),
    GpuHost("EU-SE-1", L40S, "SECURE", "12.6", 8, 16),
    # EU-NL-1: the H200 hosts here are full.
    GpuHost("EU-NL-1", H100, "SECURE", "12.8", 8, 16),
    GpuHost("EU-NL-1", H100, "COMMUNITY", "12.8", 4, 4),
    GpuHost("EU-NL-1", H200, "SECURE", "12.8", 8, 0),
    GpuHost("EU-NL-1", RTX4090, "SECURE", "12.8", 8, 8),
    # CA-MTL-1
    GpuHost("CA-MTL-1", A40, "SECURE", "12.4", 8, 8),
    GpuHost("CA-MTL-1", A6000, "SECURE", "12.4", 8, 8),
    GpuHost("CA-MTL-1", RTX3090, "COMMUNITY", "12.4", 4, 4),
    # AP-JP-1
    GpuHost("AP-JP-1", RTX4090, "SECURE", "13.0", 8, 8),
    GpuHost("AP-JP-1", RTX4090, "COMMUNITY", "12.8", 4, 4),
    GpuHost("AP-JP-1", H100, "SECURE", "12.9", 8, 8),
)

CPU_TYPES: tuple[dict[str, Any], ...] = (
    {
        "id": "cpu3c",
        "name": "Compute-Optimized",
        "group": "Gen 3",
        "vcpu": {"min": 2, "max": 32},
        "ramGbPerVcpu": 2,
        "price": {"securePerVcpu": 0.03, "serverlessPerVcpu": 0.025},
    },
    {
        "id": "cpu3g",
        "name": "General Purpose",
        "group": "Gen 3",
        "vcpu": {"min": 2, "max": 32},
        "ramGbPerVcpu": 4,
        "price": {"securePerVcpu": 0.04, "serverlessPerVcpu": 0.035},
    },
    {
        "id": "cpu3m",
        "name": "Memory-Optimized",
        "group": "Gen 3",
        "vcpu": {"min": 2, "max": 16},
        "ramGbPerVcpu": 8,
        "price": {"securePerVcpu": 0.05, "serverlessPerVcpu": 0.045},
    },
    {
        "id": "cpu5c",
        "name": "Compute-Optimized",
        "group": "Gen 5",
        "vcpu": {"min": 2, "max": 32},
        "ramGbPerVcpu": 2,
        "price": {"securePerVcpu": 0.035, "serverlessPerVcpu": 0.03},
    },
    {
        "id": "cpu5g",
        "name": "General Purpose",
        "group": "Gen 5",
        "vcpu": {"min": 2, "max": 64},
        "ramGbPerVcpu": 4,
        "price": {"securePerVcpu": 0.045, "serverlessPerVcpu": 0.04},
    },
    {
        "id": "cpu5m",
        "name": "Memory-Optimized",
        "group": "Gen 5",
        "vcpu": {"min": 4, "max": 32},
        "ramGbPerVcpu": 8,
        "price": {"securePerVcpu": 0.06, "serverlessPerVcpu": 0.055},
    },
)

CPU_HOSTS: tuple[CpuHost, ...] = (
    CpuHost("US-TX-3", "cpu3c", 256),
    CpuHost("US-TX-3", "cpu3g", 128),
    CpuHost("US-KS-2", "cpu3c", 64),
    CpuHost("US-KS-2", "cpu3m", 32),
    CpuHost("EU-RO-1", "cpu3c", 128),
    CpuHost("EU-RO-1", "cpu3g", 64),
    CpuHost("CA-MTL-1", "cpu3g", 32),
    CpuHost("US-CA-2", "cpu5c", 256),
    CpuHost("US-CA-2", "cpu5g", 128),
    CpuHost("EU-NL-1", "cpu5c", 128),
    CpuHost("EU-NL-1", "cpu5g", 64),
    CpuHost("EU-NL-1", "cpu5m", 0),
    CpuHost("EU-SE-1", "cpu5c", 64),
)

# --- data: public templates ----------------------------------------------------------------

PUBLIC_TEMPLATES: tuple[dict[str, Any], ...] = (
    {
        "id": "runpod-torch-v280",
        "name": "PyTorch 2.8",
        "image": "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
        "args": "",
        "disk": 50,
        "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
        "ports": ["8888/http", "22/tcp"],
        "env": {},
        "registry": None,
        "serverless": False,
        "public": True,
        "category": "NVIDIA",
        "startSsh": True,
        "startJupyter": True,
        "allowedCudaVersions": ["12.8", "12.9", "13.0"],
    },
    {
        "id": "runpod-comfyui",
        "name": "ComfyUI",
        "image": "runpod/comfyui:0.3.49-cu124",
        "args": "",
        "disk": 40,
        "mounts": {"persistent": {"size": 50, "path": "/workspace"}},
        "ports": ["8188/http", "8888/http", "22/tcp"],
        "env": {"COMFYUI_ARGS": "--listen 0.0.0.0 --port 8188", "HF_HUB_ENABLE_HF_TRANSFER": "1"},
        "registry": None,
        "serverless": False,
        "public": True,
        "category": "NVIDIA",
        "startSsh": True,
        "startJupyter": False,
        "allowedCudaVersions": ["12.4", "12.6", "12.8"],
    },
    {
        "id": "runpod-ubuntu",
        "name": "Ubuntu 24.04",
        "image": "runpod/base:0.7.0-ubuntu2404",
        "args": "",
        "disk": 20,
        "mounts": {},
        "ports": ["22/tcp"],
        "env": {},
        "registry": None,
        "serverless": False,
        "public": True,
        "category": "CPU",
        "startSsh": True,
        "startJupyter": False,
        "allowedCudaVersions": [],
    },
    {
        "id": "runpod-worker-vllm",
        "name": "vLLM worker (serverless)",
        "image": "runpod/worker-v1-vllm:v2.7.0stable-cuda12.1.0",
        "args": "",
        "disk": 30,
        "mounts": {},
        "ports": [],
        "env": {"MODEL_NAME": "Qwen/Qwen2.5-0.5B-Instruct", "MAX_MODEL_LEN": "8192"},
        "registry": None,
        "serverless": True,
        "public": True,
        "category": "NVIDIA",
        "startSsh": False,
        "startJupyter": False,
        "allowedCudaVersions": [],
    },
)

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


def list_gpu_types(
    include_availability: bool = False,
    product: Sequence[str] | str | None = None,
    count: int = 1,
    cloud: str = "SECURE",
    cuda_versions: Sequence[str] | None = None,
    min_cuda_version: str | None = None,
    country_codes: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """``GET /v2/catalog/gpus`` → the ``gpus`` array.

    With ``include_availability``: ``availability`` (best level over data centers for
    ``count`` GPUs in ``cloud``), ``dataCenters`` (those that offer it in that configuration)
    and ``cudaVersions`` (each with ``available``), scoped by the CUDA filters and countries.
    A country filter drops GPU types with no data center there.
    """
    entries = (
        get_gpu_type(
            gpu["id"],
            include_availability,
            product,
            count,
            cloud,
            cuda_versions,
            min_cuda_version,
            country_codes,
        )
        for gpu in GPU_TYPES
        if not (country_codes and include_availability)
        or _gpu_hosts_for(gpu["id"], cloud, None, None, country_codes)
    )
    return [entry for entry in entries if entry is not None]


def get_gpu_type(
    gpu_id: str,
    include_availability: bool = False,
    product: Sequence[str] | str | None = None,
    count: int = 1,
    cloud: str = "SECURE",
    cuda_versions: Sequence[str] | None = None,
    min_cuda_version: str | None = None,
    country_codes: Sequence[str] | None = None,
) -> dict[str, Any] | None:
    """``GET /v2/catalog/gpus/{id}`` → one GPU type, or ``None`` when unknown (availability
    as :func:`list_gpu_types` gives it)."""
    gpu = GPU_BY_ID.get(gpu_id)
    if gpu is None:
        return None
    entry = copy.deepcopy(gpu)
    if not include_availability:
        return entry
    products = [product] if isinstance(product, str) else list(product or ())
    in_product = not products or any(p != "SERVERLESS" or gpu["pool"] for p in products)
    hosts = _gpu_hosts_for(gpu_id, cloud, cuda_versions, min_cuda_version, country_codes)
    hosts = hosts if in_product else []
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
