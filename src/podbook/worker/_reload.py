"""Hot reload of a served handler: what changed, the release that records it, a watched file.

A reload swaps the handler that the *next* job runs (:meth:`Runner.swap_handler`): a job
already running finishes on the code it started with, and the worker (its id, its slots, its
connection) stays the same. The swap is recorded as a release of the endpoint through the
public API a user's own code would use: ``PATCH /v2/serverless/{id}`` setting the env value
:data:`RELEASE_ENV` to a label of the new code (``name sha256:0123456789ab``), so the release
diff reads ``env.PODBOOK_HANDLER_CODE: old → new``. Unchanged code changes nothing and
records no release; a release that cannot be recorded (a built-in endpoint, a lost
connection) does not stop the swap, and the reload's line says why there is none.

:class:`HandlerWatch` polls a handler file from a thread of its own (every
:data:`WATCH_INTERVAL` seconds; a change is taken once the file has held still for one
interval, so a half-written file is not imported); a file that fails to import or lacks the
function is reported in one line and the old handler goes on.
"""

from __future__ import annotations

import contextvars
import hashlib
import inspect
import marshal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podbook.api.endpoints import HANDLER_CODE_ENV
from podbook.errors import ConfigError, PodbookError
from podbook.worker._handlers import HandlerSpec, load_handler

__all__ = [
    "RELEASE_ENV",
    "WATCH_INTERVAL",
    "HandlerWatch",
    "Reload",
    "code_label",
    "record_release",
]

RELEASE_ENV = HANDLER_CODE_ENV
"""The endpoint env name whose value labels the served code (its change is the release)."""
WATCH_INTERVAL = 0.2
"""Seconds between two looks at a watched file (a change is applied within two)."""

Prepare = Callable[[Callable[..., Any]], Callable[..., Any]]
"""Turns a loaded function into the handler served (``ConfigError`` when it cannot)."""


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()[:12]


def _code_bytes(fn: Callable[..., Any]) -> bytes:
    """The source of ``fn`` (IPython keeps a cell's source), else its compiled code."""
    try:
        return inspect.getsource(fn).encode()
    except (OSError, TypeError):
        pass
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return marshal.dumps(code) if code is not None else repr(fn).encode()


def code_label(fn: Callable[..., Any], name: str) -> str:
    """``name sha256:…``: the label of ``fn``'s code, equal for equal source."""
    return f"{name} {_digest(_code_bytes(fn))}"


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def record_release(client: Any, endpoint_id: str, label: str) -> tuple[int | None, str | None]:
    """Record ``label`` as the code served on ``endpoint_id`` (see the module docstring).

    ``(version, None)`` when a release was recorded; ``(None, None)`` when the endpoint
    already names this code; ``(None, reason)`` when no release could be recorded.
    """
    try:
        env = dict(client.endpoints.get(endpoint_id).env or {})
        if env.get(RELEASE_ENV) == label:
            return None, None
        env[RELEASE_ENV] = label
        updated = client.endpoints.update(endpoint_id, env=env)
    except PodbookError as err:
        return None, _first_line(err)
    return updated.version, None


@dataclass(frozen=True)
class Reload:
    """What one reload did: ``name`` now serves ``endpoint_id``, recorded as ``release``
    (None: the same code as before, or ``no_release`` says why none was recorded)."""

    endpoint_id: str
    name: str
    release: int | None = None
    no_release: str | None = None

    def line(self) -> str:
        """The one line a user reads about this reload."""
        if self.release is not None:
            recorded = f"release {self.release}"
        elif self.no_release is not None:
            recorded = f"no release recorded: {self.no_release}"
        else:
            recorded = "same code as the release before: no new release"
        return (
            f"endpoint {self.endpoint_id}: handler {self.name} reloaded ({recorded}); "
            "a running job finishes on the old code"
        )


class HandlerWatch:
    """A handler file that is loaded again whenever it changes.

    :meth:`load` imports it now (``ConfigError`` says what is wrong); :meth:`start` polls it
    from a thread (started in the caller's context, so what it prints lands in the cell that
    started it) and hands each new version to ``on_change(fn, label)``, each failure's one
    line to ``on_error``. ``error`` is the last failure (None after a good load), ``loads``
    how many versions were loaded.
    """

    def __init__(
        self, spec: HandlerSpec, prepare: Prepare | None = None, interval: float = WATCH_INTERVAL
    ) -> None:
        self.spec = spec
        self.path = Path(spec.target).expanduser().resolve()
        self.interval = interval
        self.error: str | None = None
        self.loads = 0
        self.label = ""
        self._prepare = prepare
        self._seen: str | None = None  # the content last tried (loaded, or failed)
        self._pending: str | None = None  # a new content seen once: applied if it holds still
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        """``handler.py:fn`` as the user named it."""
        return f"{self.spec.target}:{self.spec.function}"

    @property
    def running(self) -> bool:
        """Whether the polling thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def _read(self) -> str:
        return _digest(self.path.read_bytes())

    def load(self) -> Callable[..., Any]:
        """Import the file now: the handler served (``ConfigError`` when it cannot be)."""
        try:
            digest = self._read()
        except OSError:
            raise ConfigError(
                f"handler file {self.spec.target} not found; give a .py file"
            ) from None
        self._seen = digest
        fn = load_handler(self.spec)
        if self._prepare is not None:
            fn = self._prepare(fn)
        self.label = f"{self.name} {digest}"
        self.loads += 1
        self.error = None
        return fn

    def start(
        self,
        on_change: Callable[[Callable[..., Any], str], None],
        on_error: Callable[[str], None],
    ) -> None:
        """Poll the file until :meth:`stop` (see the class docstring)."""
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run,
            args=(self._run, on_change, on_error),
            name=f"podbook-watch-{self.path.name}",
            daemon=True,
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop polling (a reload in progress completes first)."""
        self._stopped.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(
        self,
        on_change: Callable[[Callable[..., Any], str], None],
        on_error: Callable[[str], None],
    ) -> None:
        while not self._stopped.wait(self.interval):
            try:
                failure = self.poll(on_change)
            except Exception as err:  # noqa: BLE001 - the watch goes on; the user reads one line
                failure = _first_line(err)
                if not isinstance(err, PodbookError):
                    failure = f"{type(err).__name__}: {failure}"
            if failure is not None:
                on_error(failure)
                self.error = failure  # after the report: whoever sees it can read the line

    def poll(self, on_change: Callable[[Callable[..., Any], str], None]) -> str | None:
        """Look at the file once: a new version that held still since the last look is
        loaded and handed to ``on_change``; the one line of a failure is returned."""
        try:
            digest = self._read()
        except OSError:
            digest = "missing"
        if digest == self._seen:
            self._pending = None
            return None
        if digest != self._pending:
            self._pending = digest  # still being written, perhaps: look again first
            return None
        self._seen, self._pending = digest, None
        if digest == "missing":
            return f"{self.spec.target} is gone"
        try:
            fn = self.load()
        except ConfigError as err:
            return _first_line(err)
        on_change(fn, self.label)
        return None
