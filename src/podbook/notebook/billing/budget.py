"""``%billing --budget AMOUNT [--per day|week]``: the account's spend in the current period
against a budget, as a bar, and the one warning line of going over.

The service has no account-level budget: this is a local guard, checked by the notebook's
kernel while it runs (:mod:`.budgetguard`). The period is the current UTC day (the default)
or the current UTC week (Monday to Sunday), as the billing buckets of ``GET /v2/billing``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Any

from IPython.core.error import UsageError

from podbook.notebook.billing.chart import money, wire_dict

PERIODS = {"day": "today", "week": "this week"}
"""Each budget period and how the spend of its current bucket is named."""
DEFAULT_PERIOD = "day"
BAR_CELLS = 20
_COLORS = ((0.8, "#1a7f37"), (1.0, "#9a6700"), (math.inf, "#cf222e"))


@dataclass(frozen=True)
class Budget:
    """A spend limit of ``amount`` USD per ``per`` (``day`` or ``week``)."""

    amount: float
    per: str = DEFAULT_PERIOD

    def __str__(self) -> str:
        return f"{money(self.amount)}/{self.per}"


@dataclass(frozen=True)
class BudgetCommand:
    """A parsed ``%billing --budget ...`` line (``budget`` None: ``--budget off``)."""

    budget: Budget | None
    output: str | None = None


def parse_amount(text: str) -> float | None:
    """The amount of ``--budget TEXT`` in USD (``None`` for ``off``); a one-line
    :class:`UsageError` for anything else than a positive number."""
    word = text.strip()
    if word.lower() == "off":
        return None
    try:
        amount = float(word.removeprefix("$").replace(",", ""))
    except ValueError:
        amount = math.nan
    if not math.isfinite(amount) or amount <= 0:
        raise UsageError(
            f"%billing: --budget {word!r} is not a positive amount; give US dollars, "
            "e.g. --budget 10 --per day, or --budget off to clear it."
        )
    return amount


@dataclass(frozen=True)
class BudgetStatus:
    """The spend of the current period against the budget: what ``%billing --budget``
    shows and returns, and what the guard checks."""

    budget: Budget
    spent: float
    period_start: str
    check_seconds: float

    @property
    def over(self) -> bool:
        """True once the spend is above the budget."""
        return self.spent > self.budget.amount

    @property
    def fraction(self) -> float:
        """Spend ÷ budget."""
        return self.spent / self.budget.amount

    def headline(self) -> str:
        """``$3.20 spent today of your $10.00/day budget (32%)``."""
        return (
            f"{money(self.spent)} spent {PERIODS[self.budget.per]} of your {self.budget} budget "
            f"({self.fraction:.0%})"
        )

    def footnote(self) -> str:
        """What checks the budget, and where."""
        return (
            f"checked every {self.check_seconds:g} s while this kernel runs (a local guard: "
            "the service has no account-level budget); %billing --budget off clears it"
        )

    def bar_text(self) -> str:
        """``[██████░░░░░░░░░░░░░░]``."""
        filled = min(BAR_CELLS, round(self.fraction * BAR_CELLS))
        return "[" + "█" * filled + "░" * (BAR_CELLS - filled) + "]"

    def text(self) -> str:
        """The text/plain form: headline, bar, footnote."""
        over = "  OVER BUDGET" if self.over else ""
        return f"Budget: {self.headline()}\n  {self.bar_text()}{over}\n  {self.footnote()}"

    def html(self) -> str:
        """The text/html form: a bar filled to the spend (full and red when over)."""
        color = next(c for limit, c in _COLORS if self.fraction <= limit)
        width = min(100.0, self.fraction * 100)
        return (
            f'<div class="podbook-budget" data-over="{str(self.over).lower()}" '
            f'data-per="{self.budget.per}" data-spent="{self.spent:.8f}" '
            'style="font-family:system-ui,sans-serif;max-width:560px;'
            'color:var(--jp-ui-font-color1,#24292f)">'
            f"<div><b>Budget</b> · {escape(self.headline())}</div>"
            '<div class="podbook-budget-bar" role="progressbar" aria-valuemin="0" '
            f'aria-valuemax="100" aria-valuenow="{round(self.fraction * 100)}" '
            'style="height:10px;border-radius:5px;margin:4px 0;'
            'background:var(--jp-layout-color3,#eaeef2)">'
            f'<div class="podbook-budget-fill" style="height:100%;width:{width:.1f}%;'
            f'border-radius:5px;background:{color}"></div></div>'
            f'<div style="font-size:12px;opacity:0.75">{escape(self.footnote())}</div></div>'
        )

    def warning(self) -> str:
        """The one line printed when the spend goes over the budget."""
        return (
            f"podbook: spend {PERIODS[self.budget.per]} {money(self.spent)} is over your budget "
            f"of {self.budget} (set with %billing --budget) — see %pod list for what is running"
        )

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return self.text()


def period_spend(client: Any, per: str) -> tuple[float, str]:
    """``(USD, period start)``: the account's whole spend in the current UTC ``per``."""
    answer = wire_dict(client.billing.list(bucket_size=per, last_n=1))
    spent = sum(float(r.get("totalAmount") or 0.0) for r in answer.get("records") or [])
    return spent, str(answer["metadata"]["query"]["startTime"])
