"""Parsers of ``%%chat ENDPOINT [flags]`` and ``%chat history|reset``, and their commands.

Flag values are checked here, so a bad one names the flag and the accepted range before
anything is sent (one :class:`UsageError` line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from podbook.notebook.parsing import (
    MagicArgumentParser,
    Subcommand,
    add_output_argument,
    magic_parser,
    split_line,
    verb_subcommands,
)
from podbook.notebook.values import POSITIVE_INT, value_type


def _temperature(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 2.0:
        raise ValueError(text)
    return value


TEMPERATURE = value_type(_temperature, "a number from 0 to 2")


@dataclass(frozen=True)
class ChatCommand:
    """``%%chat ENDPOINT ...``: where to send the cell's message, and how."""

    endpoint_id: str
    model: str | None = None
    system: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    output: str | None = None


@dataclass(frozen=True)
class ConversationCommand:
    """``%chat history [ENDPOINT]`` or ``%chat reset [ENDPOINT | --all]``."""

    verb: str
    endpoint_id: str | None = None
    all: bool = False
    output: str | None = None


def build_chat_parser() -> MagicArgumentParser:
    """The parser of the ``%%chat`` line."""
    parser = magic_parser(
        "%%chat",
        "Send the cell (your message; {var} is expanded) to an endpoint's OpenAI-compatible "
        "route and stream the reply into a chat panel. The conversation goes on across "
        "cells for each endpoint (%chat history, %chat reset).",
    )
    parser.add_argument("endpoint_id", metavar="ENDPOINT", help="the endpoint's ID, e.g. chat-demo")
    parser.add_argument("--model", metavar="M", help="the model to ask (default: the worker's)")
    parser.add_argument(
        "--system", metavar="TEXT", help="the system message (kept for this endpoint's chat)"
    )
    parser.add_argument("--temperature", type=TEMPERATURE, metavar="T", help="0 to 2")
    parser.add_argument(
        "--max-tokens", type=POSITIVE_INT, metavar="N", help="most tokens in the reply"
    )
    add_output_argument(parser)
    return parser


def parse_chat_line(line: str, parser: MagicArgumentParser) -> ChatCommand:
    """The :class:`ChatCommand` of a ``%%chat`` line (``HelpShown`` after ``--help``)."""
    ns = parser.parse_args(split_line(line, parser.prog))
    params = {
        key: value
        for key, value in (("temperature", ns.temperature), ("max_tokens", ns.max_tokens))
        if value is not None
    }
    return ChatCommand(
        endpoint_id=ns.endpoint_id,
        model=ns.model,
        system=ns.system,
        params=params,
        output=ns.output,
    )


def build_conversation_subcommands() -> dict[str, Subcommand]:
    """The ``%chat`` subcommands, by name."""
    helps = {
        "history": "show the conversation with an endpoint (default: the last one chatted with)",
        "reset": "forget the conversation with an endpoint (its system message too)",
    }

    def add_arguments(parser: MagicArgumentParser, verb: str) -> None:
        parser.add_argument("endpoint_id", metavar="ENDPOINT", nargs="?", help="the endpoint's ID")
        if verb == "reset":
            parser.add_argument("--all", action="store_true", help="every endpoint's conversation")

    return verb_subcommands(
        "chat",
        helps,
        add_arguments,
        lambda verb, ns: ConversationCommand(
            verb=verb, endpoint_id=ns.endpoint_id, all=getattr(ns, "all", False), output=ns.output
        ),
    )
