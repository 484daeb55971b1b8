"""The lines a kernel prints about its pods as it ends: one line per kind of news."""

from __future__ import annotations

from podbook.api.types import BILLED_POD_STATUSES
from podbook.notebook.kernel_exit.settle import Outcome

PREFIX = "podbook: "
_VERBS = {"warn": "check", "stop": "stop", "terminate": "terminate"}


def _per_hour(cost: float) -> str:
    return f"${cost:.2f}/h"


def _name(outcome: Outcome) -> str:
    name = " ".join(outcome.pod.name.split())
    return name if len(name) <= 40 else name[:39] + "…"


def _pods(count: int) -> str:
    return "1 pod" if count == 1 else f"{count} pods"


def _ids(outcomes: list[Outcome]) -> str:
    return ", ".join(o.pod.id for o in outcomes)


def warning_line(running: list[Outcome]) -> str:
    """``podbook: 2 pods this kernel created are still running ($0.74/h): ...``."""
    total = sum(o.cost for o in running)
    listed = ", ".join(f"{o.pod.id} ({_name(o)}, {_per_hour(o.cost)})" for o in running)
    verb = "is" if len(running) == 1 else "are"
    return (
        f"{PREFIX}{_pods(len(running))} this kernel created {verb} still running "
        f"({_per_hour(total)}): {listed} — stop them with %pod stop ID, "
        'or set PodMagics.on_exit = "stop"'
    )


def done_line(verb: str, acted: list[Outcome]) -> str:
    """``podbook: stopped 2 pods this kernel created ($0.74/h): abc (name), ...``."""
    total = sum(o.cost for o in acted)
    listed = ", ".join(f"{o.pod.id} ({_name(o)})" for o in acted)
    return f"{PREFIX}{verb} {_pods(len(acted))} this kernel created ({_per_hour(total)}): {listed}"


def failure_line(action: str, failed: list[Outcome]) -> str:
    """``podbook: could not stop abc, def: <error>; ...`` (one error, the pods it hit)."""
    verb = _VERBS[action]
    fix = "check them with %pod list" if action == "warn" else f"{verb} them with %pod {verb} ID"
    return f"{PREFIX}could not {verb} {_ids(failed)}: {failed[0].error}; {fix}"


def timeout_line(unfinished: list[Outcome], budget: float) -> str:
    """``podbook: no answer within 2 s about abc, def; check them with %pod list``."""
    return (
        f"{PREFIX}no answer within {budget:g} s about {_ids(unfinished)} (this kernel "
        "created them); check them with %pod list"
    )


def report(finished: list[Outcome], unfinished: list[Outcome], budget: float) -> list[str]:
    """Every line to print, in a fixed order: warning, done, failures, timeouts."""
    lines = []
    running = [
        o
        for o in finished
        if o.action == "warn" and not o.error and o.status in BILLED_POD_STATUSES
    ]
    if running:
        lines.append(warning_line(running))
    for action, verb in (("stop", "stopped"), ("terminate", "terminated")):
        acted = [o for o in finished if o.action == action and o.acted]
        if acted:
            lines.append(done_line(verb, acted))
    failures: dict[tuple[str, str], list[Outcome]] = {}
    for outcome in finished:
        if outcome.error:
            failures.setdefault((outcome.action, outcome.error), []).append(outcome)
    lines += [failure_line(action, failed) for (action, _), failed in failures.items()]
    if unfinished:
        lines.append(timeout_line(unfinished, budget))
    return lines
