"""The local budget guard: a thread of the notebook's kernel that checks the account's spend
against the budget of ``%billing --budget`` and prints one warning line per period over it.

It runs only while the kernel runs (the service has no account-level budget). The pause
between checks is ``%config BudgetGuard.check_interval = 60`` (seconds). A failed check (the
service unreachable, say) prints nothing and is tried again at the next one.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

from traitlets import Float
from traitlets.config import Configurable

from podbook.notebook.billing.budget import Budget, BudgetStatus, period_spend

log = logging.getLogger(__name__)


class BudgetGuard(Configurable):
    """Checks one budget in the background of one notebook session."""

    check_interval = Float(
        60.0, help="Seconds between two checks of the spend against %billing --budget."
    ).tag(config=True)

    def __init__(self, session: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._session = session
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._warned: set[tuple[Budget, str]] = set()
        self.budget: Budget | None = None
        self.checks = 0
        """How many checks have run (for tests: waiting on checks, not on time)."""

    @property
    def running(self) -> bool:
        """True while the background checks run."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def set(self, budget: Budget) -> BudgetStatus:
        """Check ``budget`` now (warning at once if already over), then keep checking.

        A failed first check raises and leaves the earlier budget in place."""
        status = self._status(budget)
        with self._lock:
            self.budget = budget
            self._warned.clear()
            if self._thread is None:
                self._stopping = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, args=(self._stopping,), name="podbook-budget", daemon=True
                )
                self._thread.start()
        self._note(status)
        return status

    def clear(self) -> Budget | None:
        """Stop checking; returns the budget that was set, if any."""
        with self._lock:
            budget, self.budget = self.budget, None
        self.stop()
        return budget

    def stop(self) -> None:
        """End the thread (the session closes, or the budget is cleared)."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._stopping.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(5.0)

    def check(self) -> BudgetStatus | None:
        """One check: the status now (``None`` without a budget); prints the warning the
        first time the current period is over."""
        budget = self.budget
        if budget is None:
            return None
        status = self._status(budget)
        self._note(status)
        return status

    def _status(self, budget: Budget) -> BudgetStatus:
        spent, period_start = period_spend(self._session.get_client(), budget.per)
        return BudgetStatus(budget, spent, period_start, self.check_interval)

    def _note(self, status: BudgetStatus) -> None:
        """Count the check; print the warning once per budget and period over it."""
        with self._lock:
            key = (status.budget, status.period_start)
            first = status.over and status.budget == self.budget and key not in self._warned
            if first:
                self._warned.add(key)
            self.checks += 1
        if first:
            print(status.warning(), file=sys.stderr, flush=True)

    def _run(self, stopping: threading.Event) -> None:
        while not stopping.wait(max(float(self.check_interval), 0.01)):
            try:
                self.check()
            except Exception as err:  # noqa: BLE001 - the guard must outlive a failed check
                log.debug("podbook budget check failed: %s", err)


def budget_guard(session: Any) -> BudgetGuard:
    """The session's :class:`BudgetGuard`, made on first use (configurable with ``%config
    BudgetGuard.check_interval``; stopped when the session closes)."""
    guard = getattr(session, "_budget_guard", None)
    if guard is None:
        shell = session.shell
        guard = BudgetGuard(session, parent=shell)
        session._budget_guard = guard
        configurables = getattr(shell, "configurables", None)
        if configurables is not None:
            configurables.append(guard)

        def close() -> None:
            guard.stop()
            if configurables is not None and guard in configurables:
                configurables.remove(guard)

        session.on_close(close)
    return guard
