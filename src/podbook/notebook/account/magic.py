"""The bodies of ``%template``, ``%volume``, ``%registry`` and ``%sshkey`` (``PodMagics``
delegates here): parse, run inside the user-facing error conventions, store ``-o NAME``."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from podbook.notebook.account.commands import SUBCOMMANDS
from podbook.notebook.dispatch import run_line

if TYPE_CHECKING:
    from podbook.notebook.magics import PodMagics
    from podbook.notebook.parsing import Subcommand


@cache
def _subcommands(magic: str) -> dict[str, Subcommand]:
    return SUBCOMMANDS[magic]()


def run(magics: PodMagics, magic: str, line: str) -> object:
    """Run ``%<magic> <line>`` for one of the account magics; returns the object."""
    from podbook.notebook.account.handlers import HANDLERS

    return run_line(magics, magic, line, _subcommands(magic), HANDLERS[magic])
