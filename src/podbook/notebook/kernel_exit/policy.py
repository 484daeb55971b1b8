"""Which ``on_exit`` applies when nothing was configured: ``PODBOOK_ON_EXIT``, else ``stop``
in a headless run, else ``warn``.

A headless run is an IPython kernel that no Jupyter server started (nbclient, papermill,
``jupyter execute``, ``nbconvert --execute``): jupyter_server puts ``JPY_SESSION_NAME`` (the
notebook's path) in the environment of every kernel it starts, and such a kernel's shell has
a ``kernel``. Terminal IPython is interactive: its user sees the warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ON_EXIT_CHOICES: tuple[str, ...] = ("warn", "stop", "terminate", "keep")
"""What may happen to a kernel's pods when it ends."""
ENV_VAR = "PODBOOK_ON_EXIT"
SESSION_VAR = "JPY_SESSION_NAME"


def is_headless(shell: Any, environ: Mapping[str, str]) -> bool:
    """Whether ``shell`` runs in a kernel that no Jupyter server started."""
    return getattr(shell, "kernel", None) is not None and not environ.get(SESSION_VAR)


def default_on_exit(shell: Any, environ: Mapping[str, str]) -> tuple[str, str]:
    """The default ``on_exit`` and a one-line note ("" when none) when ``PODBOOK_ON_EXIT``
    holds something else than one of :data:`ON_EXIT_CHOICES`."""
    fallback = "stop" if is_headless(shell, environ) else "warn"
    raw = environ.get(ENV_VAR, "")
    value = raw.strip().lower()
    if not value:
        return fallback, ""
    if value in ON_EXIT_CHOICES:
        return value, ""
    choices = ", ".join(ON_EXIT_CHOICES)
    shown = raw if len(raw) <= 40 else raw[:39] + "…"
    note = (
        f"podbook: {ENV_VAR}={shown!r} is not one of {choices}; using {fallback!r} "
        f"until you fix the variable"
    )
    return fallback, note
