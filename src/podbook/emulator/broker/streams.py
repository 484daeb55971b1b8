"""Stream chunks: outputs over the chunk limit are split before they are buffered.

A string output is cut into pieces of at most ``STREAM_CHUNK_MAX_BYTES`` bytes each once
encoded as JSON (quotes and escapes counted; never inside a character), in order. Any other
output whose JSON is larger becomes its JSON text, cut the same way: a reader that needs the object joins those string pieces and parses them
(nothing marks them; handlers that stream large objects should yield smaller ones).
"""

from __future__ import annotations

from typing import Any

import orjson

from podbook.emulator.broker.limits import STREAM_CHUNK_MAX_BYTES


def _encoded(piece: str) -> int:
    """Bytes of ``piece`` as a JSON string (quotes and escapes included)."""
    return len(orjson.dumps(piece))


def _cut_text(text: str, limit: int) -> list[str]:
    """``text`` cut in order into pieces whose JSON encoding is at most ``limit`` bytes."""
    data = text.encode("utf-8")
    pieces: list[str] = []
    start = 0
    while start < len(data):
        size = limit - 2  # the quotes
        while True:
            end = min(start + max(size, 4), len(data))
            while end < len(data) and (data[end] & 0xC0) == 0x80:
                end -= 1  # do not cut a multi-byte character
            piece = data[start:end].decode("utf-8")
            encoded = _encoded(piece)
            if encoded <= limit:
                break
            taken = end - start  # escapes made it longer: take proportionally fewer bytes
            size = min(taken - 1, taken * limit // encoded - 1)
        pieces.append(piece)
        start = end
    return pieces


def split_chunk(output: Any, encoded_size: int, limit: int = STREAM_CHUNK_MAX_BYTES) -> list[Any]:
    """``[output]``, or its pieces when its JSON encoding is over ``limit`` bytes."""
    if encoded_size <= limit:
        return [output]
    text = output if isinstance(output, str) else orjson.dumps(output).decode("utf-8")
    if _encoded(text) <= limit and isinstance(output, str):
        return [output]
    if not isinstance(output, str) and len(text.encode("utf-8")) <= limit:
        return [output]
    return _cut_text(text, limit)
