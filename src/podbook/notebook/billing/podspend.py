"""One pod's spend so far, read from the billing records (never guessed from price × uptime).

:func:`pod_spend` asks ``GET /v2/billing/pods?podId=...`` in hourly buckets from the hour the
pod was created and sums ``totalAmount``. Hours that ended more than :data:`SETTLED_HOURS` ago
are kept in a :class:`SpendLedger` and not asked for again, so a pod that has run for weeks
costs one small answer per read, not one record per hour of its life.

The result is the ``spend`` trait of the pod panel: ``{"total": USD, "per_hour": USD,
"as_of": ISO time, "lagging": bool}``. ``as_of`` is where the records end: now, unless the pod
is RUNNING and its newest record ends before now (the service writes its records late), and
then ``lagging`` is true and the panel says "as of HH:MM".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from podbook.notebook.billing.chart import wire_dict

if TYPE_CHECKING:
    from podbook.client import Client
    from podbook.notebook.panels.data import JsonDict

SETTLED_HOURS = 24
"""Hourly records that ended this long ago are summed once and kept (see :class:`SpendLedger`)."""
LAG_SECONDS = 60.0
"""Records ending more than this before now make ``lagging`` true."""
MAX_HOURS = 9_999
"""The longest window asked for (the service refuses more than 10,000 buckets)."""


@dataclass
class SpendLedger:
    """What one pod's earlier reads settled: the spend of every hour before ``until``."""

    total: float = 0.0
    until: datetime | None = None


def _parse(text: object) -> datetime:
    moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _hour(moment: datetime) -> datetime:
    return moment.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)


def iso(moment: datetime) -> str:
    """``2026-06-01T13:00:00+00:00`` (UTC, seconds)."""
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


def _window_start(pod: JsonDict, ledger: SpendLedger, now: datetime) -> datetime:
    created = pod.get("createdAt")
    start = _hour(_parse(created)) if created else _hour(now) - timedelta(days=30)
    if ledger.until is not None:
        start = max(start, ledger.until)
    return max(start, _hour(now) - timedelta(hours=MAX_HOURS))


def pod_spend(
    client: Client,
    pod: JsonDict,
    ledger: SpendLedger | None = None,
    now: datetime | None = None,
) -> JsonDict:
    """The ``spend`` dict of ``pod`` (a wire dict with ``id``, ``status``, ``cost``,
    ``createdAt``); ``ledger`` carries the settled hours from one read to the next."""
    ledger = ledger if ledger is not None else SpendLedger()
    now = now or datetime.now(timezone.utc)
    answer = client.billing.pods(
        pod_id=str(pod["id"]), start_time=_window_start(pod, ledger, now), bucket_size="hour"
    )
    settle_before = _hour(now) - timedelta(hours=SETTLED_HOURS)
    recent = 0.0
    newest: datetime | None = None
    for record in wire_dict(answer).get("records") or []:
        if record.get("podId") not in (None, pod["id"]):
            continue
        amount = float(record.get("totalAmount") or 0.0)
        end = _parse(record["endTime"])
        newest = end if newest is None else max(newest, end)
        if end <= settle_before:
            ledger.total += amount
        else:
            recent += amount
    if ledger.until is None or settle_before > ledger.until:
        ledger.until = settle_before
    as_of = now
    if pod.get("status") == "RUNNING" and newest is not None:
        as_of = min(now, newest)
    cost = pod.get("cost")
    return {
        "total": round(ledger.total + recent, 8),
        "per_hour": float(cost) if isinstance(cost, (int, float)) else 0.0,
        "as_of": iso(as_of),
        "lagging": (now - as_of).total_seconds() > LAG_SECONDS,
    }


def dollars(value: float) -> str:
    """``$12.34``; ``< $0.01`` for a spend above zero that rounds to nothing."""
    if 0 < value < 0.005:
        return "< $0.01"
    return f"${math.floor(value * 100 + 0.5) / 100:,.2f}"


def spend_text(spend: JsonDict | None) -> str:
    """``$1.23 spent so far`` (``· as of 13:00 UTC`` when the records lag), or ``""``."""
    if not spend or not isinstance(spend.get("total"), (int, float)):
        return ""
    text = f"{dollars(float(spend['total']))} spent so far"
    if spend.get("lagging") and spend.get("as_of"):
        text += f" · as of {_parse(spend['as_of']).strftime('%H:%M')} UTC"
    return text


def billed_alone(pod: JsonDict) -> bool:
    """True for a pod with an id that is not a cluster member (a member's spend is billed
    under its cluster: ``%billing --kind clusters``)."""
    return bool(pod.get("id")) and not (pod.get("cluster") or {}).get("id")


def static_spend(client: Client, pod: JsonDict) -> JsonDict | None:
    """The spend of a pod for its static form: one read now, ``None`` when it fails or the pod
    is a cluster member (billed under its cluster)."""
    from podbook import errors

    if not billed_alone(pod):
        return None
    try:
        return pod_spend(client, pod)
    except errors.PodbookError:
        return None
