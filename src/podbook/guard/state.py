"""What a pod's guard says of itself, read back from the pod's log.

The guard reports on its own stdout (the pod's container log), one line per change, each
ending in ``[key=value ...]``::

    podbook-guard: idle; stop in 30m [state=idle since=1764230000 deadline=1764231800 ...]

:func:`parse_line` reads one such line, :func:`latest` the last one of a log, and
:func:`read_status` asks the API for it. Works the same against the service and the
emulator: both serve ``GET /v2/pods/{id}/logs``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from podbook.guard.settings import GuardSettings, format_duration, settings_of

if TYPE_CHECKING:
    from podbook.client import Client

__all__ = ["GuardStatus", "latest", "parse_line", "read_status"]

PREFIX = "podbook-guard: "
_LINE = re.compile(r"^podbook-guard: (?P<text>.*?)\s*\[(?P<fields>state=[^\]]*)\]\s*$")
_BUSY = {
    "ssh": "SSH session open",
    "kernel": "a Jupyter kernel is running code",
    "gpu": "GPU in use",
}
READ_TAIL = 500
"""How many of the pod's last container log lines :func:`read_status` looks through."""


@dataclass(frozen=True)
class GuardStatus:
    """The guard's last report: ``state`` is ``armed``, ``idle``, ``busy``, ``off`` (Keep
    running chosen), ``fired`` (it stopped or terminated the pod), ``error`` (its call
    failed), ``unavailable`` (it cannot run in this image) or ``unknown`` (no report yet)."""

    state: str
    text: str = ""
    deadline: float | None = None
    """When it acts, epoch seconds (None while busy without a time limit, or off)."""
    since: float | None = None
    """Idle since, epoch seconds (``idle`` only)."""
    busy: tuple[str, ...] = ()
    """What keeps the pod busy: ``ssh``, ``kernel``, ``gpu``."""
    reason: str | None = None
    """Why it fired (``idle`` or ``max``) or why it is unavailable."""
    next: str | None = None
    """What the deadline is: ``idle`` (the idle stop) or ``max`` (the time limit)."""
    started: float | None = None
    hold: float | None = None
    """Extended until (epoch seconds), when Extend was used."""
    ts: str | None = None
    """When the line was logged."""
    settings: GuardSettings | None = field(default=None, compare=False)

    def describe(self, now: float | None = None) -> str:
        """One line for people: ``idle stop in 12 min``, ``busy: SSH session open``,
        ``stopped after 30m idle``."""
        now = time.time() if now is None else now
        action = self.settings.idle_action if self.settings else "stop"
        if self.state == "idle" and self.deadline is not None:
            left = max(0.0, self.deadline - now)
            what = "time limit" if self.next == "max" else f"idle {action}"
            return f"{what} in {_rounded(left)}"
        if self.state == "busy":
            line = "busy: " + ", ".join(_BUSY.get(b, b) for b in self.busy)
            if self.deadline is not None:
                line += f"; time limit in {_rounded(max(0.0, self.deadline - now))}"
            return line
        if self.state == "off":
            return "guard off: Keep running chosen"
        if self.state == "armed" and self.settings is not None:
            return f"guard armed: {self.settings.describe()}"
        if self.state == "fired":
            return fired_line(self)
        if self.state == "unknown" and self.settings is not None:
            return f"guard: {self.settings.describe()} (no report yet)"
        return self.text or "no report from the guard yet"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form (the pod panel's ``guard`` trait)."""
        data = asdict(self)
        data["busy"] = list(self.busy)
        data["settings"] = asdict(self.settings) if self.settings else None
        data["summary"] = self.describe()
        return data


def _rounded(seconds: float) -> str:
    """``12 min``, ``45 s``, ``3 h 10 min``: what a panel shows of a countdown."""
    if seconds < 90:
        return f"{max(0, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def _number(fields: Mapping[str, str], name: str) -> float | None:
    try:
        value = float(fields[name])
    except (KeyError, ValueError):
        return None
    return value if value > 0 else None


def parse_line(line: str, *, ts: str | None = None) -> GuardStatus | None:
    """The status one guard line reports, or None for any other line."""
    match = _LINE.match(line.strip())
    if match is None:
        return None
    fields = dict(part.split("=", 1) for part in match.group("fields").split() if "=" in part)
    idle = _number(fields, "idle")
    limit = _number(fields, "max")
    action = fields.get("action", "stop")
    settings = None
    if (idle or limit) and action in ("stop", "terminate"):
        settings = GuardSettings(
            idle_stop=int(idle) if idle else None,
            max_runtime=int(limit) if limit else None,
            idle_action=action,  # type: ignore[arg-type]
        )
    busy = fields.get("busy", "")
    return GuardStatus(
        state=fields.get("state", "unknown"),
        text=match.group("text"),
        deadline=_number(fields, "deadline"),
        since=_number(fields, "since"),
        busy=tuple(b for b in busy.split(",") if b),
        reason=fields.get("reason"),
        next=fields.get("next") if fields.get("next") in ("idle", "max") else None,
        started=_number(fields, "started"),
        hold=_number(fields, "hold"),
        ts=ts,
        settings=settings,
    )


def latest(lines: Iterable[Any]) -> GuardStatus | None:
    """The last guard status among log lines (``LogLine`` objects or strings)."""
    found = None
    for line in lines:
        text = line if isinstance(line, str) else getattr(line, "line", "")
        if text.startswith(PREFIX):
            status = parse_line(text, ts=getattr(line, "ts", None))
            if status is not None:
                found = status
    return found


def read_status(client: Client, pod: Any, *, idle: float = 0.5) -> GuardStatus | None:
    """The guard status of ``pod`` (a ``Pod`` or an id) from its log; None when the pod has no
    guard. ``unknown`` when the guard has not reported yet."""
    record = client.pods.get(pod) if isinstance(pod, str) else pod
    lines: Iterable[Any] = ()
    if settings_of(record) is not None:
        lines = client.pods.logs(record.id, source="container", tail=READ_TAIL, idle=idle)
    return status_from(record, lines)


def status_from(record: Any, lines: Iterable[Any]) -> GuardStatus | None:
    """The guard status of a pod record from its log lines: None without a guard, ``unknown``
    before the guard's first report."""
    settings = settings_of(record)
    if settings is None:
        return None
    status = latest(lines)
    return status if status is not None else GuardStatus(state="unknown", settings=settings)


def fired_line(status: GuardStatus) -> str:
    """``stopped after 30m idle`` / ``stopped: max runtime 4h reached`` of a fired guard."""
    if status.state != "fired" or status.settings is None:
        return status.text
    verb = "terminated" if status.settings.idle_action == "terminate" else "stopped"
    if status.reason == "max" and status.settings.max_runtime:
        return f"{verb}: max runtime {format_duration(status.settings.max_runtime)} reached"
    if status.settings.idle_stop:
        return f"{verb} after {format_duration(status.settings.idle_stop)} idle"
    return status.text
