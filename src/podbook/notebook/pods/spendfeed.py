"""Pod spend for the live panels: read on one worker thread, at most every ``MIN_SECONDS`` per pod.

Billing is coarse (hourly records) and its reads are not free, so a pod panel's refresh does
not read it on every tick: :meth:`SpendFeed.request` (called from the refresher's tick) asks
for a fresh read only when the pod has none yet, or the last one is ``MIN_SECONDS`` old and
the pod is RUNNING or changed status since. Reads run on the feed's own thread, never on the
kernel's or the refresher's; panels of the same pod share one read. A read that fails is
tried again ``MIN_SECONDS`` later and leaves the last value in place.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from podbook.notebook.billing.podspend import SpendLedger, billed_alone, pod_spend

log = logging.getLogger(__name__)

MIN_SECONDS = 30.0
"""The shortest pause between two billing reads of one pod."""

Deliver = Callable[[dict[str, Any]], None]


@dataclass
class _PodEntry:
    ledger: SpendLedger = field(default_factory=SpendLedger)
    value: dict[str, Any] | None = None
    read_at: float | None = None
    status: str | None = None
    reading: bool = False
    waiting: list[Deliver] = field(default_factory=list)
    reads: int = 0


class SpendFeed:
    """The spend reads of every pod panel of this process."""

    def __init__(self, min_seconds: float = MIN_SECONDS) -> None:
        self.min_seconds = min_seconds
        self._lock = threading.Lock()
        self._pods: dict[str, _PodEntry] = {}
        self._executor: ThreadPoolExecutor | None = None

    def reads(self, pod_id: str) -> int:
        """How many billing reads of ``pod_id`` were started."""
        with self._lock:
            entry = self._pods.get(pod_id)
            return entry.reads if entry else 0

    def _due(self, entry: _PodEntry, status: str) -> bool:
        if entry.read_at is None:
            return True
        if time.monotonic() - entry.read_at < self.min_seconds:
            return False
        return status == "RUNNING" or status != entry.status

    def request(self, client: Any, pod: dict[str, Any], deliver: Deliver) -> None:
        """Hand ``deliver`` the pod's spend: the last value now, a fresh one when it is due."""
        if client is None or not billed_alone(pod):
            return
        pod_id = str(pod["id"])
        status = str(pod.get("status") or "")
        with self._lock:
            entry = self._pods.setdefault(pod_id, _PodEntry())
            value = entry.value
            start = not entry.reading and self._due(entry, status)
            if (start or entry.reading) and deliver not in entry.waiting:
                entry.waiting.append(deliver)
            if start:
                entry.reading, entry.read_at, entry.status = True, time.monotonic(), status
                entry.reads += 1
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(1, thread_name_prefix="podbook-spend")
                self._executor.submit(self._read, client, dict(pod), entry)
        if value is not None:
            deliver(value)

    def _read(self, client: Any, pod: dict[str, Any], entry: _PodEntry) -> None:
        try:
            value: dict[str, Any] | None = pod_spend(client, pod, entry.ledger)
        except Exception as err:  # noqa: BLE001 - a failed read keeps the last value
            log.debug("podbook: reading the spend of %s failed: %s", pod.get("id"), err)
            value = None
        with self._lock:
            entry.reading = False
            waiting, entry.waiting = entry.waiting, []
            if value is not None:
                entry.value = value
        for deliver in waiting if value is not None else ():
            try:
                deliver(value)
            except Exception as err:  # noqa: BLE001 - one closed panel must not stop others
                log.debug("podbook: a spend update failed: %s", err)


FEED = SpendFeed()
"""The feed every pod panel uses."""
