"""Turn failures into the short messages a notebook user sees.

User mistakes in a magic line raise :class:`IPython.core.error.UsageError` (IPython prints
``UsageError: <message>`` without a traceback). Failures reported by the service or the
network raise :class:`ServiceError`, whose ``_render_traceback_`` makes IPython (terminal or
kernel) print its lines instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from IPython.core.error import UsageError

_FIXES = {
    400: "check the flags against `%pod create --help` and the detail above",
    401: "set RUNPOD_API_KEY to a valid key (or unset it to use the local emulator)",
    403: "this key may not do that; use a key with write access",
    404: "check the ID (see `%pod list --all`) and the service URL",
    409: "the action is not allowed in the current state; check `actions` with `%pod show ID`",
    422: "fix the fields listed above",
    429: "the rate limit was reached; wait a moment and retry",
}


class ServiceError(Exception):
    """A failure reported by the service or the connection, shown without a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def _render_traceback_(self) -> list[str]:
        lines = self.message.splitlines() or [""]
        return [f"{type(self).__name__}: {lines[0]}", *lines[1:]]


def describe_failure(err: BaseException) -> str:
    """One readable line (plus the service's ``errors[]`` lines) with a hint at the fix."""
    from podbook import errors

    if isinstance(err, errors.APIError):
        status = getattr(err, "status", None)
        text = str(err)
        fix = _FIXES.get(status or 0) or (
            "the service failed; retry later" if (status or 0) >= 500 else ""
        )
        return f"{text}\n  → {fix}" if fix else text
    if isinstance(err, errors.ConnectionFailed):
        return f"{err} → check that the service is reachable (or unset PODBOOK_URL to use the local emulator)"
    if isinstance(err, errors.ConfigError):
        return f"{err} → fix the configuration named above"
    return str(err)


@contextmanager
def user_facing_errors() -> Iterator[None]:
    """Re-raise podbook's errors as :class:`UsageError` / :class:`ServiceError`.

    ``InvalidRequest`` (refused before sending) is a user mistake; everything else from the
    service or the network is a :class:`ServiceError`.
    """
    from podbook import errors

    try:
        yield
    except UsageError:
        raise
    except errors.InvalidRequest as err:
        raise UsageError(
            f"{err}\n  → fix the flags named above (see `%pod create --help`)"
        ) from None
    except errors.PodbookError as err:
        raise ServiceError(describe_failure(err)) from None
