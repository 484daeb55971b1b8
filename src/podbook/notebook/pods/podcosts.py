"""What the pods of ``%pod list`` cost: sorted by price per hour, which have no guard (no idle
stop, no time limit: they bill until someone stops them), and the total of those running."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from podbook.api.types import BILLED_POD_STATUSES
from podbook.guard.settings import settings_of

if TYPE_CHECKING:
    from podbook.notebook.panels.data import JsonDict


def guard_text(pod: JsonDict) -> str:
    """``idle stop 30m, max runtime 4h, then stop``, or ``""`` for a pod without a guard
    (read from ``guardSettings`` where the guard was folded into it, else from the env)."""
    if "guardSettings" in pod:
        folded = pod["guardSettings"]
        return str(folded.get("summary") or "") if isinstance(folded, dict) else ""
    settings = settings_of(pod)
    return settings.describe() if settings is not None else ""


def _cost(pod: JsonDict) -> float:
    cost = pod.get("cost")
    return float(cost) if isinstance(cost, (int, float)) else 0.0


def list_rows(pods: Iterable[JsonDict]) -> list[JsonDict]:
    """The pods, highest price per hour first (ties keep their order), each with
    ``guardText`` (:func:`guard_text`) for the views."""
    rows = [{**pod, "guardText": guard_text(pod)} for pod in pods]
    return sorted(rows, key=lambda pod: -_cost(pod))


def list_summary(pods: Iterable[JsonDict]) -> dict[str, float]:
    """``running`` (pods that bill by the hour), ``perHour`` (their total, USD) and
    ``unguarded`` (how many of them have no guard)."""
    billed = [pod for pod in pods if pod.get("status") in BILLED_POD_STATUSES]
    return {
        "running": len(billed),
        "perHour": round(sum(_cost(pod) for pod in billed), 4),
        "unguarded": sum(1 for pod in billed if not guard_text(pod)),
    }


def summary_text(summary: Mapping[str, float]) -> str:
    """``2 running: $1.13/h · 1 without a guard`` (``nothing running`` when none is)."""
    if not summary.get("running"):
        return "nothing running"
    text = f"{summary['running']} running: ${summary['perHour']:.2f}/h"
    if summary.get("unguarded"):
        text += f" · {summary['unguarded']} without a guard"
    return text
