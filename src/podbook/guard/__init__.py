"""The pod guard: idle stop and a time limit that run *inside* the pod.

A pod created with ``idle_stop`` or ``max_runtime`` (``client.pods.create(...,
idle_stop="30m")``, ``%pod create ... --idle-stop 30m``) starts a small POSIX shell script
(``guard.sh``) beside its own command. The script watches SSH sessions, the pod's Jupyter
kernels and its GPUs, and stops (or terminates) its own pod with the pod-scoped key the
service puts in every pod, so it works with the notebook, the kernel and the laptop gone.
It reports on its own log; :func:`read_status` reads that back. See ``docs/cost-control.md``.
"""

from __future__ import annotations

from podbook.guard.control import extend, keep_running
from podbook.guard.settings import (
    GUARD_ARGS,
    GuardSettings,
    arm,
    format_duration,
    original_args,
    parse_duration,
    settings_of,
)
from podbook.guard.state import GuardStatus, latest, parse_line, read_status

__all__ = [
    "GUARD_ARGS",
    "GuardSettings",
    "GuardStatus",
    "arm",
    "extend",
    "keep_running",
    "latest",
    "parse_line",
    "read_status",
    "format_duration",
    "original_args",
    "parse_duration",
    "settings_of",
]
