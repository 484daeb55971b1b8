"""Typed exceptions shared by the client and the notebook.

Every exception's ``str()`` is one readable line that says what was wrong, optionally
followed by one ``"\\n  - <line>"`` per validation error. None of them ever carries an API
key: the client scrubs the key from any text it copies out of a response.

Nothing here imports IPython; the notebook layer decides how to show these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "APIError",
    "BadRequest",
    "ConfigError",
    "Conflict",
    "ConnectionFailed",
    "Forbidden",
    "GuardWarning",
    "InvalidRequest",
    "JobCancelled",
    "JobFailed",
    "JobNotCompleted",
    "JobTimedOut",
    "JupyterAuthFailed",
    "JupyterNotAnswering",
    "KernelConnectionLost",
    "KernelDied",
    "KernelNotFound",
    "LocalEmulatorError",
    "NoJupyter",
    "NotFound",
    "PaymentRequired",
    "PodNotRunning",
    "PodbookError",
    "RateLimited",
    "RemoteExecutionError",
    "RemoteKernelError",
    "RemoteTimeout",
    "ServerError",
    "StreamInterrupted",
    "TransferError",
    "Unauthorized",
    "ValidationFailed",
    "WaitFailed",
    "WaitTimeout",
    "error_class_for_status",
]


def _with_error_lines(head: str, errors: Iterable[str], detail: str = "") -> str:
    """``head`` plus one ``"  - <line>"`` per error (a lone error equal to the detail is
    already in ``head`` and not repeated)."""
    errors = list(errors)
    if len(errors) == 1 and errors[0] == detail:
        errors = []
    lines = [head]
    lines.extend(f"  - {line}" for line in errors)
    return "\n".join(lines)


class PodbookError(Exception):
    """Base of every podbook error; ``str()`` is one readable line."""


class GuardWarning(UserWarning):
    """A pod was created with the pod guard, but the guard may not work as asked (an image
    without ``curl`` or ``python3``, or no start command of the pod's own); the message is one
    line that says what to do."""


class ConfigError(PodbookError):
    """The configuration is unusable; the message names the variable or file to fix."""


class LocalEmulatorError(PodbookError):
    """The local emulator could not be found or started; the message names its log file."""


class InvalidRequest(PodbookError, ValueError):
    """A request refused locally, before anything was sent.

    ``status`` is the HTTP status the service would have answered (400 for a rule
    conflict, 422 for a schema violation); ``errors`` lists ``"<json_path>: <message>"``.
    """

    def __init__(
        self,
        detail: str,
        errors: Iterable[str] = (),
        *,
        status: int = 422,
        title: str = "Invalid request",
    ) -> None:
        self.detail = detail
        self.errors = list(errors)
        self.status = status
        self.title = title
        super().__init__(str(self))

    def __str__(self) -> str:
        head = f"Invalid request (not sent): {self.detail}"
        return _with_error_lines(head, self.errors, self.detail)


class ConnectionFailed(PodbookError):
    """The service could not be reached (refused, dropped, timed out)."""

    def __init__(self, method: str, url: str, reason: str, hint: str = "") -> None:
        self.method = method
        self.url = url
        self.reason = reason
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"Could not reach {self.url} ({self.method}): {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


class StreamInterrupted(ConnectionFailed):
    """A job's stream could not be read on.

    Either the connection kept failing beyond the client's retry budget (``lost`` False:
    nothing is missing, reading on from ``cursor`` continues exactly where it stopped), or
    an answer was lost by a service that offers no stream cursor (``lost`` True, ``cursor``
    None: the chunks it carried were drained and may be missing), or before the service
    said whether it offers one (``lost`` True, ``cursor`` set). ``received`` counts the
    chunks delivered.
    """

    def __init__(
        self,
        job_id: str,
        endpoint_id: str,
        url: str,
        reason: str,
        *,
        received: int,
        cursor: int | None,
        lost: bool,
    ) -> None:
        self.job_id = job_id
        self.endpoint_id = endpoint_id
        self.received = received
        self.cursor = cursor
        self.lost = lost
        if lost and cursor is None:
            hint = (
                "the service keeps no stream cursor, so the chunks of the lost answer may be "
                "missing: read the job's result with job.output()"
            )
        elif lost:
            hint = (
                "an answer was lost before the service said whether it keeps a stream cursor: "
                f"read on with stream({job_id!r}, cursor={cursor}) (complete if it does), or "
                "read the job's result with job.output()"
            )
        else:
            again = (
                f"stream({job_id!r})" if cursor is None else f"stream({job_id!r}, cursor={cursor})"
            )
            hint = f"nothing was lost: once the service answers, read on with {again}"
        super().__init__("GET", url, reason, hint)

    def __str__(self) -> str:
        return (
            f"The stream of job {self.job_id} on endpoint {self.endpoint_id} broke after "
            f"{self.received} chunks ({self.reason}); {self.hint}"
        )


class APIError(PodbookError):
    """The service answered with an error status.

    Carries the problem body's ``title``, ``detail`` and ``errors`` lines, and the
    request's ``method`` and ``url`` (the URL never contains the key; it travels in a
    header).
    """

    status: int = 0

    def __init__(
        self,
        status: int,
        title: str,
        detail: str,
        errors: Iterable[str] = (),
        *,
        method: str = "",
        url: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = list(errors)
        self.method = method
        self.url = url
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(str(self))

    def __str__(self) -> str:
        head = f"{self.status} {self.title}"
        if self.detail:
            head = f"{head}: {self.detail}"
        return _with_error_lines(head, self.errors, self.detail)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status}, title={self.title!r}, "
            f"detail={self.detail!r}, errors={self.errors!r}, method={self.method!r}, "
            f"url={self.url!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_api_error,
            (
                type(self),
                self.status,
                self.title,
                self.detail,
                self.errors,
                self.method,
                self.url,
                self.headers,
            ),
            self.__dict__,
        )


def _rebuild_api_error(cls: type[APIError], *args: Any) -> APIError:
    status, title, detail, errors, method, url, headers = args
    err = cls.__new__(cls)
    APIError.__init__(err, status, title, detail, errors, method=method, url=url, headers=headers)
    return err


class BadRequest(APIError):
    """400: malformed request, a rule conflict, or no capacity."""

    status = 400


class Unauthorized(APIError):
    """401: the API key is missing, malformed, expired or unknown."""

    status = 401


class PaymentRequired(APIError):
    """402: the account's balance is insufficient."""

    status = 402


class Forbidden(APIError):
    """403: the key is valid but lacks access (for example a read-only key writing)."""

    status = 403


class NotFound(APIError):
    """404: the resource does not exist or is not accessible to this key."""

    status = 404


class Conflict(APIError):
    """409: the action is not allowed now (or a cluster member changed via pod endpoints)."""

    status = 409


class ValidationFailed(APIError):
    """422: the service's validation failed; ``errors`` lists each failure."""

    status = 422


class RateLimited(APIError):
    """429: the rate limit was exceeded; ``retry_after`` is the wait in seconds, if given."""

    status = 429

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any) -> None:
        self.retry_after = retry_after
        super().__init__(*args, **kwargs)

    def __str__(self) -> str:
        text = super().__str__()
        retry_after = getattr(self, "retry_after", None)
        if retry_after is not None and not self.errors:
            return f"{text} (retry after {retry_after:g} s)"
        return text


class ServerError(APIError):
    """5xx: the service failed."""

    status = 500


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: Unauthorized,
    402: PaymentRequired,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: ValidationFailed,
    429: RateLimited,
}


def error_class_for_status(status: int) -> type[APIError]:
    """The exception class for an HTTP error status (``APIError`` when none is specific)."""
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, APIError)


class WaitTimeout(PodbookError, TimeoutError):
    """Waiting for a status took longer than allowed; names the last status seen."""

    def __init__(
        self,
        resource: str,
        wanted: str,
        last_status: str,
        timeout: float,
        pending: list[str] | None = None,
    ) -> None:
        self.resource = resource
        self.wanted = wanted
        self.last_status = last_status
        self.timeout = timeout
        self.pending = list(pending or [])
        """What was not ready yet when waiting with ``ready=`` (one line each)."""
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.pending:
            return (
                f"{self.resource} is {self.last_status} but not ready within {self.timeout:g} s: "
                f"{'; '.join(self.pending)}; wait longer with timeout=..."
            )
        return (
            f"{self.resource} did not reach {self.wanted} within {self.timeout:g} s "
            f"(last status {self.last_status}); wait longer with timeout=..."
        )


class WaitFailed(PodbookError):
    """While waiting for one status, the resource landed in a final one (ERROR, TERMINATED)."""

    def __init__(self, resource: str, wanted: str, landed: str, obj: Any = None) -> None:
        self.resource = resource
        self.wanted = wanted
        self.landed = landed
        self.obj = obj
        super().__init__(str(self))

    def __str__(self) -> str:
        return (
            f"{self.resource} is {self.landed} and will not reach {self.wanted}; "
            "check its logs or create a new one"
        )


class JobNotCompleted(PodbookError):
    """A queue job ended without a result: the base of ``JobFailed``, ``JobTimedOut`` and
    ``JobCancelled``. Carries ``job_id``, ``endpoint_id``, ``status`` and the final
    ``record`` (a ``podbook.api.queue.JobRecord``)."""

    status = ""

    def __init__(self, job_id: str, endpoint_id: str, record: Any = None) -> None:
        self.job_id = job_id
        self.endpoint_id = endpoint_id
        self.record = record
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_job_error, (type(self), self.__dict__))

    @property
    def _label(self) -> str:
        return f"Job {self.job_id} on endpoint {self.endpoint_id}"


def _rebuild_job_error(cls: type[JobNotCompleted], state: dict[str, Any]) -> JobNotCompleted:
    err = cls.__new__(cls)
    err.__dict__.update(state)
    Exception.__init__(err, str(err))
    return err


class JobFailed(JobNotCompleted):
    """The job FAILED: ``error`` has the handler's ``type``, ``message`` and ``traceback``
    (a ``podbook.api.queue.JobError``, or None when the service gave no error)."""

    status = "FAILED"

    def __init__(self, job_id: str, endpoint_id: str, error: Any = None, record: Any = None):
        self.error = error
        super().__init__(job_id, endpoint_id, record)

    def __str__(self) -> str:
        what = self.error.one_line() if self.error is not None else "no error was reported"
        hint = (
            "; its traceback is in .error.traceback"
            if getattr(self.error, "traceback", None)
            else ""
        )
        return f"{self._label} failed: {what}{hint}; fix the input or handler, then job.retry()"


class JobTimedOut(JobNotCompleted):
    """The job ran longer than its ``executionTimeout`` (TIMED_OUT)."""

    status = "TIMED_OUT"

    def __str__(self) -> str:
        return (
            f"{self._label} timed out (ran longer than its executionTimeout); "
            "raise policy={'executionTimeout': ms} when submitting, or job.retry()"
        )


class JobCancelled(JobNotCompleted):
    """The job was CANCELLED before it finished."""

    status = "CANCELLED"

    def __str__(self) -> str:
        return f"{self._label} was cancelled; submit it again to run it"


# ---------------------------------------------------------------- a pod's Jupyter kernel


class RemoteKernelError(PodbookError):
    """A pod's Jupyter kernel could not be reached or used (:mod:`podbook.remote.kernel`).

    ``where`` names the pod (``"pod abc123"``) or the server's address. No message carries
    the Jupyter password or a login cookie.
    """


class PodNotRunning(RemoteKernelError):
    """The pod is not RUNNING, so nothing on it answers."""

    def __init__(self, pod_id: str, status: str) -> None:
        self.pod_id = pod_id
        self.status = status
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.status in ("PROVISIONING", "STARTING"):
            return (
                f"pod {self.pod_id} is {self.status}, not RUNNING yet; wait until it is "
                f"RUNNING (client.pods.wait_for({self.pod_id!r}, 'RUNNING'))"
            )
        return (
            f"pod {self.pod_id} is {self.status}, not RUNNING; start it (%pod start "
            f"{self.pod_id}, or client.pods.start) and wait until it is RUNNING"
        )


class NoJupyter(RemoteKernelError):
    """The pod runs no Jupyter server: no ``8888/http`` port, or no ``JUPYTER_PASSWORD``."""

    def __init__(self, pod_id: str, missing: str) -> None:
        self.pod_id = pod_id
        self.missing = missing
        super().__init__(str(self))

    def __str__(self) -> str:
        return (
            f"pod {self.pod_id} has no Jupyter server ({self.missing}); create the pod with "
            "--jupyter (or run shell commands with %%pod sh)"
        )


class JupyterNotAnswering(RemoteKernelError):
    """The pod's Jupyter server did not answer within the bounded wait (it starts a few
    seconds after the pod is RUNNING)."""

    def __init__(self, where: str, url: str, waited: float, reason: str) -> None:
        self.where = where
        self.url = url
        self.waited = waited
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        server = f"of {self.where} at {self.url}" if self.where != self.url else f"at {self.url}"
        return (
            f"the Jupyter server {server} did not answer within "
            f"{self.waited:g} s ({self.reason}); it starts a few seconds after the pod is "
            "RUNNING: try again in a moment, or check the pod's logs"
        )


class JupyterAuthFailed(RemoteKernelError):
    """The pod's Jupyter server refused the password."""

    def __init__(self, where: str, source: str) -> None:
        self.where = where
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        return (
            f"the Jupyter server of {self.where} refused the password ({self.source}); pass "
            "the pod's own JUPYTER_PASSWORD (pod.env['JUPYTER_PASSWORD']) or leave password "
            "unset to use it"
        )


class KernelNotFound(RemoteKernelError):
    """No kernel with that id runs on the pod's Jupyter server."""

    def __init__(self, where: str, kernel_id: str) -> None:
        self.where = where
        self.kernel_id = kernel_id
        super().__init__(str(self))

    def __str__(self) -> str:
        return (
            f"no kernel {self.kernel_id} runs on the Jupyter server of {self.where} (it was "
            "shut down, or the pod restarted); connect without kernel_id= to start a new one"
        )


class KernelConnectionLost(RemoteKernelError):
    """The WebSocket to the kernel broke and could not be opened again in the bounded time;
    the kernel may still run (reattach with its ``kernel_id``)."""

    def __init__(self, where: str, kernel_id: str, waited: float, reason: str) -> None:
        self.where = where
        self.kernel_id = kernel_id
        self.waited = waited
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        return (
            f"lost the connection to kernel {self.kernel_id} of {self.where} and could not "
            f"reconnect within {self.waited:g} s ({self.reason}); the code may still run "
            f"there: reattach later with kernel_id={self.kernel_id!r}"
        )


class KernelDied(RemoteKernelError):
    """The kernel died or was restarted while a request ran (``restarted``: the server
    started it again, without the variables; else it is gone)."""

    def __init__(self, where: str, kernel_id: str, restarted: bool) -> None:
        self.where = where
        self.kernel_id = kernel_id
        self.restarted = restarted
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.restarted:
            return (
                f"the kernel {self.kernel_id} of {self.where} died or was restarted while the "
                "code ran, and its variables are gone (a kernel that dies on its own has "
                "usually run out of memory); run the code that sets them up again"
            )
        return (
            f"the kernel {self.kernel_id} of {self.where} died and could not be restarted; "
            "connect again to start a new one"
        )


class RemoteTimeout(RemoteKernelError, TimeoutError):
    """The code ran longer than the ``timeout=`` given; the remote kernel was interrupted
    and keeps its variables."""

    def __init__(self, where: str, timeout: float) -> None:
        self.where = where
        self.timeout = timeout
        super().__init__(str(self))

    def __str__(self) -> str:
        return (
            f"the code ran longer than {self.timeout:g} s in the kernel of {self.where} and "
            "was interrupted (the kernel and its variables are kept); pass a larger timeout= "
            "to wait longer"
        )


class RemoteExecutionError(RemoteKernelError):
    """The code raised an exception in the remote kernel: ``ename``, ``evalue`` and the
    kernel's formatted ``traceback`` lines (ANSI colours kept).

    IPython shows the remote traceback as the error output (``_render_traceback_``), not
    the local frames that relayed it.
    """

    def __init__(
        self, ename: str, evalue: str, traceback: Iterable[str] = (), *, where: str = ""
    ) -> None:
        self.ename = ename
        self.evalue = evalue
        self.traceback = list(traceback)
        self.where = where or "the pod's kernel"
        super().__init__(str(self))

    def __str__(self) -> str:
        value = self.evalue.strip().splitlines()[0] if self.evalue.strip() else ""
        head = f"{self.ename}: {value}" if value else self.ename
        return f"{head} (raised in {self.where})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_remote_error,
            (self.ename, self.evalue, self.traceback, self.where),
        )

    def _render_traceback_(self) -> list[str]:
        """The remote traceback's lines, as IPython prints an error output."""
        return list(self.traceback) or [str(self)]


def _rebuild_remote_error(
    ename: str, evalue: str, traceback: list[str], where: str
) -> RemoteExecutionError:
    return RemoteExecutionError(ename, evalue, traceback, where=where)


class TransferError(RemoteKernelError, ValueError):
    """A value could not be sent to or brought back from a pod's kernel (not picklable,
    over the size limit, missing, or the two Pythons differ); the message names it."""
