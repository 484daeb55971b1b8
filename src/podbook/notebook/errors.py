"""Turn failures into the short messages a notebook user sees.

User mistakes in a magic line raise :class:`IPython.core.error.UsageError` (IPython prints
``UsageError: <message>`` without a traceback). Failures reported by the service or the
network raise :class:`ServiceError`, whose ``_render_traceback_`` makes IPython (terminal or
kernel) print its lines instead of a traceback.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from IPython.core.error import UsageError

_FIXES = {
    400: "check the flags against `%{magic} --help` and the detail",
    401: "set RUNPOD_API_KEY to a valid key (or unset it to use the local emulator)",
    403: "this key may not do that; use a key with write access",
    409: "not allowed in the current state; see the pod's actions with `%pod show ID`",
    422: "fix the fields listed below",
    429: "the rate limit was reached; wait a moment and retry",
}
# 409 fixes of magics other than %pod (looked up like _NOT_FOUND).
_CONFLICT = {
    "endpoint": "the built-in endpoints (echo, stream-demo) are read-only; "
    "use an endpoint of your own (`%endpoint list`)",
}
_NOT_FOUND = {
    "pod create": "check the IDs you gave (--template, --registry, --volume)",
    "pod": "check the pod ID with `%pod list --all`",
    "cluster": "check the cluster ID (client.clusters.list() lists yours)",
    "catalog": "check the service URL",
    "template": "check the template ID with `%template list` (public: `%template list --public`)",
    "volume": "check the volume ID with `%volume list`",
    "registry": "check the credential ID with `%registry list`",
    "registry revoke": "check the delegation ID with `%registry delegations`",
    "endpoint": "check the endpoint ID with `%endpoint list`",
    "chat": "check the endpoint ID (built-in: chat-demo; serve your own generator with "
    "`%endpoint serve FUNC --openai --name ID`)",
    "endpoint create": "check the --template ID with `%template list`",
    "endpoint update": "check the endpoint ID (`%endpoint list`) and the --template ID",
}
# Request fields of `%pod create` and the flag that sets each (most specific first).
_CREATE_FLAGS = {
    "$.gpu.allowedCudaVersions": "--cuda",
    "$.gpu.minCudaVersion": "--min-cuda",
    "$.gpu.count": "--gpu",
    "$.gpu.id": "--gpu",
    "$.cpu.vcpuCount": "--cpu",
    "$.cpu.id": "--cpu",
    "$.mounts.persistent": "--persistent",
    "$.mounts.network": "--volume",
    "$.allowedCudaVersions": "--cuda",
    "$.minCudaVersion": "--min-cuda",
    "$.templateId": "--template",
    "$.dataCenterIds": "--dc",
    "$.globalNetworking": "--global-networking",
}
_CREATE_FLAGS.update(
    {f"$.{name}": f"--{name}" for name in ("gpu", "cpu", "image", "name", "disk", "ports")}
)
_CREATE_FLAGS.update({f"$.{name}": f"--{name}" for name in ("env", "registry", "args", "cloud")})
# Magics whose request fields are named by the flags above.
_FLAG_NAMED = ("pod create", "template create", "template update")
_WIRE_PATH = re.compile(r"\$\.[A-Za-z0-9_.\[\]]+")


def name_flags(text: str) -> str:
    """``$.mounts.persistent: ...`` → ``$.mounts.persistent (--persistent): ...``."""

    def annotate(match: re.Match[str]) -> str:
        path = match.group(0)
        flag = next((f for p, f in _CREATE_FLAGS.items() if path.startswith(p)), None)
        return f"{path} ({flag})" if flag else path

    return _WIRE_PATH.sub(annotate, text)


class ServiceError(Exception):
    """A failure reported by the service or the connection, shown without a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def _render_traceback_(self) -> list[str]:
        lines = self.message.splitlines() or [""]
        return [f"{type(self).__name__}: {lines[0]}", *lines[1:]]


LOCAL_EMULATOR_GONE = "the local emulator has stopped; run the magic again to start it again"


def is_local_emulator_gone(err: BaseException) -> bool:
    """True when ``err`` is the client's report of a local emulator that stopped answering."""
    return "local emulator" in str(getattr(err, "hint", ""))


def describe_failure(err: BaseException, magic: str = "pod") -> str:
    """One readable line ending in the fix, plus the service's ``errors[]`` lines."""
    from podbook import errors

    head, *rest = str(err).splitlines() or [type(err).__name__]
    if isinstance(err, errors.APIError):
        status = err.status or 0
        not_found = _NOT_FOUND.get(magic) or _NOT_FOUND.get(magic.split()[0], "")
        fix = not_found if status == 404 else _FIXES.get(status, "")
        if status == 409:
            fix = _CONFLICT.get(magic) or _CONFLICT.get(magic.split()[0], fix)
        if status >= 500:
            fix = "the service failed; retry later"
        fix = fix.replace("{magic}", magic)
    elif isinstance(err, errors.InvalidRequest):
        fix = f"fix the flags named (see `%{magic} --help`)"
    elif isinstance(err, errors.ConnectionFailed):
        head = f"Could not reach {err.url} ({err.method}): {err.reason}"
        fix = (
            LOCAL_EMULATOR_GONE if is_local_emulator_gone(err) else err.hint or "check your network"
        )
    else:  # ConfigError, LocalEmulatorError, ...: their message already names the fix
        fix = ""
    if fix and "→" not in head:
        head = f"{head} → {fix}"
    message = as_magics("\n".join([head, *rest]))
    return name_flags(message) if magic in _FLAG_NAMED else message


# The service's hints name REST routes; in a notebook the magic that lists the same is nearer.
_ROUTE_HINTS = {
    "GET /v2/catalog/gpus": "%catalog gpus",
    "GET /v2/catalog/cpus": "%catalog cpus",
    "GET /v2/network-volumes": "%volume list",
    "POST /v2/network-volumes": "%volume create",
    "GET /v2/registries": "%registry list",
    "GET /v2/templates": "%template list",
}


def as_magics(message: str) -> str:
    """``message`` with the REST routes it names replaced by the magics that do the same."""
    for route, magic in _ROUTE_HINTS.items():
        message = message.replace(route, magic)
    return message


def one_line_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (a magic) whose ``UsageError`` / ``ServiceError`` lines are made safe to
    show: control characters escaped and a huge echoed argument cut (see ``echo_safe``)."""
    from podbook.notebook.parsing import echo_safe

    @functools.wraps(method)
    def magic(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except (UsageError, ServiceError) as err:
            text = "\n".join(echo_safe(line, 1000) for line in str(err).splitlines())
            err.args = (text,)
            if isinstance(err, ServiceError):
                err.message = text
            raise

    magic.__self__ = getattr(method, "__self__", None)  # type: ignore[attr-defined]
    return magic


@contextmanager
def user_facing_errors(
    magic: str = "pod", describe: Callable[[BaseException, str], str] = describe_failure
) -> Iterator[None]:
    """Re-raise podbook's errors as :class:`UsageError` / :class:`ServiceError`, in one line
    (``describe(err, magic)``).

    ``InvalidRequest`` (refused before sending) is a user mistake; everything else from the
    service or the network is a :class:`ServiceError`.
    """
    from podbook import errors

    try:
        yield
    except UsageError:
        raise
    except errors.InvalidRequest as err:
        raise UsageError(describe(err, magic)) from None
    except errors.RemoteExecutionError:
        raise  # the code failed in the pod: IPython shows the remote traceback
    except errors.PodbookError as err:
        raise ServiceError(describe(err, magic)) from None
