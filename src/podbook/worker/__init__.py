"""The worker runner: serve a handler against any broker that speaks the worker protocol.

- ``podbook worker handler.py[:fn] --endpoint ID [--concurrency N] [--url URL]`` (CLI);
- :func:`serve` — ``podbook.serve(fn, endpoint=ID, concurrency=N)`` from a notebook;
- :func:`progress` — a progress update from inside a handler;
- :class:`Chunk` — a streamed chunk with per-chunk ``metrics``;
- :func:`openai_handler` — a text generator as an OpenAI-compatible handler.

Handlers follow the ``runpod`` convention: ``fn(job)`` gets the whole job object; sync,
async, generator and async generator functions all work. Only httpx is used to talk to
the broker: nothing here imports the emulator. The names above are the public API (the docs'
API reference shows them); the runner, its configuration and the protocol are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podbook import _lazy_dir, _lazy_getattr

if TYPE_CHECKING:
    from podbook.worker._background import ServedWorker, serve
    from podbook.worker._openai_compat import openai_handler
    from podbook.worker._reporting import progress
    from podbook.worker._results import Chunk

__all__ = [
    "Chunk",
    "ServedWorker",
    "openai_handler",
    "progress",
    "serve",
]

_HOMES = {
    "Chunk": "podbook.worker._results",
    "ServedWorker": "podbook.worker._background",
    "openai_handler": "podbook.worker._openai_compat",
    "progress": "podbook.worker._reporting",
    "serve": "podbook.worker._background",
}


__getattr__ = _lazy_getattr(globals(), _HOMES)
__dir__ = _lazy_dir(globals(), __all__)
