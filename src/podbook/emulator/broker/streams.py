"""Stream chunks: outputs over the chunk limit are split before they are buffered.

A string output is cut into pieces of at most ``STREAM_CHUNK_MAX_BYTES`` UTF-8 bytes (never
inside a character), in order. Any other output whose JSON is larger becomes its JSON text,
cut the same way: a reader that needs the object joins those string pieces and parses them
(nothing marks them; handlers that stream large objects should yield smaller ones).
"""

from __future__ import annotations

from typing import Any

import orjson

from podbook.emulator.broker.limits import STREAM_CHUNK_MAX_BYTES


def _cut_text(text: str, limit: int) -> list[str]:
    data = text.encode("utf-8")
    pieces: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + limit, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end -= 1  # do not cut a multi-byte character
        pieces.append(data[start:end].decode("utf-8"))
        start = end
    return pieces


def split_chunk(output: Any, encoded_size: int, limit: int = STREAM_CHUNK_MAX_BYTES) -> list[Any]:
    """``[output]``, or its pieces when its encoded size is over ``limit``."""
    if encoded_size <= limit:
        return [output]
    if isinstance(output, str):
        if len(output.encode("utf-8")) <= limit:
            return [output]
        return _cut_text(output, limit)
    text = orjson.dumps(output).decode("utf-8")
    if len(text.encode("utf-8")) <= limit:
        return [output]
    return _cut_text(text, limit)
