"""One background thread that keeps every live panel current.

Per tick: one ``GET /v2/pods?includeClusterPods=true`` for all pod, pod-list and cluster
panels, one cluster list when a cluster panel is live, and a ``GET`` only for a watched ID
that has vanished from the list (to confirm a 404). The pause between ticks grows when the
``RateLimit`` header says the quota runs low and, with backoff (doubling from the base pause,
at most ``MAX_BACKOFF_SECONDS``), while the service is unreachable, including when every live
panel is a job or health panel whose read failed (panels then show ``connection =
"reconnecting"``, and recover by themselves on the first good tick); a refused key (401/403) is
shown as each panel's ``error`` until a refresh succeeds again. Panels that were closed or
reached a final state are dropped. The thread is a daemon and prints nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from podbook.client import Client
    from podbook.notebook.panels.base import Snapshot
    from podbook.notebook.panels.data import JsonDict

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 10.0  # the longest pause while the service is unreachable
QUOTA_SHARE = 0.5  # the refresher uses at most this share of what remains in a window


def interval_for_quota(
    rate_limit: object, calls_per_tick: int, base: float, ceiling: float
) -> float:
    """The pause that keeps polling within ``QUOTA_SHARE`` of every window's remainder.

    ``rate_limit`` is ``client.rate_limit``: windows with a remaining count and seconds
    until reset. Unknown shapes (or ``None``) leave ``base`` unchanged.
    """
    interval = base
    for remaining, reset in _windows(rate_limit):
        if remaining <= 0:
            interval = max(interval, reset + 0.5)
            continue
        budget = remaining * QUOTA_SHARE
        interval = max(interval, calls_per_tick * reset / budget)
    return min(interval, max(ceiling, base))


def _windows(rate_limit: object) -> Iterable[tuple[float, float]]:
    """(remaining, seconds to reset) of each window of ``client.rate_limit``."""
    if rate_limit is None:
        return []
    windows = getattr(rate_limit, "windows", rate_limit)
    if isinstance(windows, dict):
        windows = list(windows.values())
    found = []
    for window in windows if isinstance(windows, (list, tuple)) else []:
        remaining = _field(window, "remaining", "r")
        reset = _field(window, "reset", "reset_seconds", "seconds_to_reset", "t")
        if isinstance(remaining, (int, float)) and isinstance(reset, (int, float)):
            found.append((float(remaining), float(reset)))
    return found


def _field(obj: object, *names: str) -> object:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


class RefreshedPanel(Protocol):
    """What the refresher needs of a panel (:class:`~podbook.notebook.panels.base.Panel` has
    it all). A job or health panel also has ``queue_key()`` and ``apply_queue(result)``: see
    :mod:`podbook.notebook.endpoints.polling`."""

    @property
    def needs(self) -> frozenset[str]:
        """What a tick must fetch for it: ``"pods"``, ``"clusters"``."""
        ...

    @property
    def final(self) -> bool: ...

    @property
    def closed(self) -> bool: ...

    @property
    def connection(self) -> str:
        """``"ok"`` or ``"reconnecting"``."""
        ...

    def watched_pod_ids(self) -> set[str]: ...

    def watched_cluster_ids(self) -> set[str]: ...

    def apply_snapshot(self, snapshot: Snapshot) -> None: ...

    def set_connection(self, state: str) -> None: ...

    def set_refresh_error(self, message: str) -> None: ...


class Refresher:
    """The single refresh thread of a notebook session.

    ``client_factory`` returns the shared client (created lazily by the magics);
    ``interval`` returns the configured base pause in seconds.
    """

    def __init__(
        self,
        client_factory: Callable[[], Client],
        interval: Callable[[], float],
        max_interval: Callable[[], float] = lambda: 60.0,
    ) -> None:
        self._client_factory = client_factory
        self._interval = interval
        self._max_interval = max_interval
        self._panels: list[RefreshedPanel] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._failures = 0
        self.ticks = 0
        self.last_pause = 0.0

    # -- public API ---------------------------------------------------------------------------

    @property
    def panels(self) -> list[RefreshedPanel]:
        """The panels currently polled (a copy)."""
        with self._lock:
            return list(self._panels)

    @property
    def running(self) -> bool:
        """True while the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def register(self, panel: RefreshedPanel) -> None:
        """Start polling for ``panel`` (starts the thread if needed)."""
        if panel.final:
            return
        with self._lock:
            if panel not in self._panels:
                self._panels.append(panel)
            self._stopping.clear()
            if not self.running:
                self._thread = threading.Thread(
                    target=self._run, name="podbook-refresher", daemon=True
                )
                self._thread.start()
        self.wake()

    def wake(self) -> None:
        """Run the next tick now (after a button action, for instance)."""
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and forget every panel."""
        self._stopping.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        with self._lock:
            self._panels.clear()

    # -- the loop -----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping.is_set():
            panels = self._live_panels()
            if not panels:
                with self._lock:
                    if not self._live_panels_locked():
                        self._thread = None
                        return
                continue
            pause = self._tick(panels)
            self.last_pause = pause
            if self._wake.wait(pause):
                self._wake.clear()

    def _live_panels_locked(self) -> list[RefreshedPanel]:
        self._panels = [p for p in self._panels if not (p.closed or p.final)]
        return list(self._panels)

    def _live_panels(self) -> list[RefreshedPanel]:
        with self._lock:
            return self._live_panels_locked()

    def _tick(self, panels: list[RefreshedPanel]) -> float:
        from podbook import errors

        base = max(float(self._interval()), 0.05)
        try:
            client = self._client_factory()
            snapshot, calls = self._fetch(client, panels)
        except errors.RateLimited as err:
            self._set_connection(panels, "reconnecting")
            return max(float(getattr(err, "retry_after", None) or base), base)
        except (errors.Unauthorized, errors.Forbidden) as err:
            # Retrying will not help until the user fixes the key: say so in every panel.
            from podbook.notebook.errors import describe_failure

            self._failures = min(self._failures + 1, 16)
            for panel in panels:
                panel.set_refresh_error(describe_failure(err))
            return self._backoff(base)
        except Exception as err:  # noqa: BLE001 - the thread must survive anything
            log.debug("podbook refresher tick failed: %s", err)
            self._failures = min(self._failures + 1, 16)
            self._set_connection(panels, "reconnecting")
            return self._backoff(base)
        self.ticks += 1
        for panel in panels:
            try:
                panel.apply_snapshot(snapshot)
            except Exception as err:  # noqa: BLE001 - one broken panel must not stop others
                log.debug("podbook panel update failed: %s", err)
            time.sleep(0)  # let the kernel's own thread in between two panels
        if all(panel.connection == "reconnecting" for panel in panels):
            # Only queue panels, and every read of theirs failed: back off as for an outage.
            self._failures = min(self._failures + 1, 16)
            return self._backoff(base)
        self._failures = 0
        rate_limit = getattr(client, "rate_limit", None)
        return interval_for_quota(rate_limit, calls, base, float(self._max_interval()))

    def _backoff(self, base: float) -> float:
        """The pause after the latest of ``_failures`` failed ticks in a row: doubling from
        ``base``, at most ``MAX_BACKOFF_SECONDS`` (or ``base`` when that is longer)."""
        return max(base, min(base * 2**self._failures, MAX_BACKOFF_SECONDS))

    @staticmethod
    def _set_connection(panels: list[RefreshedPanel], state: str) -> None:
        for panel in panels:
            panel.set_connection(state)

    def _fetch(self, client: Client, panels: list[RefreshedPanel]) -> tuple[Snapshot, int]:
        from podbook.notebook.panels.base import Snapshot
        from podbook.notebook.panels.data import pod_state, records, to_wire

        snapshot = Snapshot(taken_at=time.monotonic())
        needs = set().union(*(p.needs for p in panels))
        calls = 0
        if "pods" in needs:
            listed = records(client.pods.list(include_cluster_pods=True), "pods")
            watched = set().union(*(p.watched_pod_ids() for p in panels))
            snapshot.pods, snapshot.gone_pods, reads = _by_id(
                listed, watched, client.pods.get, pod_state
            )
            calls += 1 + reads
        if "clusters" in needs:
            listed = records(client.clusters.list(), "clusters")
            watched = set().union(*(p.watched_cluster_ids() for p in panels))
            snapshot.clusters, snapshot.gone_clusters, reads = _by_id(
                listed, watched, client.clusters.get, to_wire
            )
            calls += 1 + reads
        from podbook.notebook.endpoints.polling import poll_queue_panels

        calls += poll_queue_panels(client, panels)  # job status and endpoint health
        return snapshot, calls


def _by_id(
    listed: Iterable[object],
    watched: set[str],
    get: Callable[[str], object],
    state: Callable[[object], JsonDict],
) -> tuple[dict[str, JsonDict], set[str], int]:
    """A listing as ``state`` dicts by ID, with the ``watched`` IDs it lacks read one by one;
    the IDs of those gone (404) and how many reads that took."""
    from podbook import errors

    found = {(item := state(x))["id"]: item for x in listed}
    gone: set[str] = set()
    missing = sorted(watched - found.keys())
    for ident in missing:
        try:
            found[ident] = state(get(ident))
        except errors.NotFound:
            gone.add(ident)
    return found, gone, len(missing)
