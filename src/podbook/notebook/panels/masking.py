"""Mask secret-looking values before anything reaches a widget trait or an output.

The rule itself (``JUPYTER_PASSWORD``, ``PUBLIC_KEY``, any name containing ``KEY``,
``TOKEN``, ``SECRET`` or ``PASSWORD``) lives in :mod:`podbook.api.secrets`, shared with the
models' reprs, so panels and reprs can never disagree.
"""

from __future__ import annotations

from typing import Any

from podbook.api.secrets import MASK, is_secret_name, mask_env

__all__ = ["MASK", "is_secret_name", "mask_env", "mask_pod"]


def mask_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pod dict whose ``env`` is masked (the input is not modified)."""
    if not isinstance(pod.get("env"), dict):
        return dict(pod)
    return {**pod, "env": mask_env(pod["env"])}
