"""``%billing [--last 7d] [--by day|hour|week|month] [--kind KIND] [-o NAME]`` and
``%billing --budget AMOUNT|off [--per day|week]``.

The chart: fetches ``/v2/billing`` (one stacked series per resource kind) or one kind's route
(one series per pod, endpoint, volume or cluster), shows the chart panel and returns a
:class:`BillingReport`. The budget: shows the bar of :mod:`.budget` and hands the budget to the
session's :mod:`.budgetguard`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from IPython.core.error import UsageError

from podbook.notebook import parsing
from podbook.notebook.billing import svg
from podbook.notebook.billing.budget import (
    DEFAULT_PERIOD,
    PERIODS,
    Budget,
    BudgetCommand,
    BudgetStatus,
    parse_amount,
)
from podbook.notebook.billing.chart import chart_data
from podbook.notebook.display import StaticView

KINDS = ("pods", "serverless", "endpoints", "network-volumes", "clusters")
BUCKETS = {"hour": 1, "day": 24, "week": 168, "month": 730}
_UNITS = {"h": 1, "d": 24, "w": 168, "m": 730}
_LAST = re.compile(r"^(\d+)\s*([hdwm])$")
MAX_BUCKETS = 1000


@dataclass(frozen=True)
class BillingCommand:
    """A parsed ``%billing`` line."""

    last_n: int
    bucket_size: str
    kind: str | None
    output: str | None


@dataclass
class BillingReport:
    """What ``%billing`` returns: the typed answer and the chart drawn from it."""

    response: Any
    chart: dict[str, Any] = field(repr=False)

    @property
    def total(self) -> float:
        """Total spend over the window, USD."""
        return float(self.chart["total"])

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        return {"text/plain": svg.render_text(self.chart), "text/html": svg.render_html(self.chart)}

    def __repr__(self) -> str:
        return svg.render_text(self.chart)


@cache
def _parser() -> parsing.MagicArgumentParser:
    parser = parsing.MagicArgumentParser(
        prog="%billing", description="Spend over time as a stacked bar chart, with a table."
    )
    parser.add_argument(
        "--last",
        metavar="N{h,d,w,m}",
        help="how far back: hours, days, weeks or months, e.g. 48h, 7d, 4w (default 7d)",
    )
    parser.add_argument("--by", choices=tuple(BUCKETS), help="bucket size (default day)")
    parser.add_argument(
        "--kind", choices=KINDS, help="one resource kind, stacked per resource (default: all)"
    )
    parser.add_argument(
        "--budget",
        metavar="AMOUNT|off",
        help="warn once when the account's spend in the period goes over AMOUNT US dollars "
        "(checked by this kernel while it runs); off clears it",
    )
    parser.add_argument(
        "--per",
        choices=tuple(PERIODS),
        help=f"the budget's period, UTC (default {DEFAULT_PERIOD})",
    )
    parsing.add_output_argument(parser)
    return parser


def _budget_command(ns: Any) -> BudgetCommand:
    chart_flags = [f"--{name}" for name in ("last", "by", "kind") if getattr(ns, name)]
    if chart_flags:
        raise UsageError(
            f"%billing: --budget takes only --per, not {', '.join(chart_flags)}; "
            "show the chart with a %billing line of its own."
        )
    amount = parse_amount(ns.budget)
    budget = None if amount is None else Budget(amount, ns.per or DEFAULT_PERIOD)
    return BudgetCommand(budget=budget, output=ns.output)


def parse_billing_line(line: str) -> BillingCommand | BudgetCommand:
    """The :class:`BillingCommand` (or, with ``--budget``, the :class:`BudgetCommand`) of a
    line (``HelpShown`` after ``--help``)."""
    parser = _parser()
    ns = parser.parse_args(parsing.split_line(line, parser.prog))
    if ns.budget is not None:
        return _budget_command(ns)
    if ns.per is not None:
        raise UsageError(
            "%billing: --per goes with --budget, e.g. %billing --budget 50 --per week."
        )
    ns.last = ns.last or "7d"
    ns.by = ns.by or "day"
    match = _LAST.match(ns.last.strip().lower())
    if not match or int(match.group(1)) < 1:
        raise UsageError(
            f"%billing: --last {ns.last!r} is not a duration; use a number and a unit, "
            "e.g. --last 48h, 7d, 4w or 3m."
        )
    hours = int(match.group(1)) * _UNITS[match.group(2)]
    last_n = max(1, math.ceil(hours / BUCKETS[ns.by]))
    if last_n > MAX_BUCKETS:
        raise UsageError(
            f"%billing: --last {ns.last} --by {ns.by} makes {last_n} bars; use a larger --by "
            f"(at most {MAX_BUCKETS} bars)."
        )
    return BillingCommand(last_n=last_n, bucket_size=ns.by, kind=ns.kind, output=ns.output)


def fetch_chart(client: Any, command: BillingCommand) -> tuple[Any, dict[str, Any]]:
    """Ask the service and build the chart."""
    window = {"last_n": command.last_n, "bucket_size": command.bucket_size}
    if command.kind is None:
        response = client.billing.list(**window)
    else:
        response = client.billing.kind(command.kind, **window)
    return response, chart_data(response, command.kind)


def billing(magics: Any, line: str) -> Any:
    """``%billing ...``: show the chart panel, return the :class:`BillingReport`."""
    from podbook.notebook.errors import user_facing_errors

    try:
        command = parse_billing_line(line)
    except parsing.HelpShown:
        return None
    if isinstance(command, BudgetCommand):
        return budget(magics, command)
    session = magics.session
    with user_facing_errors("billing"):
        response, chart = fetch_chart(session.client, command)
    report = BillingReport(response, chart)

    def live(item: BillingReport) -> Any:
        from podbook.notebook.billing.panel import BillingPanel

        return BillingPanel(item.chart, fetch=lambda: fetch_chart(session.client, command)[1])

    def static(item: BillingReport) -> StaticView:
        return StaticView(svg.render_text(item.chart), svg.render_html(item.chart))

    session.show(report, live, static)
    if command.output:
        magics.shell.user_ns[command.output] = report
    return report


def budget(magics: Any, command: BudgetCommand) -> BudgetStatus | None:
    """``%billing --budget AMOUNT [--per day|week]``: check now, show the bar, keep checking in
    the background, return the :class:`BudgetStatus`; ``--budget off``: stop, say so, ``None``."""
    from podbook.notebook.billing.budgetguard import budget_guard
    from podbook.notebook.errors import user_facing_errors

    session = magics.session
    guard = budget_guard(session)
    if command.budget is None:
        cleared = guard.clear()
        print(
            f"podbook: budget {cleared} cleared; spend is no longer checked."
            if cleared
            else "podbook: no budget was set; nothing to clear."
        )
        return None
    with user_facing_errors("billing"):
        status = guard.set(command.budget)
    session.show(status, lambda item: StaticView(item.text(), item.html()))
    if command.output:
        magics.shell.user_ns[command.output] = status
    return status
