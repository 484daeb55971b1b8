"""Network volume rules shared by the volume routes and pod creation.

1. A volume lives in one data center with one storage type, both fixed at creation; the
   type defaults to the data center's primary (first listed) type.
2. Its size (10..4096 GB) only grows.
3. A pod's ``mounts.network[].volumeId`` must name a volume of the caller's account (400
   otherwise), and the pod is placed in that volume's data center (400 when the request's
   ``dataCenterIds`` leave it out).
"""

from __future__ import annotations

from typing import Any

from podbook.emulator import catalog_data
from podbook.emulator.problems import Problem
from podbook.emulator.store import Store


def data_center(data_center_id: str) -> dict[str, Any]:
    """The catalog entry of a data center; 400 naming the known ones otherwise."""
    entry = catalog_data.get_data_center(data_center_id)
    if entry is None:
        known = ", ".join(dc["id"] for dc in catalog_data.DATA_CENTERS)
        raise Problem(
            400,
            f"data center {data_center_id!r} does not exist; use one of {known}",
            errors=[f"$.dataCenter: unknown data center {data_center_id!r}"],
        )
    return entry


def volume_type(data_center_id: str, requested: str | None) -> str:
    """The storage type of a new volume: the requested one if the data center offers it."""
    offered = list(data_center(data_center_id).get("networkVolumeTypes") or ["STANDARD"])
    if requested is None:
        return offered[0]
    if requested not in offered:
        raise Problem(
            400,
            f"data center {data_center_id} offers no {requested} volumes; use "
            + " or ".join(offered),
            errors=[f"$.type: {requested} is not offered in {data_center_id}"],
        )
    return requested


def place_with_volume(store: Store, account_id: str, spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with its placement narrowed to its network volume's data center (if any)."""
    network = (spec.get("mounts") or {}).get("network") or []
    if not network:
        return spec
    volume_id = network[0]["volumeId"]
    volume = store.network_volumes.get(account_id, volume_id)
    if volume is None:
        raise Problem(
            400,
            f"network volume {volume_id!r} does not exist in your account; create it first "
            "(POST /v2/network-volumes) or name one from GET /v2/network-volumes",
            errors=[f"$.mounts.network[0].volumeId: no network volume {volume_id!r}"],
        )
    where = volume["dataCenter"]
    wanted = spec.get("dataCenterIds") or None
    if wanted is not None and where not in wanted:
        raise Problem(
            400,
            f"network volume {volume_id!r} is in {where}, not in the requested data centers "
            f"({', '.join(wanted)}); add {where} to dataCenterIds or use a volume there",
            errors=[f"$.mounts.network[0].volumeId: volume is in {where}"],
        )
    return {**spec, "dataCenterIds": [where]}
