"""Running one line of a subcommand magic (``%pod``, ``%catalog``, ``%template`` ...).

Parse the line into a command, give it the cell when it takes one, run its handler inside
the user-facing error conventions (one line; a stopped local emulator is forgotten so the
next call starts it again) and store the result under ``-o NAME``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from podbook.notebook import parsing
from podbook.notebook.errors import user_facing_errors

if TYPE_CHECKING:
    from podbook.notebook.magics import PodMagics
    from podbook.notebook.session import NotebookSession

T = TypeVar("T")

Handler = Callable[["NotebookSession", Any], object]
"""What a subcommand does: ``handler(session, command)`` returns the magic's result."""


def run_line(
    magics: PodMagics,
    magic: str,
    line: str,
    subcommands: Mapping[str, parsing.Subcommand],
    handlers: Mapping[str, Handler],
    cell: str | None = None,
) -> object:
    """Run ``%<magic> <line>`` (``%%<magic>`` with ``cell``); ``None`` after ``--help``."""
    try:
        name, command = parsing.parse_line(magic, line, dict(subcommands))
    except parsing.HelpShown:
        return None
    parsing.take_cell(magic, name, command, cell)
    with user_facing_errors(f"{magic} {name}"), magics.forget_a_stopped_emulator():
        result = handlers[name](magics.session, command)
    return store_output(magics.shell, getattr(command, "output", None), result)


def store_output(shell: Any, output: str | None, result: T) -> T:
    """``-o NAME``: also store ``result`` in the user namespace as ``NAME``; returns it."""
    if output:
        shell.user_ns[output] = result
    return result
