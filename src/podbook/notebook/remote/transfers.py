"""A transfer's progress in the cell: a bar with files, bytes, rate and ETA that updates in
place (one display, updated ~10 times a second), and its summary as the last word.

It is a plain display (``text/plain`` and ``text/html``) updated by its display id, so a
headless run (``make quickstart``, papermill) saves the final line, and a terminal shows the
text. ``%pod sync --watch`` adds a Stop button (an ipywidgets button) and keeps syncing on a
thread of its own until it is pressed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from html import escape
from typing import TypeAlias

from IPython.display import display

from podbook.remote.progress import Progress, TransferSummary

WatchRun: TypeAlias = "Callable[[threading.Event, Callable[[str], None]], TransferSummary]"
"""What :class:`SyncWatch` runs on its thread: ``run(stop, say)`` syncs until ``stop`` is set,
saying each step with ``say(line)``, and returns the totals."""

_STYLE = "font-family:var(--jp-code-font-family,monospace);font-size:90%"


class TransferView:
    """The live line of one transfer."""

    def __init__(self, title: str) -> None:
        self.title = title
        self._handle = display(self._bundle(title, 0.0), raw=True, display_id=True)

    def _bundle(self, text: str, fraction: float | None) -> dict[str, str]:
        bar = (
            f'<progress value="{fraction:.3f}" max="1" style="width:12em;vertical-align:middle">'
            "</progress> "
            if fraction is not None
            else ""
        )
        html = (
            f'<div class="podbook-transfer" style="{_STYLE}"><b>{escape(self.title)}</b><br>'
            f"{bar}{escape(text)}</div>"
        )
        return {"text/plain": f"{self.title}: {text}", "text/html": html}

    def update(self, progress: Progress) -> None:
        """Show a snapshot (the ``progress=`` callback of a transfer)."""
        if self._handle is not None:
            self._handle.update(self._bundle(progress.line(), progress.fraction), raw=True)

    def finish(self, summary: TransferSummary | str) -> None:
        """Show the summary in place of the bar."""
        if self._handle is not None:
            self._handle.update(self._bundle(str(summary), None), raw=True)


class SyncWatch:
    """``%pod sync --watch``: syncs on a thread until :meth:`stop` (or its Stop button)."""

    def __init__(self, title: str, run: WatchRun) -> None:
        import ipywidgets as widgets

        self.stopped = threading.Event()
        self.summary: TransferSummary | None = None
        self.error: str | None = None
        self.status = widgets.HTML(f"<b>{escape(title)}</b>: starting…")
        self.button = widgets.Button(description="Stop", button_style="warning")
        self.button.on_click(lambda _button: self.stop())
        self.title = title
        self.box = widgets.HBox([self.button, self.status])
        display(self.box)
        self._thread = threading.Thread(target=self._run, args=(run,), daemon=True)
        self._thread.start()

    def _say(self, text: str) -> None:
        self.status.value = f"<b>{escape(self.title)}</b>: {escape(text)}"

    def _run(self, run: WatchRun) -> None:
        try:
            self.summary = run(self.stopped, self._say)
            self._say(f"stopped; in all {self.summary}")
        except Exception as exc:  # the thread's end: say it in the panel
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._say(f"stopped: {self.error}")
        finally:
            self.button.disabled = True

    def stop(self, timeout: float = 30.0) -> TransferSummary | None:
        """Stop watching (after the sync in flight); the totals."""
        self.stopped.set()
        self._thread.join(timeout)
        return self.summary

    def __repr__(self) -> str:
        state = "stopped" if self.stopped.is_set() else "watching"
        return f"<SyncWatch {self.title} ({state})>"
