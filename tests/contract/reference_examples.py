"""The recorded answers of the REST reference document: every example of every response.

For each operation, status and media type of ``reference/runpod-rest-v2.openapi.json`` (with
``$ref`` responses and headers resolved), each named example (``examples``) or lone
``example`` is one :class:`RecordedAnswer`: the status, the headers the document gives an
example for (``Retry-After``, ``RateLimit``, ...), and the body.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
from reference_docs import rest_reference
from reference_steps import METHODS

__all__ = ["RecordedAnswer", "recorded_answers", "resolve", "success_example_names"]


def resolve(document: dict[str, Any], node: Any) -> Any:
    """``node`` with its ``$ref`` (to ``#/...`` of ``document``) followed, repeatedly."""
    while isinstance(node, dict) and "$ref" in node:
        target: Any = document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


@dataclass(frozen=True)
class RecordedAnswer:
    """One example answer of one operation, as the document records it."""

    operation: str
    status: int
    media_type: str
    name: str
    value: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """A test id: ``getPod-200-pod``."""
        return f"{self.operation}-{self.status}-{self.name}"

    @property
    def is_success(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status < 300

    def body(self) -> bytes:
        """The body as sent: a text example (SSE) as is, anything else as JSON."""
        if isinstance(self.value, str) and not self.media_type.endswith("json"):
            return self.value.encode()
        return json.dumps(self.value).encode()

    def response(self) -> httpx.Response:
        """The answer as an ``httpx.Response``."""
        return httpx.Response(
            self.status,
            headers={**self.headers, "Content-Type": self.media_type},
            content=self.body(),
        )


def _header_example(document: dict[str, Any], header: Any) -> str | None:
    header = resolve(document, header)
    if "example" in header:
        return str(header["example"])
    schema = resolve(document, header.get("schema", {}))
    examples = schema.get("examples") or header.get("examples")
    if isinstance(examples, list) and examples:
        return str(examples[0])
    return None


def _named_examples(content: dict[str, Any]) -> list[tuple[str, Any]]:
    if "examples" in content:
        return [(name, example["value"]) for name, example in content["examples"].items()]
    if "example" in content:
        return [("example", content["example"])]
    return []


def recorded_answers() -> list[RecordedAnswer]:
    """Every example answer of every operation of the reference, in document order."""
    document = rest_reference()
    answers = []
    for item in document["paths"].values():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            for status, response in operation["responses"].items():
                if not status.isdigit():
                    continue  # "default" carries no example
                response = resolve(document, response)
                headers = {
                    name: value
                    for name, header in (response.get("headers") or {}).items()
                    if (value := _header_example(document, header)) is not None
                }
                for media_type, content in (response.get("content") or {}).items():
                    for name, value in _named_examples(content):
                        answers.append(
                            RecordedAnswer(
                                operation["operationId"],
                                int(status),
                                media_type,
                                name,
                                value,
                                headers,
                            )
                        )
    return answers


def success_example_names() -> dict[str, list[str]]:
    """``operationId`` → the names of its 2xx examples (``Prefer: example=NAME`` in Prism)."""
    names: dict[str, list[str]] = {}
    for answer in recorded_answers():
        if answer.is_success:
            names.setdefault(answer.operation, []).append(answer.name)
    return names
