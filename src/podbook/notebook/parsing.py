"""The machinery that parses magic lines into small typed commands.

Each magic family defines its subcommands in its own package (for example
:mod:`podbook.notebook.pods.commands` for ``%pod`` and ``%cluster``) from this module's parts: an argparse parser
that never exits the kernel, shared arguments, and :func:`parse_line`. The line is split
with :func:`shlex.split` (quotes work, ``str.split`` is never used) and a parse error
becomes one :class:`UsageError` line that names the argument and the fix.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NoReturn

from IPython.core.error import UsageError

from podbook.notebook.values import NAME


class HelpShown(Exception):
    """Raised after ``--help`` printed the help text; the magic then returns ``None``."""


class MagicArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser that raises :class:`UsageError` instead of exiting the kernel."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("add_help", True)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        message = echo_safe(_rephrase(message))
        raise UsageError(f"{self.prog}: {message}. See `{self.prog} --help`.")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:
            raise HelpShown()
        self.error(message or "invalid arguments")


_LONG_RUN = re.compile(r"[^\s'\"]{81,}")


def echo_safe(text: str, limit: int = 300) -> str:
    """``text`` that echoes user input, made fit for a one-line error: control characters
    escaped, any run of more than 80 characters cut to 77 + "…", at most ``limit`` long."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    text = _LONG_RUN.sub(lambda match: match.group()[:77] + "…", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rephrase(message: str) -> str:
    """Make argparse's messages name the argument first."""
    if message.startswith("unrecognized arguments: "):
        extra = message.removeprefix("unrecognized arguments: ")
        if extra.startswith("-"):
            return f"unknown argument {extra}"
        return f"unexpected words {extra!r}; quote values that contain spaces"
    if message.startswith("the following arguments are required: "):
        return f"missing {message.removeprefix('the following arguments are required: ')}"
    return message


def split_line(line: str, prog: str) -> list[str]:
    """Split a magic line like a shell would; unbalanced quotes are a usage error."""
    try:
        return shlex.split(line)
    except ValueError as err:
        raise UsageError(f"{prog}: {echo_safe(str(err))} in the line; close the quote.") from None


@dataclass
class Subcommand:
    """A subcommand: its parser and the function that turns parsed args into a command."""

    parser: MagicArgumentParser
    build: Callable[[argparse.Namespace], Any]
    help: str = ""


def magic_parser(prog: str, description: str) -> MagicArgumentParser:
    """A parser for one subcommand: ``%magic verb`` and what it does."""
    return MagicArgumentParser(prog=prog, description=description)


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    """``-o NAME``: also store the result in the user namespace."""
    parser.add_argument(
        "-o", "--output", type=NAME, metavar="NAME", help="store the result in variable NAME"
    )


def verb_subcommands(
    magic: str,
    helps: Mapping[str, str],
    add_arguments: Callable[[MagicArgumentParser, str], object],
    build: Callable[[str, argparse.Namespace], Any],
) -> dict[str, Subcommand]:
    """One subcommand of ``%magic`` per verb of ``helps`` (verb → its help line): a parser
    that the help line describes, with what ``add_arguments(parser, verb)`` adds and then
    ``-o NAME``, whose command is ``build(verb, ns)``."""
    commands = {}
    for verb, help_text in helps.items():
        parser = magic_parser(f"%{magic} {verb}", help_text.capitalize() + ".")
        add_arguments(parser, verb)
        add_output_argument(parser)
        commands[verb] = Subcommand(parser, partial(build, verb), help_text)
    return commands


def add_pod_id_argument(parser: argparse.ArgumentParser) -> None:
    """The positional pod ID."""
    parser.add_argument("pod_id", metavar="POD_ID", help="the pod's ID (see %%pod list)")


def parse_line(magic: str, line: str, subcommands: dict[str, Subcommand]) -> tuple[str, Any]:
    """Parse ``%<magic> <line>`` into ``(subcommand name, command)``.

    Raises :class:`UsageError` for any mistake and :class:`HelpShown` after printing help.
    """
    words = split_line(line, f"%{magic}")
    names = ", ".join(subcommands)
    if not words or words[0] in ("-h", "--help", "help"):
        if words:
            print(usage_summary(magic, subcommands))
            raise HelpShown()
        raise UsageError(f"%{magic}: missing subcommand; use one of: {names}.")
    name, rest = words[0], words[1:]
    sub = subcommands.get(name)
    if sub is None:
        name = echo_safe(repr(name), 100)
        raise UsageError(f"%{magic}: unknown subcommand {name}; use one of: {names}.")
    return name, sub.build(sub.parser.parse_args(rest))


def usage_summary(magic: str, subcommands: dict[str, Subcommand]) -> str:
    """A short listing of the subcommands of ``%<magic>``."""
    rows = [f"  %{magic} {name:<10} {sub.help}" for name, sub in subcommands.items()]
    return "\n".join([f"Usage: %{magic} SUBCOMMAND [--help]", *rows])


def take_cell(magic: str, name: str, command: Any, cell: str | None) -> None:
    """Give ``%%magic name``'s cell body to ``command`` (its ``cell`` field); a cell for a
    subcommand that takes none, or none for one that needs it, is a usage error."""
    takes = hasattr(command, "cell")
    if cell is not None and not takes:
        raise UsageError(
            f"%%{magic} {name} takes no cell; write it as the line `%{magic} {name} ...`"
        )
    if takes:
        if cell is None:
            raise UsageError(
                f"%{magic} {name} needs a cell: write `%%{magic} {name} ...` as the first line "
                "and the cell's body below it"
            )
        command.cell = cell
