"""Hooks told of every pod this process creates through a client.

The notebook's kernel-exit watch registers one, so a pod made with ``podbook.Client()`` in a
cell is settled with the kernel as one made by ``%pod create`` is. Nothing here knows of
IPython.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from podbook.api.pods import Pod
    from podbook.client.config import Settings

PodCreated = Callable[["Pod", "Settings"], None]
"""A hook: called with the new pod and the settings of the client that created it."""

_hooks: list[PodCreated] = []
_lock = threading.Lock()
_log = logging.getLogger(__name__)


def on_pod_created(hook: PodCreated) -> Callable[[], None]:
    """Call ``hook(pod, settings)`` after every pod this process creates through a
    :class:`~podbook.client.Client` or :class:`~podbook.client.AsyncClient`; returns the
    function that removes the hook again. A hook that raises is logged and skipped."""
    with _lock:
        _hooks.append(hook)

    def remove() -> None:
        with _lock:
            if hook in _hooks:
                _hooks.remove(hook)

    return remove


def announce(pod: Pod, settings: Settings) -> None:
    """Tell every hook of ``pod``, just created through a client with ``settings``."""
    with _lock:
        hooks = list(_hooks)
    for hook in hooks:
        try:
            hook(pod, settings)
        except Exception:  # a hook's failure must not turn a created pod into an error
            _log.exception("a pod-created hook failed for pod %s", getattr(pod, "id", "?"))
