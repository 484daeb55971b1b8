"""The path convertors of the queue routes: ``{endpoint_id:endpoint}`` and
``{path:openai_other}``."""

from __future__ import annotations

import re

from starlette.convertors import CONVERTOR_TYPES, Convertor, register_url_convertor

from podbook.emulator.broker.endpoints import RESERVED_IDS

KNOWN_OPENAI_ROUTES = {"v1/chat/completions": "POST", "v1/completions": "POST", "v1/models": "GET"}
"""The routes the service's vLLM worker serves, each with its one method (405 otherwise)."""


class EndpointIdConvertor(Convertor[str]):
    """Path convertor ``{endpoint_id:endpoint}``: an endpoint id, never a REST prefix."""

    regex = (
        "(?!(?:"
        + "|".join(re.escape(word) for word in sorted(RESERVED_IDS))
        + ")(?:/|$))[A-Za-z0-9][A-Za-z0-9_-]*"
    )

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


def register_endpoint_convertor() -> None:
    """Make ``{name:endpoint}`` available in route paths (idempotent)."""
    if "endpoint" not in CONVERTOR_TYPES:
        register_url_convertor("endpoint", EndpointIdConvertor())


class OtherOpenAIPath(Convertor[str]):
    """Path convertor ``{path:openai_other}``: any path but the :data:`KNOWN_OPENAI_ROUTES`."""

    regex = "(?!(?:" + "|".join(re.escape(p) for p in KNOWN_OPENAI_ROUTES) + ")$).+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


def register_convertors() -> None:
    """Make ``{name:endpoint}`` and ``{path:openai_other}`` available in route paths
    (idempotent)."""
    if "endpoint" not in CONVERTOR_TYPES:
        register_url_convertor("endpoint", EndpointIdConvertor())
    if "openai_other" not in CONVERTOR_TYPES:
        register_url_convertor("openai_other", OtherOpenAIPath())
