"""The GPU finder behind ``%catalog gpus``: which GPU types pass the filters, and their rows.

``%catalog gpus --min-vram 40 --cuda 12.4 --cloud SECURE --dc EU-* --max-price 2
--available --count 2``. The filters the API has go into the request (``cloud``, ``count``,
``minCudaVersion``, always with ``include=AVAILABILITY&product=POD``); the others are applied
here, on the rows the service returned:

- ``--min-vram GB``: ``memory >= GB``;
- ``--max-price USD``: the hourly price of one GPU in ``--cloud`` (else its cheapest cloud);
- ``--cuda X.Y`` (also sent as ``minCudaVersion``): some host reports CUDA X.Y or newer;
- ``--dc GLOB``: data centers whose ID matches (``EU-*``, case-insensitive); a GPU type is
  kept when it is in at least one of them, and only those are listed in its row;
- ``--available``: some stock now (in a matching data center when ``--dc`` is given).

Each row also carries the ``%pod create`` line that the panel's Fill button puts in a cell.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from podbook.notebook.catalog.commands import CLOUDS, GpuFilters

if TYPE_CHECKING:
    from podbook.api.catalog import GpuType
    from podbook.client import Client

_PLAIN = re.compile(r"^[\w .:/()+-]+$")  # safe inside double quotes


class CatalogRows(list):
    """The result of ``%catalog ...``: a list of catalog entries that displays as a table."""

    kind: str = ""


class GpuRows(CatalogRows):
    """The result of ``%catalog gpus``: the GPU types that passed the filters."""

    kind = "gpus"
    filters: GpuFilters = GpuFilters()


def fetch(client: Client, filters: GpuFilters) -> list[GpuType]:
    """The GPU types with availability, the API's own filters in the request."""
    return list(
        client.catalog.gpus(
            availability=True,
            product="POD",
            cloud=filters.cloud,
            count=filters.count,
            min_cuda_version=filters.cuda,
        )
    )


def price_of(gpu: dict[str, Any], cloud: str | None) -> float | None:
    """One GPU's hourly price in ``cloud``, else in its cheapest cloud it is offered in."""
    price = gpu.get("price") or {}
    clouds = [cloud] if cloud else list(CLOUDS)
    offers = [price.get(c.lower()) for c in clouds if gpu.get(c.lower())]
    numbers = [p for p in offers if isinstance(p, (int, float))]
    return min(numbers) if numbers else None


def matching_dcs(gpu: dict[str, Any], pattern: str | None) -> list[dict[str, Any]]:
    """The GPU's data centers whose ID matches ``pattern`` (all when no pattern)."""
    centers = list(gpu.get("dataCenters") or [])
    if not pattern:
        return centers
    return [dc for dc in centers if fnmatch.fnmatchcase(str(dc.get("id", "")).upper(), pattern)]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def cuda_versions(gpu: dict[str, Any], minimum: str | None = None) -> list[str]:
    """The CUDA versions hosts of this type report (at least ``minimum`` when given)."""
    versions = [
        str(v.get("version"))
        for v in gpu.get("cudaVersions") or []
        if v.get("version") and v.get("available", True)
    ]
    if minimum:
        versions = [v for v in versions if _version(v) >= _version(minimum)]
    return versions


def keep(gpu: dict[str, Any], filters: GpuFilters) -> bool:
    """True when the wire-form ``gpu`` passes the client-side filters."""
    if filters.min_vram is not None and (gpu.get("memory") or 0) < filters.min_vram:
        return False
    if filters.cloud and not gpu.get(filters.cloud.lower()):
        return False
    if filters.max_price is not None:
        price = price_of(gpu, filters.cloud)
        if price is None or price > filters.max_price:
            return False
    if filters.cuda and not cuda_versions(gpu, filters.cuda):
        return False
    centers = matching_dcs(gpu, filters.dc)
    if filters.dc and not centers:
        return False
    if filters.available:
        if gpu.get("availability") in (None, "NONE"):
            return False
        if filters.dc and all(dc.get("availability") == "NONE" for dc in centers):
            return False
    return True


def create_line(gpu_id: str, filters: GpuFilters) -> str:
    """The ``%pod create`` line for one GPU type under these filters."""
    image = filters.image
    gpu = f"{gpu_id}:{filters.count}" if filters.count and filters.count > 1 else gpu_id
    quoted = f'"{gpu}"' if _PLAIN.match(gpu) else shlex.quote(gpu)
    words = ["%pod create", "--gpu", quoted, "--image", shlex.quote(image)]
    if filters.cloud:
        words += ["--cloud", filters.cloud]
    return " ".join(words)


def panel_row(gpu: dict[str, Any], filters: GpuFilters) -> dict[str, Any]:
    """What the view draws for one GPU type (wire names, plus ``command`` and ``dataCenters``
    narrowed to the ``--dc`` matches)."""
    return {
        "id": gpu.get("id"),
        "name": gpu.get("name"),
        "manufacturer": gpu.get("manufacturer"),
        "memory": gpu.get("memory"),
        "secure": bool(gpu.get("secure")),
        "community": bool(gpu.get("community")),
        "price": gpu.get("price") or {},
        "maxCount": gpu.get("maxCount") or {},
        "availability": gpu.get("availability"),
        "cudaVersions": cuda_versions(gpu),
        "dataCenters": matching_dcs(gpu, filters.dc),
        "command": create_line(str(gpu.get("id", "")), filters),
    }


def filters_state(filters: GpuFilters) -> dict[str, Any]:
    """The filters as a trait value (plus their one-line description)."""
    return {**asdict(filters), "text": filters.describe()}
