"""Stream chunks: outputs over the chunk limit are split before they are buffered, and
``/stream`` reads, draining or from a resumable cursor.

A string output is cut into pieces of at most ``STREAM_CHUNK_MAX_BYTES`` bytes each once
encoded as JSON (quotes and escapes counted; never inside a character), in order. Any other
output whose JSON is larger becomes its JSON text, cut the same way: a reader that needs the object joins those string pieces and parses them
(nothing marks them; handlers that stream large objects should yield smaller ones).

Cursor (an emulator extension): every chunk of a job has an index (0, 1, ... over the job's
whole life; a retry's chunks go on after the earlier run's). A plain read drains and answers
the service's body unchanged. A read with ``?cursor=N`` answers every chunk from ``N`` on plus
``cursor`` (the index of its first item) and ``next`` (the index after its last), and drains
nothing; it only forgets the chunks before ``N``, which the reader thereby acknowledged. So
a reader whose answer was lost asks again with the same ``N`` and gets the same chunks: none
lost, none twice. A cursor answer holds at most :data:`CURSOR_MAX_ITEMS` chunks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from podbook.emulator.broker.limits import STREAM_CHUNK_MAX_BYTES

if TYPE_CHECKING:
    from podbook.emulator.broker.jobs import Job

CURSOR_MAX_ITEMS = 500
"""Chunks in one cursor answer at most (the rest come with the next read): a backlog is
delivered in pieces, so a link that keeps dropping long answers still makes progress."""


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


def has_chunks_for(job: Job, cursor: int | None) -> bool:
    """Whether a ``/stream`` read from ``cursor`` (None: a draining read) has chunks to answer."""
    if cursor is None:
        return bool(job.chunks)
    return job.chunk_base + len(job.chunks) > cursor


def read_chunks(job: Job, cursor: int | None) -> dict[str, Any]:
    """The ``/stream`` body: ``status`` and ``stream`` (the items).

    ``cursor`` None drains the buffer and answers exactly the service's body. A number
    answers the chunks from that index on (from the oldest kept, when it is older; at most
    :data:`CURSOR_MAX_ITEMS`), forgets those before it, and adds ``cursor`` (index of the
    first item) and ``next`` (the index to ask for next): the fields that tell a client the
    server offers the cursor.
    """
    if cursor is None:
        items, job.chunks = job.chunks, []
        job.chunk_base += len(items)
        return {"status": job.status, "stream": items}
    acknowledged = min(max(cursor - job.chunk_base, 0), len(job.chunks))
    if acknowledged:
        del job.chunks[:acknowledged]
        job.chunk_base += acknowledged
    items = job.chunks[:CURSOR_MAX_ITEMS]
    first = job.chunk_base
    return {"status": job.status, "stream": items, "cursor": first, "next": first + len(items)}


def parse_cursor(raw: str | None) -> int | None:
    """The ``cursor`` query parameter: None when absent, else a non-negative integer;
    ``ValueError`` (a one-line reason) otherwise."""
    if raw is None:
        return None
    text = raw.strip()
    if not text.isdigit() or not text.isascii() or len(text) > 18:
        raise ValueError(
            f"cursor must be a non-negative integer (the 'next' of the previous /stream "
            f"answer), not {raw[:40]!r}"
        )
    return int(text)
