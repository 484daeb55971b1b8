"""The worker runner: serve a handler against any broker that speaks the worker protocol.

- ``podbook worker handler.py[:fn] --endpoint ID [--concurrency N] [--url URL]`` (CLI);
- :func:`serve` — ``podbook.serve(fn, endpoint=ID, concurrency=N)`` from a notebook;
- :func:`progress` — a progress update from inside a handler;
- :class:`Chunk` — a streamed chunk with per-chunk ``metrics``;
- :func:`openai_handler` — a text generator as an OpenAI-compatible handler.

Handlers follow the ``runpod`` convention: ``fn(job)`` gets the whole job object; sync,
async, generator and async generator functions all work. Only httpx is used to talk to
the broker: nothing here imports the emulator.
"""

from __future__ import annotations

from podbook import lazy_getattr

__all__ = [
    "Chunk",
    "Runner",
    "ServedWorker",
    "WorkerConfig",
    "load_handler",
    "openai_handler",
    "progress",
    "serve",
]

_HOMES = {
    "Chunk": "podbook.worker.results",
    "Runner": "podbook.worker.runner",
    "ServedWorker": "podbook.worker.background",
    "WorkerConfig": "podbook.worker.config",
    "load_handler": "podbook.worker.handlers",
    "openai_handler": "podbook.worker.openai_compat",
    "progress": "podbook.worker.reporting",
    "serve": "podbook.worker.background",
}


__getattr__ = lazy_getattr(globals(), _HOMES)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
