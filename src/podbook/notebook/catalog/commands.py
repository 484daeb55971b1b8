"""The ``%catalog`` subcommands: ``gpus`` with the finder's filters, ``cpus``,
``datacenters``; and the create request a finder row stands for."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from podbook.notebook.parsing import Subcommand, add_output_argument, magic_parser
from podbook.notebook.values import positive_int, value_type

if TYPE_CHECKING:
    from podbook.api.pods import CreatePodRequest

CATALOG_KINDS = ("gpus", "cpus", "datacenters")
DEFAULT_IMAGE = "runpod/pytorch"
CLOUDS = ("SECURE", "COMMUNITY")
_CUDA = re.compile(r"^\d+(\.\d+)?$")
_DC = re.compile(r"^[A-Za-z0-9*?\[\]-]+$")


@dataclass(frozen=True)
class CatalogCommand:
    """``%catalog cpus|datacenters``."""

    kind: str
    output: str | None = None


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

    def create_request(self, gpu_id: str) -> CreatePodRequest:
        """The request of the pod a finder row creates: ``%pod create --gpu ID[:COUNT]
        --image IMAGE [--cloud CLOUD]``, the pod named as that line would name it."""
        from podbook.api.pods import CreatePodRequest
        from podbook.notebook.pods.commands import generate_pod_name
        from podbook.notebook.request import request_model

        gpu = (
            {"id": gpu_id, "count": self.count} if self.count and self.count > 1 else {"id": gpu_id}
        )
        return request_model(
            CreatePodRequest, name=generate_pod_name(), image=self.image, gpu=gpu, cloud=self.cloud
        )


@dataclass(frozen=True)
class GpuFinderCommand:
    """``%catalog gpus [filters]``."""

    filters: GpuFilters
    output: str | None = None
    kind: str = "gpus"


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


def _finder_command(ns: argparse.Namespace) -> GpuFinderCommand:
    """Each of the finder's filters is the flag of its name."""
    filters = GpuFilters(**{f.name: getattr(ns, f.name) for f in fields(GpuFilters)})
    return GpuFinderCommand(filters=filters, output=ns.output)


def gpu_subcommand() -> Subcommand:
    """The ``%catalog gpus`` parser with the finder's filters."""
    parser = magic_parser(
        "%catalog gpus",
        "Find GPU types: a sortable panel with prices, VRAM, availability and CUDA versions.",
    )
    add = parser.add_argument
    add(
        "--min-vram",
        type=value_type(positive_int, "GB as a positive integer, e.g. 40"),
        metavar="GB",
    )
    add("--cuda", type=value_type(_cuda, "a CUDA version such as 12.4"), metavar="VERSION")
    add("--cloud", type=value_type(_cloud, "SECURE or COMMUNITY"), metavar="SECURE|COMMUNITY")
    add(
        "--dc",
        type=value_type(_dc, "a data center ID or pattern such as EU-*"),
        metavar="PATTERN",
    )
    add("--max-price", type=value_type(_price, "USD per GPU-hour, e.g. 2.5"), metavar="USD")
    add("--available", action="store_true", help="only GPU types with stock now")
    add(
        "--count",
        type=value_type(positive_int, "a positive integer"),
        metavar="N",
        help="GPUs per pod",
    )
    add(
        "--image",
        default=DEFAULT_IMAGE,
        type=value_type(_image, "a container image such as runpod/pytorch"),
        help=f"image of the %%pod create lines (default {DEFAULT_IMAGE})",
    )
    add_output_argument(parser)
    return Subcommand(parser, _finder_command, "gpus (filters: --min-vram --cuda --cloud --dc ...)")


def build_subcommands() -> dict[str, Subcommand]:
    """The ``%catalog`` subcommands, by name."""
    commands = {"gpus": gpu_subcommand()}
    for kind in CATALOG_KINDS[1:]:
        parser = magic_parser(f"%catalog {kind}", f"Show the catalog of {kind}.")
        add_output_argument(parser)
        commands[kind] = Subcommand(
            parser, lambda ns, kind=kind: CatalogCommand(kind=kind, output=ns.output), kind
        )
    return commands
