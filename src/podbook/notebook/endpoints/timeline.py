"""The worker timeline of ``%endpoint health``: what each worker did over the last minutes.

The health panel samples two answers of the service on each refresh, and only those two (so
the timeline is built the same way against the real service and the emulator):

- ``GET /v2/{endpoint_id}/health`` (queue API): ``jobs.inQueue``, the queue depth;
- ``GET /v2/serverless/{endpoint_id}/workers`` (REST API): each worker's ``id``, ``status``
  (``INITIALIZING``, ``IDLE``, ``RUNNING``, ``THROTTLED``, ``UNHEALTHY``) and ``startedAt``.

:class:`WorkerTimeline` keeps, for the last :data:`WINDOW_SECONDS`, the queue depth and one
lane per worker as **step series**: ``[time, value]`` points, each value holding until the
next point (or until the latest sample). A worker that a sample no longer lists is ``GONE``
from that sample on. A worker's **cold start** is the time from its ``startedAt`` to the
first sample that shows it ``IDLE`` or ``RUNNING``, so it is measured at the panel's
sampling resolution (an upper bound, within one refresh interval, and within the precision
of ``startedAt``); it is known only for a worker whose start the panel watched (listed
``INITIALIZING``, or absent from the sample before). Everything is bounded: the window,
:data:`MAX_POINTS` points per series and :data:`MAX_LANES` lanes.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "GONE",
    "MAX_LANES",
    "MAX_POINTS",
    "READY_STATES",
    "WINDOW_SECONDS",
    "WorkerTimeline",
    "timeline_summary",
]

WINDOW_SECONDS = 300
"""How far back the timeline reaches (seconds)."""
AXIS_SPANS = (60, 120, 300)
"""The spans the time axis may show (seconds): the shortest that holds what was sampled, so a
young panel is not a sliver at the right edge of 5 minutes."""
MAX_POINTS = 600
"""Points kept per series (the queue depth, each lane), oldest dropped first."""
MAX_LANES = 24
"""Lanes sent to the view: live workers first, then the most recently gone."""
RESOLUTION_SAMPLES = 20
"""Sample intervals whose median is the timeline's resolution."""

GONE = "GONE"
"""The state of a lane from the first sample that no longer lists its worker."""
READY_STATES = frozenset({"IDLE", "RUNNING"})
"""States of a worker that has finished starting."""
_RANK = {"RUNNING": 5, "IDLE": 4, "UNHEALTHY": 3, "THROTTLED": 2, "INITIALIZING": 1}
"""When a listing names one worker twice, the further-on state wins."""


def _epoch_ms(value: Any) -> int | None:
    """``startedAt`` (ISO 8601, ``Z`` or an offset; naive means UTC) as epoch milliseconds."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)


def _queue_depth(health: Any) -> int | None:
    jobs = health.get("jobs") if isinstance(health, dict) else None
    depth = jobs.get("inQueue") if isinstance(jobs, dict) else None
    return depth if isinstance(depth, int) and not isinstance(depth, bool) else None


def _listed(workers: Any) -> dict[str, tuple[str, int | None]]:
    """``{worker id: (status, startedAt ms)}`` of a workers listing (a body or its list).

    A worker listed twice counts once: the further-on status, the earlier ``startedAt``."""
    entries = workers.get("workers") if isinstance(workers, dict) else workers
    found: dict[str, tuple[str, int | None]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not entry.get("id"):
            continue
        worker_id = str(entry["id"])
        status = str(entry.get("status") or "INITIALIZING").upper()
        started = _epoch_ms(entry.get("startedAt"))
        if worker_id in found:
            old_status, old_started = found[worker_id]
            if _RANK.get(old_status, 0) > _RANK.get(status, 0):
                status = old_status
            known = [t for t in (started, old_started) if t is not None]
            started = min(known) if known else None
        found[worker_id] = (status, started)
    return found


@dataclass
class _Lane:
    """One worker's states over time."""

    worker_id: str
    points: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=MAX_POINTS))
    started_at: int | None = None
    cold_start: float | None = None
    watched_start: bool = False
    """True when the panel saw this start (so its cold start can be measured)."""
    ready: bool = False

    @property
    def state(self) -> str:
        return self.points[-1][1] if self.points else GONE

    def mark(self, at: int, state: str) -> None:
        if not self.points or self.points[-1][1] != state:
            self.points.append((at, state))

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.worker_id,
            "points": [[at, state] for at, state in self.points],
            "startedAt": self.started_at,
            "coldStart": self.cold_start,
        }


def _same_start(lane: _Lane, started: int | None) -> bool:
    """True when a worker listed again is still in the run its lane knows (no later
    ``startedAt``)."""
    return started is not None and lane.started_at is not None and started <= lane.started_at


def _clip(points: deque[Any], cut: int) -> None:
    """Drop the points that ended before ``cut``; the one in force at ``cut`` starts there."""
    while len(points) > 1 and points[1][0] <= cut:
        points.popleft()
    if points and points[0][0] < cut:
        points[0] = (cut, points[0][1])


class WorkerTimeline:
    """The bounded history of an endpoint's workers and queue depth (see the module doc).

    Thread-safe: the refresher thread adds samples while the kernel reads the summary."""

    def __init__(self, window: float = WINDOW_SECONDS) -> None:
        self.window = window
        self._lock = threading.Lock()
        self._queue: deque[tuple[int, int]] = deque(maxlen=MAX_POINTS)
        self._lanes: dict[str, _Lane] = {}
        self._times: deque[int] = deque(maxlen=RESOLUTION_SAMPLES + 1)
        self._first: int | None = None
        self._last: int | None = None
        self._last_listing: int | None = None
        self._samples = 0

    def add(self, at: float, health: Any = None, workers: Any = None) -> None:
        """One sample taken at ``at`` (epoch seconds): the ``/health`` body and the workers
        listing (a ``GET /v2/serverless/{id}/workers`` body), either None when its read failed."""
        now = int(at * 1000)
        with self._lock:
            if self._last is not None and now < self._last:
                return  # an older sample than one already taken: the clock went back
            depth = _queue_depth(health)
            if depth is not None and (not self._queue or self._queue[-1][1] != depth):
                self._queue.append((now, depth))
            if workers is not None:
                self._take_listing(now, _listed(workers))
            if depth is None and workers is None:
                return
            self._first = now if self._first is None else self._first
            self._last = now
            self._times.append(now)
            self._samples += 1
            self._prune(now)

    def _take_listing(self, now: int, listed: dict[str, tuple[str, int | None]]) -> None:
        first_listing = self._last_listing is None
        for worker_id, (state, started) in listed.items():
            lane = self._lanes.get(worker_id)
            if lane is None or lane.state == GONE and not _same_start(lane, started):
                lane = lane or _Lane(worker_id)
                self._lanes[worker_id] = lane
                # It started after the sample before (absent then), or is still starting.
                lane.watched_start = not first_listing or state not in READY_STATES
                lane.ready = False
                lane.cold_start = None
                lane.started_at = started
                after = lane.points[-1][0] if lane.points else -1
                if lane.watched_start and started is not None and after < started < now:
                    lane.mark(started, "INITIALIZING")  # drawn from its start on
            elif lane.state == GONE:
                pass  # back, but not started again (hidden for a while): its lane goes on
            elif lane.ready and state == "INITIALIZING":  # started again (same worker id)
                lane.ready, lane.watched_start, lane.cold_start = False, True, None
                lane.started_at = started
            elif started is not None:
                known = lane.started_at
                lane.started_at = started if known is None else min(known, started)
            if state in READY_STATES and not lane.ready:
                lane.ready = True
                if lane.watched_start and lane.started_at is not None:
                    lane.cold_start = round(max(0.0, (now - lane.started_at) / 1000), 2)
            lane.mark(now, state)
        for worker_id, lane in self._lanes.items():
            if worker_id not in listed:
                lane.mark(now, GONE)
        self._last_listing = now

    def _prune(self, now: int) -> None:
        cut = now - int(self.window * 1000)
        _clip(self._queue, cut)
        for worker_id, lane in list(self._lanes.items()):
            if lane.state == GONE and lane.points[-1][0] < cut:
                del self._lanes[worker_id]
                continue
            _clip(lane.points, cut)
        gone = sorted(
            (lane for lane in self._lanes.values() if lane.state == GONE),
            key=lambda lane: lane.points[-1][0],
        )
        for lane in gone[: max(0, len(self._lanes) - 2 * MAX_LANES)]:
            del self._lanes[lane.worker_id]

    def _shown(self) -> list[_Lane]:
        """The lanes the view gets: live ones first, then the most recently gone; oldest
        start on top."""
        lanes = sorted(
            self._lanes.values(),
            key=lambda lane: (lane.state != GONE, lane.points[-1][0] if lane.points else 0),
            reverse=True,
        )[:MAX_LANES]
        return sorted(lanes, key=lambda lane: lane.points[0][0] if lane.points else 0)

    @property
    def resolution(self) -> float | None:
        """Seconds between two samples (the median of the recent intervals)."""
        with self._lock:
            return self._resolution()

    def _axis_span(self) -> float:
        watched = (self._last or 0) - (self._first or 0)
        fits = [span for span in AXIS_SPANS if span * 1000 >= watched and span < self.window]
        return min(fits, default=self.window)

    def _resolution(self) -> float | None:
        times = list(self._times)
        gaps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
        return round(statistics.median(gaps) / 1000, 2) if gaps else None

    def to_wire(self) -> dict[str, Any]:
        """The timeline as the view draws it (``{}`` before the first sample).

        ``now`` (the latest sample) and every time are epoch milliseconds; ``window`` (the
        span the axis shows: the shortest of :data:`AXIS_SPANS` that holds every sample, at most
        the history's) and ``resolution`` are seconds; ``queue`` is ``[[t, inQueue], ...]``; each lane has its
        ``id``, ``points`` ``[[t, state], ...]``, ``startedAt`` and ``coldStart`` (seconds, or
        None); ``hiddenLanes`` counts the lanes left out beyond :data:`MAX_LANES`."""
        with self._lock:
            if self._last is None:
                return {}
            shown = self._shown()
            return {
                "window": self._axis_span(),
                "now": self._last,
                "since": self._first,
                "samples": self._samples,
                "resolution": self._resolution(),
                "queue": [[at, depth] for at, depth in self._queue],
                "lanes": [lane.wire() for lane in shown],
                "hiddenLanes": len(self._lanes) - len(shown),
            }

    def live_workers(self) -> int:
        """Workers the latest listing showed (in any state but gone)."""
        with self._lock:
            return sum(1 for lane in self._lanes.values() if lane.state != GONE)

    def summary(self) -> str:
        """A short text summary (the panel's static forms); see :func:`timeline_summary`."""
        return timeline_summary(self.to_wire())


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 60 else f"{value / 60:.1f} min"


def timeline_summary(wire: dict[str, Any]) -> str:
    """One line about a timeline (as :meth:`WorkerTimeline.to_wire` gives it): the workers
    seen and their states now, their cold starts, the queue's peak.

    ``worker timeline, last 42.0 s: 3 worker(s) seen (3 gone); cold starts 2.1 s, 2.4 s,
    1.9 s (sampled every 2.0 s); queue peak 20``"""
    if not wire:
        return "worker timeline: no sample yet"
    lanes = wire.get("lanes") or []
    states = [lane["points"][-1][1] if lane.get("points") else GONE for lane in lanes]
    counts = {state: states.count(state) for state in dict.fromkeys(states)}
    now = ", ".join(f"{n} {state.lower()}" for state, n in sorted(counts.items()))
    span = min((wire["now"] - (wire.get("since") or wire["now"])) / 1000, wire["window"])
    head = f"last {_seconds(span)}" if wire.get("samples", 1) > 1 else "1 sample"
    seen = len(lanes) + int(wire.get("hiddenLanes") or 0)
    parts = [f"worker timeline, {head}: {seen} worker(s) seen" + (f" ({now})" if now else "")]
    colds = [lane["coldStart"] for lane in lanes if lane.get("coldStart") is not None]
    if colds:
        shown = ", ".join(_seconds(c) for c in colds[:6]) + (" …" if len(colds) > 6 else "")
        resolution = wire.get("resolution")
        every = f" (sampled every {_seconds(resolution)})" if resolution else ""
        parts.append(f"cold start(s) {shown}{every}")
    depths = [depth for _, depth in wire.get("queue") or []]
    if depths:
        parts.append(f"queue peak {max(depths)}")
    if wire.get("note"):
        parts.append(str(wire["note"]))
    return "; ".join(parts)
