"""The body of ``%catalog`` (``PodMagics`` delegates here)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from podbook.notebook.catalog.commands import build_subcommands
from podbook.notebook.dispatch import run_line

if TYPE_CHECKING:
    from podbook.notebook.magics import PodMagics
    from podbook.notebook.parsing import Subcommand


@cache
def _subcommands() -> dict[str, Subcommand]:
    return build_subcommands()


def catalog(magics: PodMagics, line: str) -> object:
    """Run ``%catalog <line>``; returns the rows."""
    from podbook.notebook.catalog.handlers import HANDLERS

    return run_line(magics, "catalog", line, _subcommands(), HANDLERS)
