"""What :meth:`podbook.remote.RemoteKernel.execute` yields: one typed object per output of
the remote code, in the order the kernel sent them, then :class:`ExecuteDone`.

Each mirrors a message of the Jupyter messaging protocol (``stream``, ``display_data``,
``update_display_data``, ``execute_result``, ``clear_output``, ``error``, ``execute_reply``),
so a front end can show it as a notebook would. :class:`Reconnected` is podbook's own: the
WebSocket to the pod broke and was opened again while the code ran on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from podbook.errors import RemoteExecutionError

__all__ = [
    "ClearOutput",
    "DisplayData",
    "ExecuteDone",
    "ExecuteError",
    "ExecuteResult",
    "KernelOutput",
    "KernelState",
    "Reconnected",
    "StreamText",
    "UpdateDisplayData",
]

KernelState = Literal["starting", "idle", "busy", "reconnecting", "disconnected", "closed"]
"""A remote kernel as the client sees it: the kernel's own ``starting``/``idle``/``busy``
(from its status messages), or the connection's ``reconnecting``/``disconnected``/``closed``."""


@dataclass(frozen=True)
class StreamText:
    """Text the code wrote to ``stdout`` or ``stderr`` (ANSI escapes kept)."""

    name: Literal["stdout", "stderr"]
    text: str


@dataclass(frozen=True)
class DisplayData:
    """A rich output (``display(...)``): ``data`` maps every MIME type the kernel sent to its
    value (``text/plain``, ``image/png`` as base64 text, ``text/html``, ...)."""

    data: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    display_id: str | None = None
    """The ``transient.display_id`` of an updatable display (``display(..., display_id=True)``)."""


@dataclass(frozen=True)
class UpdateDisplayData(DisplayData):
    """New content for the earlier display with the same :attr:`display_id` (a subclass of
    :class:`DisplayData`: test for it first)."""


@dataclass(frozen=True)
class ExecuteResult:
    """The value of the cell's last expression, as the kernel formatted it."""

    data: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    execution_count: int | None = None


@dataclass(frozen=True)
class ClearOutput:
    """Clear the output shown so far (``wait``: only once the next output arrives)."""

    wait: bool = False


@dataclass(frozen=True)
class ExecuteError:
    """An exception the code raised in the remote kernel; ``traceback`` holds the kernel's
    formatted lines (ANSI colours kept)."""

    ename: str
    evalue: str
    traceback: tuple[str, ...] = ()

    def exception(self, where: str = "the pod's kernel") -> RemoteExecutionError:
        """This error as a raisable :class:`podbook.errors.RemoteExecutionError`."""
        from podbook.errors import RemoteExecutionError

        return RemoteExecutionError(self.ename, self.evalue, self.traceback, where=where)


@dataclass(frozen=True)
class Reconnected:
    """The WebSocket to the kernel broke and was opened again after ``downtime`` seconds and
    ``attempts`` tries; the code ran on meanwhile, and the server replayed what it buffered
    (output written in the instant of the break may be missing)."""

    attempts: int
    downtime: float


@dataclass(frozen=True)
class ExecuteDone:
    """The end of a request: ``status`` ``ok``, ``error`` (``error`` says which) or
    ``aborted`` (an earlier request failed and the kernel skipped this one)."""

    status: Literal["ok", "error", "aborted"]
    execution_count: int | None = None
    error: ExecuteError | None = None

    def raise_for_error(self, where: str = "the pod's kernel") -> None:
        """Raise :class:`podbook.errors.RemoteExecutionError` when the code failed."""
        if self.error is not None:
            raise self.error.exception(where)
        if self.status == "aborted":
            from podbook.errors import RemoteExecutionError

            raise RemoteExecutionError(
                "Aborted", "an earlier request failed, so the kernel skipped this one", ()
            )


KernelOutput = (
    StreamText
    | DisplayData
    | UpdateDisplayData
    | ExecuteResult
    | ClearOutput
    | ExecuteError
    | Reconnected
    | ExecuteDone
)
"""Anything :meth:`RemoteKernel.execute` yields."""
