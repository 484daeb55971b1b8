"""Placing pods on machines, through the built-in catalog (:mod:`podbook.emulator.catalog_data`).

This module adapts the catalog's placement to what a pod record needs: the data center, the
host's CUDA version (GPU pods), the price per hour for the whole pod, the memory of a CPU pod
(vCPUs × the flavor's RAM per vCPU), a public IP for port mappings and, when asked for and
supported, a global-network address. No capacity → a 400 :class:`Problem` whose detail
names what did not match.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import secrets
from dataclasses import dataclass

from podbook.emulator import catalog_data
from podbook.emulator.problems import Problem


@dataclass(frozen=True)
class Placement:
    """Where a pod runs and what that machine gives it."""

    data_center_id: str
    cuda_version: str | None
    price_per_hour: float
    public_ip: str
    global_ip: str | None = None
    global_ip_candidate: str | None = None
    memory_gb: int | None = None


def with_new_machine(placement: Placement) -> Placement:
    """The same placement on another machine of the same kind (its own public IP)."""
    return dataclasses.replace(placement, public_ip=random_public_ip())


def random_public_ip() -> str:
    """A public address from a documentation range (never routable)."""
    network = secrets.choice(
        [ipaddress.ip_network("203.0.113.0/24"), ipaddress.ip_network("198.51.100.0/24")]
    )
    return str(network.network_address + secrets.randbelow(253) + 1)


def random_global_ip() -> str:
    """A global-networking address in 10.64.0.0/10-style private space."""
    return f"10.{secrets.randbelow(64) + 64}.{secrets.randbelow(256)}.{secrets.randbelow(253) + 1}"


def place_gpu_pod(
    *,
    gpu_id: str,
    count: int,
    cloud: str,
    data_center_ids: list[str] | None,
    allowed_cuda_versions: list[str] | None,
    min_cuda_version: str | None,
    global_networking: bool,
    pod_count: int = 1,
) -> Placement:
    """Place a GPU pod (or ``pod_count`` identical ones in one data center, for a cluster),
    or raise a 400 :class:`Problem` naming what could not be matched."""
    try:
        spot = catalog_data.place_gpu(
            gpu_id,
            count=count,
            cloud=cloud,
            data_center_ids=data_center_ids or None,
            allowed_cuda_versions=allowed_cuda_versions or None,
            min_cuda_version=min_cuda_version,
            global_network=global_networking,
            pod_count=pod_count,
        )
    except catalog_data.PlacementError as exc:
        raise Problem(400, str(exc), title="No Capacity") from None
    candidate = random_global_ip() if spot.global_network else None
    return Placement(
        data_center_id=spot.data_center_id,
        cuda_version=spot.cuda_version,
        price_per_hour=round(spot.price_per_hour, 4),
        public_ip=random_public_ip(),
        global_ip=candidate if global_networking else None,
        global_ip_candidate=candidate,
    )


def place_cpu_pod(
    *, flavor_id: str, vcpu_count: int, cloud: str, data_center_ids: list[str] | None
) -> Placement:
    """Place a CPU pod, or raise a 400 :class:`Problem` naming what could not be matched."""
    try:
        spot = catalog_data.place_cpu(
            flavor_id, vcpu_count=vcpu_count, cloud=cloud, data_center_ids=data_center_ids or None
        )
    except catalog_data.PlacementError as exc:
        raise Problem(400, str(exc), title="No Capacity") from None
    return Placement(
        data_center_id=spot.data_center_id,
        cuda_version=None,
        price_per_hour=round(spot.price_per_hour, 4),
        public_ip=random_public_ip(),
        memory_gb=spot.memory_gb,
    )
