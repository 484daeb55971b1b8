"""The bodies of ``%template``, ``%volume``, ``%registry`` and ``%sshkey`` (``PodMagics``
delegates here): parse, run inside the user-facing error conventions, store ``-o NAME``."""

from __future__ import annotations

from functools import cache
from typing import Any

from podbook.notebook import parsing
from podbook.notebook.account.commands import SUBCOMMANDS
from podbook.notebook.errors import user_facing_errors


@cache
def _subcommands(magic: str) -> dict[str, parsing.Subcommand]:
    return SUBCOMMANDS[magic]()


def run(magics: Any, magic: str, line: str) -> Any:
    """Run ``%<magic> <line>`` for one of the account magics; returns the object."""
    from podbook.notebook.account.handlers import HANDLERS

    try:
        name, command = parsing.parse_line(magic, line, _subcommands(magic))
    except parsing.HelpShown:
        return None
    with user_facing_errors(f"{magic} {name}"), magics._forget_a_stopped_emulator():
        result = HANDLERS[magic][name](magics.session, command)
    if command.output:
        magics.shell.user_ns[command.output] = result
    return result
