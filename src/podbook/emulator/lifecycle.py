"""Pod lifecycle: statuses derived from stored timestamps, and the action table.

A pod stores its *phase*, not its status: ``{"kind": "boot", "since": t, "provisionFor": p,
"startFor": s}`` (placed at ``t``; PROVISIONING for ``p`` seconds, then STARTING for ``s``,
then RUNNING), ``{"kind": "exited", "since": t}`` or ``{"kind": "error", "since": t}``. The
status is computed at read time, so no timer thread is needed and a restarted emulator
resumes every lifecycle where the clock says it is.

Action table (reference document), reconciled with the seed: the seed's creation example
shows a PROVISIONING pod with ``actions`` = ``start``, ``terminate``, and the seed wins where
it speaks, so a PROVISIONING pod *lists* ``start`` and ``terminate``; the reference allows
``stop`` and ``terminate`` while PROVISIONING, so ``stop`` is accepted there too (not
listed). ``start`` while PROVISIONING is a no-op (the pod is already on its way to RUNNING).
Otherwise as the reference says: STARTING allows ``stop`` and ``terminate``; RUNNING
``stop``, ``restart``, ``terminate``; EXITED and ERROR ``start`` and ``terminate``. Anything
else is 409. A locked pod refuses ``stop`` and ``restart`` (409) until it is unlocked.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from podbook.emulator.problems import Problem

PROVISIONING = "PROVISIONING"
STARTING = "STARTING"
RUNNING = "RUNNING"
EXITED = "EXITED"
ERROR = "ERROR"

ACTIONS: dict[str, tuple[str, ...]] = {
    PROVISIONING: ("start", "terminate"),
    STARTING: ("stop", "terminate"),
    RUNNING: ("stop", "restart", "terminate"),
    EXITED: ("start", "terminate"),
    ERROR: ("start", "terminate"),
}

# Accepted but not listed: the reference allows stop while PROVISIONING (see above).
_ALSO_ACCEPTED: dict[str, tuple[str, ...]] = {PROVISIONING: ("stop",)}

Phase = dict[str, Any]


def boot_phase(now: float, provision_for: float, start_for: float) -> Phase:
    """The phase of a pod that begins (re)booting at ``now``."""
    return {"kind": "boot", "since": now, "provisionFor": provision_for, "startFor": start_for}


def running_since_iso(phase: Phase) -> str | None:
    """``running_since`` as an RFC 3339 string (cached in the phase)."""
    cached = phase.get("runningAt")
    if cached is None:
        since = running_since(phase)
        if since is None:
            return None
        cached = phase["runningAt"] = iso(since)
    return cached


def iso(timestamp: float) -> str:
    """RFC 3339 UTC with milliseconds: ``2026-06-01T12:00:00.000Z``."""
    moment = datetime.fromtimestamp(timestamp, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def running_since(phase: Phase) -> float | None:
    """When a booting pod becomes (or became) RUNNING; None for stopped pods."""
    if phase["kind"] != "boot":
        return None
    return phase["since"] + phase["provisionFor"] + phase["startFor"]


def status_of(phase: Phase, now: float) -> str:
    """The pod status at ``now``."""
    kind = phase["kind"]
    if kind == "exited":
        return EXITED
    if kind == "error":
        return ERROR
    elapsed = now - phase["since"]
    if elapsed < phase["provisionFor"]:
        return PROVISIONING
    if elapsed < phase["provisionFor"] + phase["startFor"]:
        return STARTING
    return RUNNING


def check_action(status: str, action: str, *, locked: bool, pod_id: str) -> None:
    """409 unless ``action`` is allowed for a pod in ``status``."""
    allowed = ACTIONS.get(status, ())
    if action not in allowed and action not in _ALSO_ACCEPTED.get(status, ()):
        raise Problem(
            409,
            f"cannot {action} pod {pod_id!r} while it is {status}; "
            f"allowed now: {', '.join(allowed) or 'none'}",
        )
    if locked and action in ("stop", "restart"):
        raise Problem(
            409,
            f"pod {pod_id!r} is locked and cannot be {'stopped' if action == 'stop' else 'restarted'}; "
            'unlock it first with PATCH {"locked": false}',
        )
