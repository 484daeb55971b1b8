"""The common part of every panel: error/connection traits, refresh hooks, static forms."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, ClassVar

import anywidget
import traitlets

MAX_DISPLAY_IDS = 8
"""How many displays of one panel :meth:`Panel.redisplay` keeps current."""

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()
_live_panels: weakref.WeakSet[Panel] = weakref.WeakSet()


def run_in_worker(fn: Callable[[], None]) -> Future[None]:
    """Run ``fn`` on the panels' small worker pool, never on the kernel's thread."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="podbook-action")
    return _executor.submit(fn)


def button_work(
    panel: Panel, work: Callable[[], object], failed: str, describe: Callable[[Exception], str]
) -> None:
    """Run a button's ``work`` (on a worker thread) for ``panel``, which has a ``busy`` trait:
    a service error shows as ``describe(err)``, any other as ``"{failed} failed: ..."``; the
    panel is no longer busy after it."""
    from podbook.errors import PodbookError

    try:
        work()
    except PodbookError as err:
        panel.error = describe(err)
    except Exception as err:  # noqa: BLE001 - a button must never kill the worker silently
        panel.error = f"{failed} failed: {type(err).__name__}: {err}"
    finally:
        panel.busy = ""
        panel._changed()


@dataclass
class Snapshot:
    """What one refresher tick learned, shared by every panel.

    ``pods``: masked wire dicts by ID (every pod, cluster members included), ``gone_pods``:
    IDs confirmed absent (404); ``clusters``/``gone_clusters`` likewise (``None`` when the
    tick did not fetch clusters); ``taken_at``: ``time.monotonic()`` when the fetch started.
    """

    pods: dict[str, dict[str, Any]] = field(default_factory=dict)
    gone_pods: set[str] = field(default_factory=set)
    clusters: dict[str, dict[str, Any]] | None = None
    gone_clusters: set[str] = field(default_factory=set)
    taken_at: float = field(default_factory=time.monotonic)


def now_iso() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Panel(anywidget.AnyWidget):
    """Base of the podbook panels.

    Subclasses say what a refresher tick must fetch (``needs``), which IDs they watch, and
    apply a :class:`Snapshot`. ``client`` (a client, or a function returning the current
    one) is a plain attribute, never a trait: nothing of it, least of all the API key,
    reaches widget state.
    """

    needs: ClassVar[frozenset[str]] = frozenset({"pods"})

    error = traitlets.Unicode("").tag(sync=True)
    connection = traitlets.Unicode("ok").tag(sync=True)
    updated = traitlets.Unicode("").tag(sync=True)

    def __init__(self, client: Any = None, on_change: Callable[[], None] | None = None) -> None:
        super().__init__()
        self._client = client
        self._on_change = on_change
        self._local_update_at = 0.0
        self._refresh_error = ""
        self._lock = threading.RLock()
        self._display_ids: list[str] = []
        self._settled_sent = False
        _live_panels.add(self)

    @property
    def client(self) -> Any:
        """The client that button actions use (``None`` when the panel has none)."""
        source = self._client
        return source() if callable(source) and not hasattr(source, "pods") else source

    # -- refresher protocol ---------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the panel was closed (its comm is gone)."""
        return getattr(self, "comm", None) is None

    @property
    def final(self) -> bool:
        """True when nothing more can change (no further polling)."""
        return False

    @property
    def settled(self) -> bool:
        """True once nothing more changes and the displays show it (what a saved notebook
        keeps is then the end)."""
        return self.final

    def watched_pod_ids(self) -> set[str]:
        """Pod IDs this panel must hear about (absent ones are checked for 404)."""
        return set()

    def watched_cluster_ids(self) -> set[str]:
        """Cluster IDs this panel must hear about."""
        return set()

    def apply_snapshot(self, snapshot: Snapshot) -> None:
        """Update the traits from a refresher tick (stale snapshots are ignored).

        Everything a tick changes reaches the view as one comm message (``hold_sync``): with
        50 live panels, a message per trait per panel per tick held the kernel's cells back
        (see ``bench/load.py``)."""
        with self._lock, self.hold_sync():
            if snapshot.taken_at < self._local_update_at:
                return
            if self._refresh_error and self.error == self._refresh_error:
                self.error = ""
            self._refresh_error = ""
            self._apply(snapshot)
            self.connection = "ok"
            self.updated = now_iso()

    def _apply(self, snapshot: Snapshot) -> None:
        raise NotImplementedError

    def set_connection(self, state: str) -> None:
        """``"ok"`` or ``"reconnecting"``."""
        self.connection = state

    def set_refresh_error(self, message: str) -> None:
        """Show why refreshing fails (401, 403, ...); the next good refresh clears it."""
        with self._lock:
            self._refresh_error = message
            self.error = message
            self.connection = "ok"

    def _touched_locally(self) -> None:
        self._local_update_at = time.monotonic()
        self.updated = now_iso()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    # -- displays ---------------------------------------------------------------------------

    def display(self) -> None:
        """Display the panel under a new display id (so :meth:`redisplay` can reach it)."""
        from uuid import uuid4

        from IPython.display import display

        display_id = uuid4().hex
        self._display_ids = [*self._display_ids[-(MAX_DISPLAY_IDS - 1) :], display_id]
        display(self, display_id=display_id)

    def redisplay(self) -> None:
        """Re-send the outputs of the displays made by :meth:`display`, so that the static
        text/HTML forms a saved notebook keeps (nbconvert, a viewer without widgets) show the
        panel as it is now. Only in a kernel: a terminal IPython would print the text in
        whatever runs now."""
        from IPython import get_ipython
        from IPython.display import update_display

        if getattr(get_ipython(), "kernel", None) is None:
            return
        for display_id in self._display_ids:
            update_display(self, display_id=display_id)

    def refresh_displays(self) -> None:
        """Re-send the displays with the panel's end (:meth:`redisplay`), in the panels whose
        static forms show it: job and chat panels. Nothing here."""

    # -- static forms -----------------------------------------------------------------------

    def snapshot_text(self) -> str:
        """The text/plain form."""
        raise NotImplementedError

    def snapshot_html(self) -> str:
        """The text/html form."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if bundle is not None else ({}, {})
        data = {**data, "text/plain": self.snapshot_text(), "text/html": self.snapshot_html()}
        return data, metadata

    def __repr__(self) -> str:
        return self.snapshot_text().splitlines()[0]


def resend_settled_panels(*_: Any) -> None:
    """After each cell (IPython's ``post_run_cell``, on the kernel's main thread): every panel
    that has settled since sends its whole state and its displays once more.

    A panel's own thread sent them as it ended, but a headless runner (nbclient: ``make
    quickstart``, papermill, nbconvert) keeps only the messages of the cell it runs, and drops
    one sent while a cell ends; the saved notebook would then keep an earlier state. Sent
    here, they belong to the cell that ends now."""
    for panel in list(_live_panels):
        if panel._settled_sent or panel.closed or not panel.settled:
            continue
        with panel._lock:
            panel._settled_sent = True
            panel.send_state()
            panel.refresh_displays()
