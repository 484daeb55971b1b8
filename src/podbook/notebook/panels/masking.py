"""Mask secret-looking values before anything reaches a widget trait or an output."""

from __future__ import annotations

from typing import Any

MASK = "••••••"
_EXACT = frozenset({"JUPYTER_PASSWORD", "PUBLIC_KEY"})
_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def is_secret_name(name: str) -> bool:
    """True for env names whose values must never be shown."""
    upper = name.upper()
    return upper in _EXACT or any(marker in upper for marker in _MARKERS)


def mask_env(env: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of ``env`` with every secret-looking value replaced by :data:`MASK`."""
    return {key: (MASK if is_secret_name(key) else value) for key, value in (env or {}).items()}


def mask_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pod dict whose ``env`` is masked (the input is not modified)."""
    if not isinstance(pod.get("env"), dict):
        return dict(pod)
    return {**pod, "env": mask_env(pod["env"])}
