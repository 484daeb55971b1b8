"""The notebook session: one shared client, one refresher, and how results are shown."""

from __future__ import annotations

import contextlib
import sys
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from podbook.notebook.display import Presenter

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from podbook.api.pods import Pod
    from podbook.client import Client
    from podbook.notebook.kernel_exit.watch import ExitWatch

T = TypeVar("T")


class _Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


class PerSession(Generic[C]):
    """One ``C`` per notebook session, made by ``make(session)`` on first use (:meth:`of`)
    and closed when the session ends (:meth:`close`)."""

    def __init__(self, make: Callable[[Any], C]) -> None:
        self._make = make
        self._items: weakref.WeakKeyDictionary[Any, C] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, session: Any) -> C:
        """The ``C`` of ``session`` (made now the first time)."""
        with self._lock:
            item = self._items.get(session)
            if item is None:
                item = self._items[session] = self._make(session)
            return item

    def close(self, session: Any) -> None:
        """Close and forget the ``C`` of ``session``, if it has one."""
        if session is None:
            return
        with self._lock:
            item = self._items.pop(session, None)
        if item is not None:
            item.close()


def _resend_settled_panels(*_: Any) -> None:
    """``post_run_cell``: see :func:`podbook.notebook.panels.base.resend_settled_panels` (no
    panel exists before its module is imported, so loading the extension stays light)."""
    base = sys.modules.get("podbook.notebook.panels.base")
    if base is not None:
        base.resend_settled_panels()


def _points_at_local_emulator() -> bool:
    """Whether the magics' client will talk to the local emulator (read without starting it)."""
    from podbook.client.config import resolve_settings
    from podbook.errors import PodbookError

    try:
        return resolve_settings(start_emulator=False).local
    except PodbookError:
        return False


class NotebookSession:
    """State shared by the magics of one IPython shell.

    ``interval``/``max_interval`` return the configured refresh pauses (seconds);
    ``show_panels`` says whether magics display their panels; ``exit_watch`` settles the
    pods this kernel created when it ends (the magics' own; by default one that warns).
    """

    def __init__(
        self,
        shell: InteractiveShell | None,
        interval: Callable[[], float],
        max_interval: Callable[[], float],
        show_panels: Callable[[], bool],
        exit_watch: ExitWatch | None = None,
    ) -> None:
        self._client: Client | None = None
        self._client_lock = threading.Lock()
        self._early_failure: Exception | None = None
        local = _points_at_local_emulator()
        if local:
            threading.Thread(target=self._build_client, name="podbook-client", daemon=True).start()
        from podbook.notebook.refresher import Refresher

        if local:  # what the first magic's answer needs, imported while the emulator boots
            import podbook.notebook.pods.cluster  # noqa: F401
            import podbook.notebook.pods.panel  # noqa: F401
            import podbook.notebook.pods.podlist  # noqa: F401
            from podbook.client import Client  # noqa: F401 - the lazy name loads the client

        self.shell = shell
        self.presenter = Presenter(shell)
        if shell is not None:
            shell.events.register("post_run_cell", _resend_settled_panels)
        self.refresher = Refresher(self.get_client, interval, max_interval)
        self._show_panels = show_panels
        self._closers: list[Callable[[], None]] = []
        self._runtime_told = False
        if exit_watch is None:
            from podbook.notebook.kernel_exit.watch import ExitWatch

            exit_watch = ExitWatch(shell, lambda: "warn")
            self.on_close(exit_watch.close)
        self.exit_watch = exit_watch

    # -- client -------------------------------------------------------------------------------

    def get_client(self) -> Client:
        """The shared :class:`podbook.Client`, created (and the emulator started) on first use."""
        with self._client_lock:
            return self._client_locked()

    def _client_locked(self) -> Client:
        if self._client is None:
            failed, self._early_failure = self._early_failure, None
            if failed is not None:  # met ahead of time: said once, tried again next time
                raise failed
            from podbook.client import Client

            self._client = Client()
        return self._client

    def _build_client(self) -> None:
        """Build the shared client ahead of its first use (a daemon thread, when the magics
        point at the local emulator): the emulator is started first (the standard library
        only), so it boots in its own process while this kernel imports the rest of podbook,
        and the first magic of a kernel waits for the longer of the two, not their sum. A
        failure is kept for :meth:`get_client` to report in one line (rather than starting
        the emulator a second time)."""
        from podbook.client.config import resolve_settings

        with self._client_lock:
            try:
                resolve_settings(start_emulator=True)
                self._client_locked()
            except Exception as err:  # noqa: BLE001 - raised in the cell that needs the client
                self._early_failure = err

    @property
    def client(self) -> Client:
        """Shortcut for :meth:`get_client`."""
        return self.get_client()

    def created(self, pod: Pod, client: Client, on_exit: str | None = None) -> None:
        """Remember that this kernel created ``pod`` through ``client`` (``on_exit``: what
        to do with it when the kernel ends, instead of ``PodMagics.on_exit``)."""
        self.exit_watch.track(pod, client.settings, on_exit)

    def runtime_note(self) -> str | None:
        """Once per kernel: the line saying the emulator runs pods without a sandbox (the
        process runtime, where bubblewrap cannot work), else None (never asked of the
        service itself)."""
        if self._runtime_told:
            return None
        self._runtime_told = True
        settings = self.client.settings
        if settings.is_cloud:
            return None
        from podbook.client._local import emulator_pods, no_sandbox_line

        pods = emulator_pods(settings.rest_url)
        if pods.get("runtime") != "local" or pods.get("sandbox") != "none":
            return None
        why = pods.get("sandboxNote") or "--sandbox none"
        return f"podbook: the emulator's {no_sandbox_line(why)}"

    def reset_client(self) -> None:
        """Forget the client (the next call re-reads the configuration)."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the session closes (``%unload_ext podbook``)."""
        self._closers.append(callback)

    def close(self) -> None:
        """Run the ``on_close`` callbacks, stop the refresher, unhook the display, close the
        client."""
        closers, self._closers = self._closers, []
        for callback in closers:
            callback()
        self.refresher.stop()
        self.presenter.close()
        if self.shell is not None:
            with contextlib.suppress(ValueError):
                self.shell.events.unregister("post_run_cell", _resend_settled_panels)
        self.reset_client()

    # -- panels and views ---------------------------------------------------------------------

    def panels_on(self) -> bool:
        """Whether magics display live panels now (``PodMagics.show_panels``)."""
        return bool(self._show_panels())

    def show(
        self, obj: T, live: Callable[[T], object], static: Callable[[T], object] | None = None
    ) -> T:
        """Display ``obj`` once in this cell and return it.

        ``live`` makes its panel; ``static`` its widget-free form, used when
        ``PodMagics.show_panels`` is off and the object is displayed anyway (as a cell's
        last expression, say). Objects of the same type shown in later cells go the same way.
        """
        static = static or live

        def view(item: T) -> object:
            return live(item) if self._show_panels() else static(item)

        self.presenter.hook(type(obj), view)
        if self._show_panels():
            self.presenter.present(obj, live(obj))
        return obj
