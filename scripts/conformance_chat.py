"""The OpenAI-compatible handler that ``scripts/conformance.py`` fuzzes ``/openai`` against.

:func:`podbook.openai_handler` (the request checks the queue document describes) over a
generator that answers three words at once, whatever ``max_tokens`` asks for, so that no
generated request keeps the run waiting.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from podbook import openai_handler


def three_words(prompt_or_messages: Any, params: dict[str, Any]) -> Iterator[str]:
    """A short reply with no delay."""
    yield from ("conformance", " says", " hello")


handler = openai_handler(three_words, model="conformance")
