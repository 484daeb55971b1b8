"""``%catalog gpus`` with filters: the GPU finder.

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

Each row also carries the ``%pod create`` line that the panel's buttons fill or run.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shlex
from dataclasses import asdict, dataclass
from typing import Any

from podbook.notebook.parsing import Subcommand, add_output_argument, magic_parser
from podbook.notebook.session import CatalogRows

DEFAULT_IMAGE = "runpod/pytorch"
CLOUDS = ("SECURE", "COMMUNITY")
_CUDA = re.compile(r"^\d+(\.\d+)?$")
_DC = re.compile(r"^[A-Za-z0-9*?\[\]-]+$")
_PLAIN = re.compile(r"^[\w .:/()+-]+$")  # safe inside double quotes


@dataclass(frozen=True)
class GpuFilters:
    """The finder's filters; ``None``/``False`` means not filtered."""

    min_vram: int | None = None
    cuda: str | None = None
    cloud: str | None = None
    dc: str | None = None
    max_price: float | None = None
    available: bool = False
    count: int | None = None
    image: str = DEFAULT_IMAGE  # not a filter: the image of the ``%pod create`` lines

    def describe(self) -> str:
        """``VRAM ≥ 40 GB · CUDA ≥ 12.4 · SECURE · DC EU-*``, or ``no filters``."""
        parts = []
        if self.min_vram is not None:
            parts.append(f"VRAM ≥ {self.min_vram} GB")
        if self.cuda:
            parts.append(f"CUDA ≥ {self.cuda}")
        if self.cloud:
            parts.append(self.cloud)
        if self.dc:
            parts.append(f"DC {self.dc}")
        if self.max_price is not None:
            parts.append(f"≤ ${self.max_price:g}/h")
        if self.available:
            parts.append("available now")
        if self.count:
            parts.append(f"{self.count} per pod")
        return " · ".join(parts) or "no filters"


@dataclass(frozen=True)
class GpuFinderCommand:
    """``%catalog gpus [filters]``."""

    filters: GpuFilters
    output: str | None = None
    kind: str = "gpus"


class GpuRows(CatalogRows):
    """The result of ``%catalog gpus``: the GPU types that passed the filters."""

    kind = "gpus"
    filters: GpuFilters = GpuFilters()


# ---------------------------------------------------------------------------- parsing


def _vram(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _price(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError(text)
    return value


def _cuda(text: str) -> str:
    if not _CUDA.match(text):
        raise ValueError(text)
    return text


def _cloud(text: str) -> str:
    if text.upper() not in CLOUDS:
        raise ValueError(text)
    return text.upper()


def _dc(text: str) -> str:
    if not _DC.match(text):
        raise ValueError(text)
    return text.upper()


def _image(text: str) -> str:
    if not text.strip() or any(c.isspace() for c in text):
        raise ValueError(text)
    return text


def _typed(fn: Any, expected: str) -> Any:
    def parse(text: str) -> Any:
        try:
            return fn(text)
        except (ValueError, TypeError):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None

    parse.__name__ = expected
    return parse


def gpu_subcommand() -> Subcommand:
    """The ``%catalog gpus`` parser with the finder's filters."""
    parser = magic_parser(
        "%catalog gpus",
        "Find GPU types: a sortable panel with prices, VRAM, availability and CUDA versions.",
    )
    add = parser.add_argument
    add("--min-vram", type=_typed(_vram, "GB as a positive integer, e.g. 40"), metavar="GB")
    add("--cuda", type=_typed(_cuda, "a CUDA version such as 12.4"), metavar="VERSION")
    add("--cloud", type=_typed(_cloud, "SECURE or COMMUNITY"), metavar="SECURE|COMMUNITY")
    add("--dc", type=_typed(_dc, "a data center ID or pattern such as EU-*"), metavar="PATTERN")
    add("--max-price", type=_typed(_price, "USD per GPU-hour, e.g. 2.5"), metavar="USD")
    add("--available", action="store_true", help="only GPU types with stock now")
    add("--count", type=_typed(_vram, "a positive integer"), metavar="N", help="GPUs per pod")
    add(
        "--image",
        default=DEFAULT_IMAGE,
        type=_typed(_image, "a container image such as runpod/pytorch"),
        help=f"image of the %%pod create lines (default {DEFAULT_IMAGE})",
    )
    add_output_argument(parser)

    def build(ns: argparse.Namespace) -> GpuFinderCommand:
        filters = GpuFilters(
            min_vram=ns.min_vram,
            cuda=ns.cuda,
            cloud=ns.cloud,
            dc=ns.dc,
            max_price=ns.max_price,
            available=ns.available,
            count=ns.count,
            image=ns.image,
        )
        return GpuFinderCommand(filters=filters, output=ns.output)

    return Subcommand(parser, build, "gpus (filters: --min-vram --cuda --cloud --dc ...)")


# ---------------------------------------------------------------------------- filtering


def fetch(client: Any, filters: GpuFilters) -> list[Any]:
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


def finder_view(rows: GpuRows) -> Any:
    """The finder's static form (a :class:`~podbook.notebook.display.StaticView`)."""
    from podbook.notebook.catalog import gpu_finder_view
    from podbook.notebook.panels.data import to_wire

    found = [panel_row(to_wire(entry), rows.filters) for entry in rows]
    return gpu_finder_view(found, rows.filters.describe())
