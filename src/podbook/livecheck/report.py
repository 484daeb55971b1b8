"""How the live check reports: one line per check (✓/✗/–, what, timing), progress lines, a
summary; every line scrubbed of the API key. Also finds response fields the models do not
know (the service adds fields; they are kept, and named here)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["CheckFailed", "Outcome", "Reporter", "unknown_fields"]

T = TypeVar("T")

_MARKS = {"ok": "✓", "failed": "✗", "skipped": "–"}
_ASCII_MARKS = {"ok": "ok", "failed": "FAIL", "skipped": "skip"}
_MOST_FIELDS_SHOWN = 6


class CheckFailed(Exception):
    """A check's own verdict: the message is the one line shown after ✗."""


@dataclass
class Outcome:
    """What one check found: ``ok`` with its ``value``, or not (the line has the reason)."""

    ok: bool
    value: Any = None


@dataclass
class Reporter:
    """Writes the check lines to ``out`` and counts them.

    ``secrets`` are replaced by ``***`` in every line written (the key never shows, even if a
    message were to carry it).
    """

    out: TextIO
    secrets: Iterable[str] = ()
    clock: Callable[[], float] = time.monotonic
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    started: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.secrets = tuple(s for s in self.secrets if s)
        self.started = self.clock()
        encoding = getattr(self.out, "encoding", None) or "utf-8"
        try:
            "".join(_MARKS.values()).encode(encoding)
            self._marks = _MARKS
        except (UnicodeEncodeError, LookupError):
            self._marks = _ASCII_MARKS

    def line(self, text: str) -> None:
        """Write one line (scrubbed) and flush, so progress shows as it happens."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        self.out.write(text + "\n")
        self.out.flush()

    def progress(self, text: str) -> None:
        """An indented progress line under the running check."""
        self.line(f"    … {text}")

    def skip(self, name: str, why: str) -> None:
        """A check that was not run, and why (does not fail the run)."""
        self.skipped += 1
        self.line(f"{self._marks['skipped']} {name:<20} skipped: {why}")

    def check(self, name: str, run: Callable[[], tuple[str, T]]) -> Outcome:
        """Run one check: ``run()`` returns (one-line summary, value).

        Any exception but an interrupt fails the check with its one-line message (no
        traceback); an interrupt (Ctrl-C) goes through to the caller's cleanup.
        """
        start = self.clock()
        try:
            summary, value = run()
        except Exception as exc:  # every failure becomes one ✗ line
            self.failed += 1
            self._result("failed", name, _one_line(exc), start)
            return Outcome(False)
        self.passed += 1
        fields = unknown_fields(value)
        if fields:
            shown = ", ".join(fields[:_MOST_FIELDS_SHOWN])
            more = len(fields) - _MOST_FIELDS_SHOWN
            summary += f"; fields the models do not know: {shown}" + (
                f" (+{more} more)" if more > 0 else ""
            )
        self._result("ok", name, summary, start)
        return Outcome(True, value)

    def fail(self, name: str, message: str) -> None:
        """A failed check that was not run through :meth:`check` (e.g. the cleanup)."""
        self.failed += 1
        self._result("failed", name, message, self.clock())

    def elapsed(self) -> float:
        """Seconds since the reporter was made."""
        return self.clock() - self.started

    def _result(self, kind: str, name: str, text: str, start: float) -> None:
        seconds = self.clock() - start
        self.line(f"{self._marks[kind]} {name:<20} {text}  ({seconds:.2f} s)")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    lines = text.splitlines()
    head = lines[0]
    if len(lines) > 1:
        head += f" (+{len(lines) - 1} more lines)"
    if not isinstance(exc, CheckFailed) and type(exc).__module__.split(".")[0] != "podbook":
        head = f"{type(exc).__name__}: {head}"
    return head + _fields_that_did_not_fit(exc)


def _fields_that_did_not_fit(exc: BaseException) -> str:
    """Where an answer broke the models (paths and rules, never the values), when the error
    came from validating it."""
    cause = exc.__cause__ or exc.__context__
    if not isinstance(cause, ValidationError):
        return ""
    errors = cause.errors(include_input=False, include_url=False)
    shown = [
        f"{'.'.join(str(part) for part in error['loc']) or '(body)'}: {error['msg']}"
        for error in errors[:3]
    ]
    more = f"; +{len(errors) - 3} more" if len(errors) > 3 else ""
    return " — " + "; ".join(shown) + more


def unknown_fields(value: Any) -> list[str]:
    """``Model.field`` names of the properties in ``value`` that no model declares.

    Walks models, pydantic dataclass records, lists and dicts. Only names, never values.
    """
    found: set[str] = set()
    _walk(value, found, depth=0)
    return sorted(found)


def _walk(value: Any, found: set[str], depth: int) -> None:
    if depth > 12 or value is None or isinstance(value, str | int | float | bool):
        return
    if isinstance(value, BaseModel):
        name = type(value).__name__
        found.update(f"{name}.{key}" for key in value.model_extra or {})
        for key in type(value).model_fields:
            _walk(getattr(value, key, None), found, depth + 1)
        return
    declared = getattr(type(value), "__dataclass_fields__", None)
    if declared is not None:
        name = type(value).__name__
        for key, item in vars(value).items():
            if key not in declared:
                found.add(f"{name}.{key}")
            else:
                _walk(item, found, depth + 1)
        return
    if isinstance(value, list | tuple):
        for item in value:
            _walk(item, found, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _walk(item, found, depth + 1)
