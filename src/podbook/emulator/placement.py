"""Placing pods on machines of the built-in catalog (:mod:`podbook.emulator.catalog_data`).

Two steps. :func:`choose_gpu_host` / :func:`choose_cpu_host` are deterministic: they pick the
catalog host a pod runs on (a :class:`HostChoice`) or raise a :class:`PlacementError`, a 400
``No Capacity`` problem whose detail is one line naming what did not match and what is
available instead. :func:`pod_placement` turns a choice into what one pod record needs (a
:class:`Placement`: its own public IP for port mappings and, when asked for and supported, a
global-network address).

Capacity is static: a host row says how many GPUs (or vCPUs) are free on it, and a row with
0 free is offered but full, which placement refuses with a capacity error.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from podbook.emulator.catalog_data import (
    CPU_BY_ID,
    CPU_HOSTS,
    CPU_TYPES,
    DATA_CENTERS,
    DC_BY_ID,
    DC_ORDER,
    GPU_BY_ID,
    GPU_HOSTS,
    RTX4090,
    CpuHost,
    GpuHost,
    cuda_at_least,
    cuda_key,
    cuda_versions_of,
    join_ids,
)
from podbook.emulator.problems import Problem

__all__ = [
    "HostChoice",
    "InvalidVcpuCount",
    "NoCapacity",
    "Placement",
    "PlacementError",
    "UnknownCpuFlavor",
    "UnknownDataCenter",
    "UnknownGpuType",
    "choose_cpu_host",
    "choose_gpu_host",
    "pod_placement",
    "random_global_ip",
    "random_public_ip",
]

_Host = TypeVar("_Host", GpuHost, CpuHost)

# --- errors ----------------------------------------------------------------------------------


class PlacementError(Problem, ValueError):
    """A pod cannot be placed: a 400 ``No Capacity`` problem whose detail (and ``str()``) is
    one line that says why and what exists instead."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message, title="No Capacity")


class UnknownGpuType(PlacementError):
    """The GPU type id is not in the catalog."""


class UnknownCpuFlavor(PlacementError):
    """The CPU flavor id is not in the catalog."""


class UnknownDataCenter(PlacementError):
    """A requested data center id is not in the catalog."""


class InvalidVcpuCount(PlacementError):
    """The vCPU count is outside the flavor's range or not a power of two."""


class NoCapacity(PlacementError):
    """Nothing matching the request has room (cloud, data centers, CUDA, count)."""


# --- choosing a catalog host (pure) ----------------------------------------------------------


@dataclass(frozen=True)
class HostChoice:
    """The catalog host a pod goes to: data center, the host's CUDA version, id and price.

    ``price_per_hour`` is for the whole pod (per-GPU price × count, or per-vCPU × vCPUs);
    ``memory_gb`` is set for CPU pods; ``global_network`` tells whether the pod could join the
    global network there (a GPU pod in a data center that has it; never a CPU pod).
    """

    data_center_id: str
    cuda_version: str | None
    host_id: str
    price_per_hour: float
    global_network: bool
    memory_gb: int | None = None


def _check_data_centers(data_center_ids: Sequence[str] | None) -> list[str]:
    """The data centers to try, in order: those asked for (known ones only) or all."""
    if not data_center_ids:
        return [dc["id"] for dc in DATA_CENTERS]
    unknown = [dc for dc in data_center_ids if dc not in DC_BY_ID]
    if unknown:
        raise UnknownDataCenter(
            f"unknown data center {unknown[0]!r}; known: {join_ids([d['id'] for d in DATA_CENTERS])}"
        )
    return list(dict.fromkeys(data_center_ids))


def _where(data_center_ids: Sequence[str] | None, candidates: Sequence[str]) -> str:
    return join_ids(candidates) if data_center_ids else "any data center"


def _cuda_wish(allowed: Sequence[str] | None, minimum: str | None) -> str:
    if allowed:
        return "CUDA " + " or ".join(allowed)
    return f"CUDA {minimum} or newer"


def _offered(hosts: list[_Host], candidates: Sequence[str]) -> tuple[list[_Host], str]:
    """The hosts in the candidate data centers, and every data center offering any of them."""
    offered = sorted({h.data_center_id for h in hosts}, key=DC_ORDER.__getitem__)
    return [h for h in hosts if h.data_center_id in candidates], join_ids(offered)


def _choice(
    host: GpuHost | CpuHost,
    price_per_hour: float,
    cuda_version: str | None = None,
    memory_gb: int | None = None,
    global_network: bool = False,
) -> HostChoice:
    return HostChoice(
        data_center_id=host.data_center_id,
        cuda_version=cuda_version,
        host_id=host.host_id,
        price_per_hour=round(price_per_hour, 4),
        global_network=global_network,
        memory_gb=memory_gb,
    )


def choose_gpu_host(
    gpu_id: str,
    count: int = 1,
    cloud: str = "SECURE",
    data_center_ids: Sequence[str] | None = None,
    allowed_cuda_versions: Sequence[str] | None = None,
    min_cuda_version: str | None = None,
    global_network: bool = False,
    pod_count: int = 1,
) -> HostChoice:
    """Choose where ``pod_count`` pods of ``count`` × ``gpu_id`` run, all in one data center.

    Data centers are tried in the order asked (or catalog order); within one, the host with
    the newest matching CUDA version that has room wins. ``allowed_cuda_versions`` matches
    exactly; ``min_cuda_version`` numerically (``"12"`` accepts any 12.x). With
    ``global_network`` only data centers that support it qualify (NVIDIA only). Raises a
    :class:`PlacementError` subclass with a one-line reason.
    """
    gpu = GPU_BY_ID.get(gpu_id)
    if gpu is None:
        raise UnknownGpuType(
            f"unknown GPU type {gpu_id!r}; see GET /v2/catalog/gpus for ids such as {RTX4090!r}"
        )
    candidates = _check_data_centers(data_center_ids)
    where = _where(data_center_ids, candidates)
    cloud_key = cloud.lower()
    if not gpu[cloud_key]:
        other = "COMMUNITY" if cloud == "SECURE" else "SECURE"
        raise NoCapacity(f"{gpu_id} is not offered on {cloud} cloud; use cloud {other}")
    if count > gpu["maxCount"][cloud_key]:
        raise NoCapacity(
            f"{count} x {gpu_id} exceeds the largest {cloud} machine"
            f" ({gpu['maxCount'][cloud_key]} GPUs); request fewer GPUs per pod"
        )
    if global_network and gpu["manufacturer"] != "NVIDIA":
        raise NoCapacity(f"global networking needs an NVIDIA GPU; {gpu_id} is not one")

    hosts, offered = _offered(
        [h for h in GPU_HOSTS if h.gpu_id == gpu_id and h.cloud == cloud], candidates
    )
    if not hosts:
        raise NoCapacity(
            f"no {cloud} host in {where} has {gpu_id}; it is offered ({cloud}) in {offered}"
        )
    if global_network:
        capable = [h for h in hosts if DC_BY_ID[h.data_center_id]["globalNetwork"]]
        if not capable:
            supporting = [dc["id"] for dc in DATA_CENTERS if dc["globalNetwork"]]
            raise NoCapacity(
                f"global networking is not supported where {gpu_id} can be placed ({where});"
                f" data centers with global networking: {join_ids(supporting)}"
            )
        hosts = capable
    if allowed_cuda_versions or min_cuda_version:
        matching = [
            h
            for h in hosts
            if (h.cuda_version in allowed_cuda_versions if allowed_cuda_versions else True)
            and (cuda_at_least(h.cuda_version, min_cuda_version) if min_cuda_version else True)
        ]
        if not matching:
            raise NoCapacity(
                f"no {cloud} host in {where} reports"
                f" {_cuda_wish(allowed_cuda_versions, min_cuda_version)} for {gpu_id};"
                f" available there: {join_ids(cuda_versions_of(hosts))}"
            )
        hosts = matching
    sized = [h for h in hosts if count <= h.machine_gpus]
    if not sized:
        largest = max(h.machine_gpus for h in hosts)
        raise NoCapacity(
            f"no {cloud} machine in {where} has {count} x {gpu_id}"
            f" (largest there: {largest}); request fewer GPUs per pod"
        )
    roomy = [h for h in sized if h.free_gpus >= count * pod_count]
    if not roomy:
        pods = f"{pod_count} pods of " if pod_count > 1 else ""
        raise NoCapacity(
            f"no free {cloud} capacity for {pods}{count} x {gpu_id} in {where}"
            " right now; try another data center or cloud"
        )
    host = min(
        roomy,
        key=lambda h: (
            candidates.index(h.data_center_id),
            tuple(-part for part in cuda_key(h.cuda_version or "0")),
        ),
    )
    return _choice(
        host,
        gpu["price"][cloud_key] * count,
        cuda_version=host.cuda_version,
        global_network=bool(DC_BY_ID[host.data_center_id]["globalNetwork"]),
    )


def choose_cpu_host(
    flavor_id: str,
    vcpu_count: int,
    cloud: str = "SECURE",
    data_center_ids: Sequence[str] | None = None,
) -> HostChoice:
    """Choose where a CPU pod of ``vcpu_count`` vCPUs of ``flavor_id`` runs.

    The count must be a power of two within the flavor's range. CPU pods run on SECURE cloud
    only. Memory is ``vcpu_count × ramGbPerVcpu``. Raises a :class:`PlacementError` subclass.
    """
    cpu = CPU_BY_ID.get(flavor_id)
    if cpu is None:
        raise UnknownCpuFlavor(
            f"unknown CPU flavor {flavor_id!r}; known: {join_ids([c['id'] for c in CPU_TYPES])}"
        )
    low, high = cpu["vcpu"]["min"], cpu["vcpu"]["max"]
    if not (low <= vcpu_count <= high) or vcpu_count & (vcpu_count - 1):
        raise InvalidVcpuCount(
            f"vcpuCount {vcpu_count} is not valid for {flavor_id}; choose a power of two"
            f" from {low} to {high}"
        )
    if cloud != "SECURE":
        raise NoCapacity(f"CPU pods run on SECURE cloud only; {cloud} has no {flavor_id} hosts")
    candidates = _check_data_centers(data_center_ids)
    where = _where(data_center_ids, candidates)
    hosts, offered = _offered([h for h in CPU_HOSTS if h.flavor_id == flavor_id], candidates)
    if not hosts:
        raise NoCapacity(f"no host in {where} has {flavor_id}; it is offered in {offered}")
    roomy = [h for h in hosts if h.free_vcpus >= vcpu_count]
    if not roomy:
        raise NoCapacity(
            f"no free capacity for {vcpu_count} vCPUs of {flavor_id} in {where} right now;"
            " try another data center or flavor"
        )
    host = min(roomy, key=lambda h: candidates.index(h.data_center_id))
    return _choice(
        host,
        cpu["price"]["securePerVcpu"] * vcpu_count,
        memory_gb=max(1, int(vcpu_count * cpu["ramGbPerVcpu"])),
    )


# --- the pod's placement ---------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Where a pod runs and what that machine gives it (public IP, global-network address)."""

    data_center_id: str
    cuda_version: str | None
    price_per_hour: float
    public_ip: str
    global_ip: str | None = None
    global_ip_candidate: str | None = None
    memory_gb: int | None = None


def random_public_ip() -> str:
    """A public address from a documentation range (never routable)."""
    network = secrets.choice(
        [ipaddress.ip_network("203.0.113.0/24"), ipaddress.ip_network("198.51.100.0/24")]
    )
    return str(network.network_address + secrets.randbelow(253) + 1)


def random_global_ip() -> str:
    """A global-networking address in 10.64.0.0/10-style private space."""
    return f"10.{secrets.randbelow(64) + 64}.{secrets.randbelow(256)}.{secrets.randbelow(253) + 1}"


def pod_placement(choice: HostChoice, *, global_networking: bool = False) -> Placement:
    """One pod on a machine of the chosen kind: its own public IP and, in a data center with
    global networking, an address on it (``global_ip`` when ``global_networking`` is asked)."""
    candidate = random_global_ip() if choice.global_network else None
    return Placement(
        data_center_id=choice.data_center_id,
        cuda_version=choice.cuda_version,
        price_per_hour=choice.price_per_hour,
        public_ip=random_public_ip(),
        global_ip=candidate if global_networking else None,
        global_ip_candidate=candidate,
        memory_gb=choice.memory_gb,
    )
