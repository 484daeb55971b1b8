"""Show a magic's result once: its panel now, and again only when shown in a later cell.

A magic displays its panel and returns its object (``pod = %pod create ...``). When the
magic is also the cell's last expression, IPython would display the returned object a
second time; the :class:`Presenter` registers display hooks that skip an object already
shown in the running cell (without even an ``Out[N]:`` prompt, :class:`SkipShownResults`),
and show a fresh view of it in any later cell.
"""

from __future__ import annotations

import contextlib
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from IPython.core.displayhook import DisplayHook
    from IPython.core.interactiveshell import InteractiveShell

    from podbook.notebook.panels.base import Panel

MAX_REMEMBERED = 256

T = TypeVar("T")


@dataclass(frozen=True)
class StaticView:
    """A displayable text/plain + text/html pair (catalog tables, SSH commands)."""

    text: str
    html: str

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": self.html}

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True)
class PanelDisplay:
    """Displays a live panel through its ``display()`` (under a display id of its own, so
    the panel can update that output when it ends)."""

    panel: Panel

    def _ipython_display_(self) -> None:
        self.panel.display()


class SkipShownResults:
    """A ``sys.displayhook`` around the shell's own that stays silent for shown results.

    A result the running cell already displayed (``%pod show ID`` as a cell's last line) is
    still stored in ``_`` and ``Out``, but the hook writes nothing: terminal IPython would
    otherwise print an empty ``Out[N]:`` prompt. Every other result goes to the shell's hook.
    """

    def __init__(self, inner: DisplayHook, presenter: Presenter) -> None:
        self.inner = inner
        self.presenter = presenter

    def __call__(self, result: object = None) -> None:
        inner = self.inner
        if result is None or not self.presenter.shown_in_this_cell(result):
            inner(result)
            return
        inner.check_for_underscore()
        if not inner.quiet():
            inner.update_user_ns(result)
            inner.fill_exec_result(result)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Presenter:
    """Tracks what the running cell already displayed; see the module docstring."""

    def __init__(self, shell: InteractiveShell | None) -> None:
        self.shell = shell
        self.cell_serial = 0
        self._shown: OrderedDict[int, tuple[int, object]] = OrderedDict()
        self._hooked: set[type] = set()
        self._displayhook: SkipShownResults | None = None
        if shell is not None:
            shell.events.register("pre_run_cell", self._next_cell)
            self._install_displayhook()

    def _install_displayhook(self) -> None:
        """Put :class:`SkipShownResults` around the hook the shell installs for each cell."""
        trap = getattr(self.shell, "display_trap", None)
        if trap is None or trap.hook is None:
            return
        self._displayhook = SkipShownResults(trap.hook, self)
        trap.hook = self._displayhook
        if sys.displayhook is self._displayhook.inner:  # created while a cell runs
            sys.displayhook = self._displayhook

    def _remove_displayhook(self) -> None:
        wrapper, self._displayhook = self._displayhook, None
        if wrapper is None or self.shell is None:  # installed only on a shell
            return
        trap = self.shell.display_trap
        if trap.hook is wrapper:
            trap.hook = wrapper.inner
        if sys.displayhook is wrapper:
            sys.displayhook = wrapper.inner

    def close(self) -> None:
        """Unregister the hooks installed on the shell."""
        if self.shell is None:
            return
        with contextlib.suppress(ValueError):
            self.shell.events.unregister("pre_run_cell", self._next_cell)
        self._remove_displayhook()
        formatter = self.shell.display_formatter.ipython_display_formatter
        for type_ in self._hooked:
            formatter.pop(type_, None)
        self._hooked.clear()

    def _next_cell(self, *_: object) -> None:
        self.cell_serial += 1

    def present(self, obj: object, view: object) -> None:
        """Display ``view`` now and remember that ``obj`` was shown in this cell."""
        from IPython.display import display

        display(view)
        self.mark_shown(obj)

    def mark_shown(self, obj: object) -> None:
        """Remember that ``obj`` was shown in this cell (by :meth:`present`, or by a magic that
        printed it), so that returning it shows nothing more."""
        self._shown[id(obj)] = (self.cell_serial, obj)
        while len(self._shown) > MAX_REMEMBERED:
            self._shown.popitem(last=False)

    def shown_in_this_cell(self, obj: object) -> bool:
        """True when ``obj`` was presented during the running cell."""
        entry = self._shown.get(id(obj))
        return entry is not None and entry[1] is obj and entry[0] == self.cell_serial

    def hook(self, type_: type[T], make_view: Callable[[T], object]) -> None:
        """Display objects of ``type_`` as ``make_view(obj)`` (skipping repeats in a cell)."""
        if self.shell is None or type_ in self._hooked:
            return

        def show(obj: T) -> None:
            if self.shown_in_this_cell(obj):
                return
            from IPython.display import display

            display(make_view(obj))

        self.shell.display_formatter.ipython_display_formatter.for_type(type_, show)
        self._hooked.add(type_)
