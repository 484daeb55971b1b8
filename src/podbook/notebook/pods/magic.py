"""The bodies of ``%pod`` and ``%cluster`` (``PodMagics`` delegates here)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from podbook.notebook.dispatch import run_line
from podbook.notebook.pods.commands import build_cluster_subcommands, build_pod_subcommands

if TYPE_CHECKING:
    from podbook.notebook.magics import PodMagics
    from podbook.notebook.parsing import Subcommand


@cache
def _subcommands(magic: str) -> dict[str, Subcommand]:
    builders = {"pod": build_pod_subcommands, "cluster": build_cluster_subcommands}
    return builders[magic]()


def pod(magics: PodMagics, line: str, cell: str | None = None) -> object:
    """Run ``%pod <line>`` (``%%pod`` with ``cell``); returns the pod, list or result."""
    from podbook.notebook.pods.handlers import POD_HANDLERS

    return run_line(magics, "pod", line, _subcommands("pod"), POD_HANDLERS, cell)


def cluster(magics: PodMagics, line: str) -> object:
    """Run ``%cluster <line>``; returns the cluster."""
    from podbook.notebook.pods.handlers import CLUSTER_HANDLERS

    return run_line(magics, "cluster", line, _subcommands("cluster"), CLUSTER_HANDLERS)
