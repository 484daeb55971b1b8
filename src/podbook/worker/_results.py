"""What a worker posts: results, errors and stream chunks, as the worker protocol has them.

- a returned value ``X`` → ``{"output": X}``; a returned dict's ``error`` key fails the job
  (``{"output": rest, "error": msg}``) and its ``refresh_worker`` key asks for a fresh
  worker (``"stopPod": true``), as with ``runpod`` handlers;
- a raised exception → ``{"error": "<JSON text>"}`` with ``error_type``, ``error_message``,
  ``error_traceback`` (the handler's frames only), ``hostname`` and ``worker_id``;
- a streamed chunk → ``{"output": chunk}``; a :class:`Chunk` also carries ``metrics``
  (``{"output": ..., "metrics": {...}}``, the shape of the seed's stream sample).
"""

from __future__ import annotations

import json
import socket
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Chunk", "chunk_body", "chunk_error", "error_payload", "result_payload"]

_WORKER_PACKAGE = str(Path(__file__).resolve().parent)


@dataclass(frozen=True)
class Chunk:
    """A streamed chunk with per-chunk ``metrics`` posted beside its ``output``.

    Yield ``Chunk(output, metrics={...})`` from a generator handler to give each item of
    ``/stream`` the seed's ``{"output": ..., "metrics": ...}`` shape. Plain values stream
    as ``{"output": value}``. Aggregated stream results hold the outputs only.
    """

    output: Any
    metrics: dict[str, Any] | None = field(default=None)


def chunk_body(item: Any) -> tuple[Any, dict[str, Any]]:
    """``(output, body to post)`` of one yielded item."""
    if isinstance(item, Chunk):
        body: dict[str, Any] = {"output": item.output}
        if item.metrics is not None:
            body["metrics"] = item.metrics
        return item.output, body
    return item, {"output": item}


def chunk_error(output: Any) -> str | None:
    """The message of a yielded ``{"error": ...}`` dict, which ends the stream as a failure."""
    if isinstance(output, dict) and output.get("error"):
        error = output["error"]
        return error if isinstance(error, str) else json.dumps(error, default=str)
    return None


def result_payload(value: Any) -> tuple[dict[str, Any], bool]:
    """``(payload, refresh)`` for a handler's return value (``runpod`` semantics)."""
    refresh = False
    payload: dict[str, Any]
    if isinstance(value, dict):
        rest = dict(value)
        error = rest.pop("error", None)
        refresh = bool(rest.pop("refresh_worker", False))
        payload = {"output": rest} if rest else {}
        if error:
            payload["error"] = error if isinstance(error, str) else json.dumps(error, default=str)
    else:
        payload = {"output": value}
    return payload, refresh


def _handler_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` without the runner's own frames."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not str(Path(frame.filename).resolve()).startswith(_WORKER_PACKAGE)
        and "/asyncio/" not in frame.filename
        and "/concurrent/futures/" not in frame.filename
    ]
    lines = ["Traceback (most recent call last):\n"]
    lines.extend(traceback.format_list(frames))
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "".join(lines)


def error_type_name(exc: BaseException) -> str:
    """``ValueError`` for builtins, ``package.module.Error`` otherwise."""
    cls = type(exc)
    if cls.__module__ in ("builtins", "__main__"):
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def error_payload(exc: BaseException, worker_id: str) -> dict[str, Any]:
    """The result body of a handler that raised ``exc``."""
    info = {
        "error_type": error_type_name(exc),
        "error_message": str(exc),
        "error_traceback": _handler_traceback(exc),
        "hostname": socket.gethostname(),
        "worker_id": worker_id,
    }
    return {"error": json.dumps(info, ensure_ascii=False)}
