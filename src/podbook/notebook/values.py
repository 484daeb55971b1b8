"""argparse value types of the magics: each parses one flag value or names what it expects.

A bad value raises :class:`argparse.ArgumentTypeError`, which the parser turns into one
``UsageError`` line such as ``argument --gpu: expected ID[:COUNT], e.g. ...``.
"""

from __future__ import annotations

import argparse
import keyword
from collections.abc import Callable
from typing import Any

from podbook.guard.settings import parse_duration


def value_type(fn: Callable[[str], Any], expected: str) -> Callable[[str], Any]:
    """Wrap ``fn`` so that a bad value names what was expected."""

    def parse(text: str) -> Any:
        try:
            return fn(text)
        except (ValueError, TypeError):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None

    parse.__name__ = expected
    return parse


def positive_int(text: str) -> int:
    """``text`` as a whole number of at least 1 (``ValueError`` otherwise)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise ValueError(text)
    return value


def _gpu(text: str) -> dict[str, Any]:
    gpu_id, sep, count = text.rpartition(":")
    if not sep:
        gpu_id, count = text, ""
    gpu_id = gpu_id.strip()
    if not gpu_id:
        raise ValueError(text)
    spec: dict[str, Any] = {"id": gpu_id}
    if count:
        spec["count"] = positive_int(count)
    return spec


def _cpu(text: str) -> dict[str, Any]:
    flavor, sep, vcpus = text.rpartition(":")
    if not sep or not flavor.strip():
        raise ValueError(text)
    return {"id": flavor.strip(), "vcpu_count": positive_int(vcpus)}


def _env_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(text)
    return key.strip(), value


def _volume(text: str) -> dict[str, str]:
    volume_id, sep, path = text.partition(":")
    if not sep or not volume_id or not path.startswith("/"):
        raise ValueError(text)
    return {"volume_id": volume_id, "path": path}


def _persistent(text: str) -> dict[str, Any]:
    size, sep, path = text.partition(":")
    if not sep or not path.startswith("/"):
        raise ValueError(text)
    return {"size": positive_int(size), "path": path}


def _comma_list(text: str) -> list[str]:
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise ValueError(text)
    return items


def _port_list(text: str) -> list[str]:
    ports = _comma_list(text)
    for port in ports:
        number, sep, proto = port.partition("/")
        if not sep or not number.isdigit() or proto not in ("http", "tcp"):
            raise ValueError(text)
    return ports


def _cloud(text: str) -> str:
    value = text.strip().upper()
    if value not in ("SECURE", "COMMUNITY"):
        raise ValueError(text)
    return value


# Names the shell itself needs: storing a result there breaks every later cell.
_SHELL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "_ih", "_oh", "_dh"})


def _identifier(text: str) -> str:
    if not text.isidentifier() or keyword.iskeyword(text):
        raise ValueError(text)
    if text in _SHELL_NAMES or (text.startswith("__") and text.endswith("__")) or text == "_":
        raise ValueError(text)
    return text


GPU = value_type(_gpu, 'ID[:COUNT], e.g. "NVIDIA GeForce RTX 4090:2" (see %catalog gpus)')
CPU = value_type(_cpu, "FLAVOR:VCPUS, e.g. cpu3c:4")
ENV = value_type(_env_pair, "KEY=VALUE")
VOLUME = value_type(_volume, "VOLUME_ID:/mount/path")
PERSISTENT = value_type(_persistent, "SIZE_GB:/mount/path, e.g. 20:/workspace")
PORTS = value_type(_port_list, "a comma list of PORT/http or PORT/tcp, e.g. 8888/http,22/tcp")
COMMA_LIST = value_type(_comma_list, "a comma-separated list")
CLOUD = value_type(_cloud, "SECURE or COMMUNITY")
POSITIVE_INT = value_type(positive_int, "a whole number >= 1")
POSITIVE_SECONDS = value_type(_positive_seconds, "a number of seconds > 0, e.g. 30")
DURATION = value_type(parse_duration, "a duration under a year such as 90s, 30m, 4h or 1h30m")
VARIABLES = value_type(
    lambda text: [_identifier(name) for name in _comma_list(text)],
    "a comma list of Python variable names, e.g. x,model",
)
NAME = value_type(_identifier, "a Python variable name (not one the shell uses, like In)")


def _ready(text: str) -> tuple[str, ...]:
    from podbook.client.readiness import parse_ready
    from podbook.errors import InvalidRequest

    try:
        names = parse_ready(text)
    except InvalidRequest as exc:
        raise argparse.ArgumentTypeError(exc.detail.removeprefix("ready: ")) from None
    if not names:
        raise argparse.ArgumentTypeError("expected services such as ssh,jupyter")
    return names


READY = _ready
"""``ssh,jupyter``, ``8000/http``: the services ``--wait`` waits for."""
