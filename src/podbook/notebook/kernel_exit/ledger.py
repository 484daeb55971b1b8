"""The pods this kernel created, each with its own ``--on-exit`` (if any)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CreatedPod:
    """A pod this kernel created: where it lives (``settings`` of the client that created
    it) and what to do with it when the kernel ends (``None``: ``PodMagics.on_exit``)."""

    id: str
    name: str
    settings: Any
    on_exit: str | None = None


class Ledger:
    """Thread-safe record of the pods created in this kernel, in creation order."""

    def __init__(self) -> None:
        self._pods: dict[str, CreatedPod] = {}
        self._lock = threading.Lock()

    def add(self, pod: Any, settings: Any, on_exit: str | None = None) -> CreatedPod:
        """Remember ``pod`` (a ``Pod`` or a wire dict) created through a client with
        ``settings``."""

        def field(name: str) -> str:
            value = pod.get(name) if isinstance(pod, dict) else getattr(pod, name, None)
            return str(value or "")

        entry = CreatedPod(field("id"), field("name"), settings, on_exit)
        with self._lock:
            self._pods[entry.id] = entry
        return entry

    def pods(self) -> list[CreatedPod]:
        """Every pod remembered, oldest first."""
        with self._lock:
            return list(self._pods.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)
