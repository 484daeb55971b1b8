"""Container configuration shared by pods, clusters, templates and endpoints: mounts, common
fields, and the limits of what a process can be started with.

``args``, ``env`` and ``ports`` are checked here once, for every request that carries them
(and so by the client before sending and by the emulator on receipt): what no process can be
started with is refused up front instead of being stored and failing later.

- ``args`` is the one string of ``/bin/sh -c ARGS``; an ``env`` variable is the one string
  ``KEY=VALUE``. Neither may hold a NUL character or a lone surrogate, and each is at most
  :data:`MAX_ARG_STRING_BYTES` bytes in UTF-8 (Linux refuses a longer one: "Argument list too
  long"). A variable's name is not empty and has no ``=``.
- ``args`` and ``env`` together are at most :data:`MAX_ARGS_ENV_BYTES` as Linux counts them
  (:func:`container_size_errors`), well under the usual 2 MiB ``ARG_MAX``, so the few
  variables the runtime adds still fit.
- At most :data:`MAX_PORTS` ``ports``, each ``port/protocol`` once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from .base import Omittable, RequestModel, ResponseModel
from .types import PortSpec, parse_port

__all__ = [
    "MAX_ARG_STRING_BYTES",
    "MAX_ARGS_ENV_BYTES",
    "MAX_PORTS",
    "ContainerArgs",
    "ContainerEnv",
    "ContainerPorts",
    "container_size_errors",
    "PersistentMount",
    "NetworkMount",
    "Mounts",
    "TemplateMounts",
    "PodPersistentMount",
    "PodNetworkMount",
    "PodMounts",
    "ProcessLimits",
    "ContainerFields",
    "mount_kind",
]


class PersistentMount(RequestModel):
    """Host-local storage pinned to the pod's machine (deprecated in favour of network mounts)."""

    size: int = Field(ge=10, description="GB of host-local storage; at least 10.")
    path: str = Field(description="Mount path inside the container; changeable by PATCH.")


class NetworkMount(RequestModel):
    """A network volume mounted into the container."""

    volume_id: str = Field(description="Existing network volume in the pod's data center.")
    path: str = Field(description="Mount path inside the container; changeable by PATCH.")


class Mounts(RequestModel):
    """Storage mounts of a pod: at most one of ``persistent`` or ``network``.

    The same shape is used in requests and in the pod record (the contract forbids extra
    properties here in both directions).
    """

    persistent: Omittable[PersistentMount] = None
    network: Omittable[list[NetworkMount]] = Field(default=None, max_length=1)


class TemplateMounts(RequestModel):
    """Mounts of a template: a single persistent mount at most."""

    persistent: Omittable[PersistentMount] = None


class PodPersistentMount(ResponseModel):
    """A persistent mount as a pod or template record shows it."""

    size: int
    path: str


class PodNetworkMount(ResponseModel):
    """A network mount as a pod record shows it."""

    volume_id: str
    path: str


class PodMounts(ResponseModel):
    """The ``mounts`` of a pod or template record.

    The response twin of :class:`Mounts`: like every response model it keeps what it does
    not know and accepts ``null``, so a record read back from ``model_dump()`` validates again.
    """

    persistent: PodPersistentMount | None = None
    network: list[PodNetworkMount] | None = None


def mount_kind(mounts: Mounts | PodMounts | None) -> str | None:
    """``"persistent"``, ``"network"`` or ``None`` (no mount) for a pod's mounts."""
    if mounts is None:
        return None
    if mounts.persistent is not None:
        return "persistent"
    if mounts.network:
        return "network"
    return None


# --- what a process can be started with ---------------------------------------------------

MAX_ARG_STRING_BYTES: int = 131_071
"""The most UTF-8 bytes of ``args``, and of one ``KEY=VALUE`` variable of ``env``: Linux's
``MAX_ARG_STRLEN`` (128 KiB, 131,072 bytes) counts a string with its terminating NUL."""

MAX_ARGS_ENV_BYTES: int = 1_048_576
"""The most ``args`` and ``env`` may take together (1 MiB), counted as Linux counts them
against ``ARG_MAX`` (see :func:`container_size_errors`). ``ARG_MAX`` is usually 2 MiB; the
other half is left to the variables the runtime adds (``RUNPOD_*``, ``PATH``, ``HOME``...)."""

MAX_PORTS: int = 64
"""The most ``ports`` a pod, template, cluster or endpoint may expose (the service states no
number): each is a published port the runtime binds and forwards."""

_STRING_OVERHEAD = 9
"""What Linux adds to each argument or environment string against ``ARG_MAX``: its
terminating NUL and its 8-byte pointer."""


def _utf8_size(value: str) -> int:
    """The UTF-8 size of ``value``; a lone surrogate (which no process can be given) is
    refused with a one-line reason."""
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise PydanticCustomError(
            "lone_surrogate",
            "must be valid Unicode text: it holds a lone surrogate (\\ud800-\\udfff), which"
            " no process can be given; send the character it stands for",
        ) from None


def _check_process_string(value: str, what: str) -> int:
    """Refuse a NUL character or a lone surrogate in ``value``; its UTF-8 size."""
    if "\x00" in value:
        raise PydanticCustomError(
            "nul_character",
            f"must not contain a NUL character (\\u0000): {what} cannot hold one; remove it",
        )
    return _utf8_size(value)


def _too_long(subject: str, size: int, holder: str) -> PydanticCustomError:
    return PydanticCustomError(
        "process_string_too_long",
        f"{subject} {size:,} bytes in UTF-8; {holder} holds at most {MAX_ARG_STRING_BYTES:,}"
        " (Linux's MAX_ARG_STRLEN): pass larger data in a file or a volume",
    )


def _check_args(value: str) -> str:
    size = _check_process_string(value, "a process argument")
    if size > MAX_ARG_STRING_BYTES:
        raise _too_long("is", size, "the single argument of /bin/sh -c")
    return value


def _check_env_name(name: str) -> str:
    if not name:
        raise PydanticCustomError(
            "env_name", "a variable name must not be empty; name the variable"
        )
    if "=" in name:
        raise PydanticCustomError(
            "env_name",
            "a variable name cannot contain '=' (the environment stores NAME=VALUE);"
            " rename the variable",
        )
    _check_process_string(name, "an environment variable")
    return name


def _check_env_value(value: str) -> str:
    _check_process_string(value, "an environment variable")
    return value


def _check_env(env: dict[str, str]) -> dict[str, str]:
    for name, value in env.items():
        size = len(name.encode("utf-8")) + 1 + len(value.encode("utf-8"))
        if size > MAX_ARG_STRING_BYTES:
            raise _too_long(
                f"variable {json.dumps(name)} is, as NAME=VALUE,", size, "one environment string"
            )
    return env


def _check_port_count(value: Any) -> Any:
    if isinstance(value, list) and len(value) > MAX_PORTS:
        raise PydanticCustomError(
            "too_many_ports",
            f"has {len(value):,} ports; at most {MAX_PORTS} can be exposed: remove some",
        )
    return value


def _check_unique_ports(ports: list[str]) -> list[str]:
    seen: dict[tuple[int, str], str] = {}
    for spec in ports:
        key = parse_port(spec)
        if key in seen:
            twice = (
                f"{spec!r} is listed twice"
                if spec == seen[key]
                else f"{seen[key]!r} and {spec!r} are the same port/protocol"
            )
            raise PydanticCustomError("duplicate_port", f"{twice}; list each port/protocol once")
        seen[key] = spec
    return ports


ContainerArgs = Annotated[str, AfterValidator(_check_args)]
"""``args``: one ``/bin/sh -c`` argument; no NUL, at most :data:`MAX_ARG_STRING_BYTES`."""

ContainerEnv = Annotated[
    dict[
        Annotated[str, AfterValidator(_check_env_name)],
        Annotated[str, AfterValidator(_check_env_value)],
    ],
    AfterValidator(_check_env),
]
"""``env``: names neither empty nor holding ``=``; no NUL; each ``NAME=VALUE`` at most
:data:`MAX_ARG_STRING_BYTES`."""

ContainerPorts = Annotated[
    list[PortSpec],
    BeforeValidator(_check_port_count),
    Field(max_length=MAX_PORTS),
    AfterValidator(_check_unique_ports),
]
"""``ports``: at most :data:`MAX_PORTS` distinct ``port/protocol`` items (the count is checked
before any item is)."""


def container_size_errors(
    args: str | None, env: Mapping[str, str] | None, *, whose: str = ""
) -> list[str]:
    """``args`` and ``env`` together against :data:`MAX_ARGS_ENV_BYTES`: the error line, or none.

    Counted as Linux counts them: each string (``args``; each variable as ``NAME=VALUE``) is
    its UTF-8 bytes plus 9 (its NUL and its pointer). Used by every request model that carries
    both, and by the emulator on a pod's merged configuration (template, then PATCH), where
    ``whose`` says which (e.g. ``" (the pod's, after this PATCH)"``).
    """
    total = len(args.encode("utf-8")) + _STRING_OVERHEAD if args else 0
    for name, value in (env or {}).items():
        total += len(name.encode("utf-8")) + 1 + len(value.encode("utf-8")) + _STRING_OVERHEAD
    if total <= MAX_ARGS_ENV_BYTES:
        return []
    return [
        f"$: args and env{whose} take {total:,} bytes together (each string counted with its"
        f" NUL and pointer, as Linux does); at most {MAX_ARGS_ENV_BYTES:,} (1 MiB) fit: pass"
        " larger data in a file or a volume"
    ]


class ProcessLimits(RequestModel):
    """Checks ``args`` and ``env`` together against :data:`MAX_ARGS_ENV_BYTES` (→ 422).

    A base of every request model that declares both with :data:`ContainerArgs` and
    :data:`ContainerEnv` (:class:`ContainerFields`, endpoints); it declares no field itself,
    so each model keeps its own field order.
    """

    @model_validator(mode="after")
    def _check_args_and_env_size(self) -> ProcessLimits:
        errors = container_size_errors(getattr(self, "args", None), getattr(self, "env", None))
        if errors:
            raise PydanticCustomError("process_size", errors[0].removeprefix("$: "))
        return self


class ContainerFields(ProcessLimits):
    """Container fields every containerized request may carry (all optional)."""

    image: Omittable[str] = Field(default=None, description="Container image reference.")
    args: Omittable[ContainerArgs] = Field(default=None, description="Entrypoint arguments.")
    disk: Omittable[int] = Field(default=None, ge=1, description="Container disk in GB.")
    ports: Omittable[ContainerPorts] = Field(
        default=None, description="'port/protocol' items, each once."
    )
    env: Omittable[ContainerEnv] = Field(default=None, description="Environment variables.")
