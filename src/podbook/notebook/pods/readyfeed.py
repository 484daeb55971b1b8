"""Which services of a RUNNING pod answer, for its panel (``PodPanel.services``).

A pod reads RUNNING once its main process starts; its SSH server, its Jupyter and whatever
listens on its ports come up after. :meth:`ReadyFeed.request` (called from the refresher's
tick) probes them (:mod:`podbook.client.readiness`) on a worker thread: every
:data:`WAITING_SECONDS` while one is not ready, every :data:`READY_SECONDS` once all are,
never while the pod is not RUNNING. The panel gets ``{name: {"state", "note"}}``: ``ready``
or ``waiting`` for ``ssh`` and ``jupyter``, ``listening`` or ``waiting`` for each other port.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from podbook.client.readiness import not_ready

WAITING_SECONDS = 1.0
READY_SECONDS = 15.0

Deliver = Callable[[dict[str, Any]], None]


def services_of(pod: dict[str, Any]) -> list[str]:
    """What a pod's record says it serves: ``ssh`` (an endpoint), ``jupyter`` (``8888/http``
    with a Jupyter password), and its other ports."""
    names = []
    ssh = pod.get("ssh") or {}
    if ssh.get("direct") or ssh.get("proxy"):
        names.append("ssh")
    for port in pod.get("ports") or []:
        if port == "22/tcp":
            continue
        if port == "8888/http" and "JUPYTER_PASSWORD" in (pod.get("env") or {}):
            names.append("jupyter")
        elif "/" in str(port):
            names.append(str(port))
    return names


def states(pod: dict[str, Any], names: list[str]) -> dict[str, dict[str, str]]:
    """Probe each service: ``{name: {"state": ..., "note": why not ready}}`` (blocking)."""
    found = {}
    for name in names:
        reasons = not_ready(pod, [name])
        if reasons:
            found[name] = {"state": "waiting", "note": reasons[0]}
        else:
            found[name] = {"state": "ready" if name in ("ssh", "jupyter") else "listening"}
    return found


class ReadyFeed:
    """The readiness probes of every pod panel of this process (two worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}
        self._busy: set[str] = set()
        self._executor: ThreadPoolExecutor | None = None

    def request(self, pod: dict[str, Any], deliver: Deliver) -> None:
        """Probe ``pod``'s services when due and hand ``deliver`` what they answered."""
        pod_id = str(pod.get("id") or "")
        names = services_of(pod)
        if pod.get("status") != "RUNNING" or not names:
            with self._lock:
                self._next.pop(pod_id, None)
            deliver({})
            return
        now = time.monotonic()
        with self._lock:
            if pod_id in self._busy or now < self._next.get(pod_id, 0.0):
                return
            self._busy.add(pod_id)
            if self._executor is None:
                self._executor = ThreadPoolExecutor(2, thread_name_prefix="podbook-ready")
            executor = self._executor
        executor.submit(self._probe, pod_id, dict(pod), names, deliver)

    def _probe(self, pod_id: str, pod: dict[str, Any], names: list[str], deliver: Deliver) -> None:
        try:
            found = states(pod, names)
            deliver(found)
            waiting = any(s["state"] == "waiting" for s in found.values())
        except Exception:  # noqa: BLE001 - a failed probe is tried again, never kills the feed
            waiting = True
        with self._lock:
            self._busy.discard(pod_id)
            self._next[pod_id] = time.monotonic() + (WAITING_SECONDS if waiting else READY_SECONDS)


FEED = ReadyFeed()
"""The feed of this process's pod panels."""
