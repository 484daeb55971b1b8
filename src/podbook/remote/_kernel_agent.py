"""The podbook agent: the few functions a pod's kernel runs for :meth:`RemoteKernel.put` and
:meth:`RemoteKernel.get`.

This module is never imported by podbook itself: :mod:`podbook.remote._kernel_vars` sends its
source to the remote kernel, which runs it as the module ``_podbook_agent`` (in
``sys.modules``, so the user's namespace gets no new names). The kernel calls it through
``user_expressions`` of silent execute requests, which Python evaluates directly (no IPython
cell transforms, no history, no execution count).

It therefore uses the standard library only (and IPython's ``publish_display_data``, which
every IPython kernel has) and syntax that old Pythons still parse, so that a kernel on
another Python can at least be told so. Every error it raises has a message meant for the
user, naming the variable.
"""

from __future__ import annotations

import base64
import pickle
import time
from typing import Any

MIME = "application/vnd.podbook.transfer+json"
"""The MIME type of the display messages that carry a value's chunks to the client."""

STALE_SECONDS = 3600.0
"""A transfer left unfinished this long (its client went away) is dropped at the next one."""

_pending: dict[str, list[Any]] = globals().setdefault("_pending", {})  # id -> [started, [bytes]]


def begin(tid: str) -> int:
    """Start receiving the transfer ``tid`` (and drop stale unfinished ones)."""
    now = time.monotonic()
    for key in [key for key, (started, _) in _pending.items() if now - started > STALE_SECONDS]:
        del _pending[key]
    _pending[tid] = [now, []]
    return 0


def chunk(tid: str, text: str) -> int:
    """Add one base64 chunk to the transfer ``tid``; the bytes received so far."""
    entry = _pending.get(tid)
    if entry is None:
        raise RuntimeError("the transfer was lost (did the kernel restart?); send it again")
    entry[1].append(base64.b64decode(text))
    return sum(len(part) for part in entry[1])


def finish(tid: str, namespace: dict[str, Any]) -> int:
    """Unpickle the transfer ``tid`` (``{name: pickled value}``) into ``namespace``; the
    names set. Nothing is set unless every value loads."""
    entry = _pending.pop(tid, None)
    if entry is None:
        raise RuntimeError("the transfer was lost (did the kernel restart?); send it again")
    blobs = pickle.loads(b"".join(entry[1]))
    values: dict[str, Any] = {}
    for name, blob in blobs.items():
        try:
            values[name] = pickle.loads(blob)
        except Exception as exc:
            raise RuntimeError(
                f"{name!r} cannot be unpickled in the pod's kernel ({type(exc).__name__}: {exc});"
                " send only values whose types the pod can import"
            ) from None
    namespace.update(values)
    return len(values)


def send(names: list[str], namespace: dict[str, Any], chunk_size: int, limit: int) -> int:
    """Pickle ``namespace[name]`` for each of ``names`` and publish ``{name: pickled value}``
    pickled, in base64 chunks of ``chunk_size`` bytes, as display messages of :data:`MIME`;
    the number of chunks. Refuses more than ``limit`` pickled bytes."""
    from IPython.display import publish_display_data

    blobs = {}
    total = 0
    for name in names:
        if name not in namespace:
            raise NameError(f"name {name!r} is not defined in the pod's kernel")
        try:
            blob = pickle.dumps(namespace[name], protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            kind = type(namespace[name]).__name__
            raise RuntimeError(
                f"{name!r} (a {kind}) cannot be pickled in the pod's kernel "
                f"({type(exc).__name__}: {exc}); get a picklable value instead"
            ) from None
        total += len(blob)
        if total > limit:
            raise RuntimeError(
                f"{name!r} takes the values past the transfer limit of {limit:,} bytes "
                "pickled; get fewer or smaller values, or write them to a file on the pod"
            )
        blobs[name] = blob
    payload = pickle.dumps(blobs, protocol=pickle.HIGHEST_PROTOCOL)
    count = max(1, -(-len(payload) // chunk_size))
    for index in range(count):
        part = payload[index * chunk_size : (index + 1) * chunk_size]
        text = base64.b64encode(part).decode("ascii")
        publish_display_data({MIME: {"index": index, "count": count, "data": text}})
    return count
