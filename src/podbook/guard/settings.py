"""What a pod's guard enforces (idle stop, time limit, action) and how it is armed.

A guarded pod carries its settings in its environment (``PODBOOK_IDLE_STOP``,
``PODBOOK_MAX_RUNTIME`` in whole seconds, ``PODBOOK_IDLE_ACTION``), the guard script in
``PODBOOK_GUARD`` and its own start command in ``PODBOOK_ARGS``; its ``args`` become a short
launcher that starts the guard in the background and then runs ``PODBOOK_ARGS`` unchanged
(see ``docs/cost-control.md``). Nothing here imports httpx or pydantic.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal, get_args

__all__ = [
    "GUARD_ARGS",
    "GuardSettings",
    "arm",
    "arm_notes",
    "fold",
    "format_duration",
    "original_args",
    "parse_duration",
    "settings_of",
]

IdleAction = Literal["stop", "terminate"]
IDLE_ACTIONS: tuple[str, ...] = get_args(IdleAction)
DEFAULT_GPU_IDLE_UTIL = 10
"""GPU utilization (percent) at or above which an NVIDIA GPU counts as busy."""

# The pod's ``args`` once armed: start the guard, then the pod's own command (or, without
# one, the service images' /start.sh, else keep the container alive as a base image does).
# No single quote inside, so the service's shell-word split and ``sh -c`` read it alike.
GUARD_ARGS = (
    'sh -c \'(sh -c "$PODBOOK_GUARD" podbook-guard &); '
    'if [ -n "$PODBOOK_ARGS" ]; then exec sh -c "$PODBOOK_ARGS"; '
    "elif [ -x /start.sh ]; then exec /start.sh; "
    "else exec tail -f /dev/null; fi'"
)

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])", re.IGNORECASE)


def parse_duration(value: str | float | int, name: str = "duration") -> int:
    """Whole seconds (rounded up, at least 1) of ``90s``, ``30m``, ``4h``, ``1h30m``, ``2d``
    or a number of seconds; :class:`ValueError` naming ``name`` and the forms accepted."""
    fix = f"{name} {value!r} is not a duration; write it like 90s, 30m, 4h or 1h30m"
    if isinstance(value, bool):
        raise ValueError(fix)
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = value.strip().replace(" ", "")
        try:
            seconds = float(text)
        except ValueError:
            parts = _DURATION.findall(text)
            if not parts or "".join(n + u for n, u in parts).lower() != text.lower():
                raise ValueError(fix) from None
            seconds = sum(float(n) * _UNITS[u.lower()] for n, u in parts)
    if not 0 < seconds < 366 * 86400:
        raise ValueError(f"{name} {value!r} must be more than 0 s and less than a year")
    return max(1, math.ceil(seconds))


def format_duration(seconds: float) -> str:
    """``90`` → ``1m30s``, ``1800`` → ``30m``, ``14400`` → ``4h``, ``5`` → ``5s``."""
    seconds = max(0, round(seconds))
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


@dataclass(frozen=True)
class GuardSettings:
    """A pod guard's settings: at least one of ``idle_stop`` / ``max_runtime`` (seconds)."""

    idle_stop: int | None = None
    """Stop (or terminate) after this many seconds with nothing going on in the pod."""
    max_runtime: int | None = None
    """Stop this many seconds after the pod became RUNNING, whatever it is doing."""
    idle_action: IdleAction = "stop"
    """What the guard does when it fires: ``stop`` (billing stops, the volume stays) or
    ``terminate`` (the pod is deleted)."""
    gpu_idle_util: int = DEFAULT_GPU_IDLE_UTIL
    """GPU utilization in percent at or above which an NVIDIA GPU counts as busy."""

    @classmethod
    def build(
        cls,
        *,
        idle_stop: str | float | None = None,
        max_runtime: str | float | None = None,
        idle_action: str | None = None,
    ) -> GuardSettings | None:
        """Settings from user input (durations as text or seconds), or None when neither
        duration is given; :class:`ValueError` with one line for a bad value."""
        action = (idle_action or "stop").strip().lower()
        if action not in IDLE_ACTIONS:
            raise ValueError(f"idle_action {idle_action!r} is invalid; use stop or terminate")
        if idle_stop is None and max_runtime is None:
            if idle_action is not None:
                raise ValueError("idle_action needs idle_stop or max_runtime; give one of them")
            return None
        return cls(
            idle_stop=None if idle_stop is None else parse_duration(idle_stop, "idle_stop"),
            max_runtime=None if max_runtime is None else parse_duration(max_runtime, "max_runtime"),
            idle_action=action,  # type: ignore[arg-type]
        )

    def to_env(self) -> dict[str, str]:
        """The variables the guard reads."""
        env = {"PODBOOK_IDLE_ACTION": self.idle_action}
        if self.idle_stop is not None:
            env["PODBOOK_IDLE_STOP"] = str(self.idle_stop)
        if self.max_runtime is not None:
            env["PODBOOK_MAX_RUNTIME"] = str(self.max_runtime)
        if self.gpu_idle_util != DEFAULT_GPU_IDLE_UTIL:
            env["PODBOOK_GPU_IDLE_UTIL"] = str(self.gpu_idle_util)
        return env

    def describe(self) -> str:
        """``idle stop 30m, max runtime 4h, then stop`` (with ``GPU busy from 60%`` when the
        threshold is not the default)."""
        parts = []
        if self.idle_stop is not None:
            parts.append(f"idle stop {format_duration(self.idle_stop)}")
            if self.gpu_idle_util != DEFAULT_GPU_IDLE_UTIL:
                parts.append(f"GPU busy from {self.gpu_idle_util}%")
        if self.max_runtime is not None:
            parts.append(f"max runtime {format_duration(self.max_runtime)}")
        return ", ".join(parts) + f", then {self.idle_action}"


def guard_script() -> str:
    """The guard: a POSIX shell script (``guard.sh``) run inside the pod."""
    return resources.files("podbook.guard").joinpath("guard.sh").read_text(encoding="utf-8")


def arm(body: Mapping[str, Any], settings: GuardSettings, *, base_args: str | None = None) -> dict:
    """A pod create body (wire names) with the guard added: its settings, the script and the
    pod's own start command in ``env``, the launcher as ``args``.

    ``base_args`` is the start command when ``body`` has none of its own (a template's).
    """
    armed = dict(body)
    own = armed.get("args")
    if own == GUARD_ARGS:  # armed already: keep the command it wraps
        own = (armed.get("env") or {}).get("PODBOOK_ARGS", "")
    env = {str(k): str(v) for k, v in (armed.get("env") or {}).items()}
    # PODBOOK_GPU_IDLE_UTIL stays as the user set it in ``env`` (the documented way to change
    # the threshold) unless ``settings`` has one of its own.
    for name in ("PODBOOK_IDLE_STOP", "PODBOOK_MAX_RUNTIME"):
        env.pop(name, None)
    env.update(settings.to_env())
    env["PODBOOK_ARGS"] = (own if own is not None else base_args) or ""
    env["PODBOOK_GUARD"] = guard_script()
    armed["env"] = env
    armed["args"] = GUARD_ARGS
    return armed


def _env_of(pod: Any) -> Mapping[str, Any]:
    env = pod.get("env") if isinstance(pod, Mapping) else getattr(pod, "env", None)
    return env if isinstance(env, Mapping) else {}


def settings_of(pod: Any) -> GuardSettings | None:
    """The guard settings of a pod (a record, a mapping or a ``Pod``), or None if unguarded."""
    env = _env_of(pod)
    if "PODBOOK_GUARD" not in env:
        return None
    try:
        idle = int(env["PODBOOK_IDLE_STOP"]) if env.get("PODBOOK_IDLE_STOP") else None
        limit = int(env["PODBOOK_MAX_RUNTIME"]) if env.get("PODBOOK_MAX_RUNTIME") else None
        util = int(env.get("PODBOOK_GPU_IDLE_UTIL") or DEFAULT_GPU_IDLE_UTIL)
    except ValueError:
        return None
    action = env.get("PODBOOK_IDLE_ACTION") or "stop"
    if (idle is None and limit is None) or action not in IDLE_ACTIONS:
        return None
    return GuardSettings(idle, limit, action, util)


_GUARD_ENV = (
    "PODBOOK_GUARD",
    "PODBOOK_ARGS",
    "PODBOOK_IDLE_STOP",
    "PODBOOK_MAX_RUNTIME",
    "PODBOOK_IDLE_ACTION",
    "PODBOOK_GPU_IDLE_UTIL",
)


def fold(pod: Mapping[str, Any]) -> dict[str, Any]:
    """A pod dict (wire form) as people read it: its own ``args``, ``env`` without the guard's
    variables, and ``guardSettings`` (the settings as a dict, or None when unguarded)."""
    settings = settings_of(pod)
    folded = dict(pod)
    folded["guardSettings"] = None
    if settings is None:
        return folded
    folded["args"] = original_args(pod)
    folded["env"] = {k: v for k, v in (pod.get("env") or {}).items() if k not in _GUARD_ENV}
    folded["guardSettings"] = {
        "idle_stop": settings.idle_stop,
        "max_runtime": settings.max_runtime,
        "idle_action": settings.idle_action,
        "gpu_idle_util": settings.gpu_idle_util,
        "summary": settings.describe(),
    }
    return folded


def original_args(pod: Any) -> str:
    """The pod's own start command: what the guard's launcher runs, else its ``args``."""
    args = pod.get("args") if isinstance(pod, Mapping) else getattr(pod, "args", "")
    if args == GUARD_ARGS:
        return str(_env_of(pod).get("PODBOOK_ARGS") or "")
    return str(args or "")


_BARE_IMAGES = frozenset({"ubuntu", "debian", "alpine", "busybox", "centos", "rockylinux"})
_SERVICE_IMAGES = "runpod/"
"""Images whose own command is ``/start.sh``, which the guard's launcher runs without args."""


def arm_notes(body: Mapping[str, Any]) -> list[str]:
    """One line per reason the guard of an armed create ``body`` may not work as asked: an
    image known to lack ``curl`` and ``python3`` (:func:`image_warning`), or no start command
    of the pod's own on an image that is not one of the service's (the launcher then runs
    ``/start.sh`` if the image has one, else only keeps the pod up: the image's own command
    does not run). Empty for a body that is not armed."""
    env = _env_of(body)
    if body.get("args") != GUARD_ARGS:
        return []
    image = str(body.get("image") or "")
    notes = [note] if (note := image_warning(image)) else []
    if not env.get("PODBOOK_ARGS") and image and not image.startswith(_SERVICE_IMAGES):
        notes.append(
            f"note: the guarded pod runs no command of its own: with the guard, image "
            f"{image!r} starts /start.sh if it has one, else it only stays up, and its own "
            "command does not run (give args with the command it should run)"
        )
    return notes


def image_warning(image: str | None) -> str | None:
    """One line when ``image`` is a bare base image known to have neither ``curl`` nor
    ``python3``, which the guard needs; None otherwise (the guard itself reports an image
    that lacks both, in the pod's log, once it runs)."""
    if not image:
        return None
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    if name not in _BARE_IMAGES:
        return None
    return (
        f"note: image {image!r} usually has neither curl nor python3, which the pod guard "
        "needs; without one of them the pod has no idle stop or time limit (use an image "
        "that has curl or python3, or install one in your start command)"
    )
