"""``%billing --budget``: the bar of the day's or week's spend against a budget, the one
warning line of going over (the local guard), ``off`` and bad input; in a real IPython shell
against an emulator of its own (the account's spend is then only what these tests run)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from IPython.utils.capture import capture_output
from nbhelpers import magics_of, run_cell, wait_until

from podbook.notebook.billing.budget import Budget, BudgetStatus
from podbook.notebook.billing.budgetguard import budget_guard

RTX4090 = "NVIDIA GeForce RTX 4090"
WARNING = re.compile(
    r"^podbook: spend (today|this week) \$[\d.,]+ is over your budget of \$[\d.,]+/(day|week) "
    r"\(set with %billing --budget\) — see %pod list for what is running$"
)


@pytest.fixture(scope="module")
def emulator(start_emulator: Any) -> Any:
    """An emulator of this module's own: the account spends only what these tests run."""
    return start_emulator()


@pytest.fixture
def guard(ip: Any) -> Any:
    """The session's budget guard, checking every 0.05 s."""
    run = run_cell(ip, "%config BudgetGuard.check_interval = 0.05")
    assert run.success, run.text
    yield budget_guard(magics_of(ip).session)
    ip.config.pop("BudgetGuard", None)


def day_spend(client: Any) -> float:
    answer = client.billing.list(bucket_size="day", last_n=1)
    return sum(r.total_amount for r in answer.records)


def stopped_pod(client: Any) -> Any:
    """A pod that ran a moment and is stopped: the account's spend stays put."""
    pod = client.pods.create(name="nbtest-budget", image="runpod/pytorch", gpu=RTX4090)
    client.pods.wait_for(pod.id, "RUNNING", timeout=30, poll_interval=0.05)
    wait_until(lambda: day_spend(client) > 0)
    client.pods.stop(pod.id)
    client.pods.wait_for(pod.id, "EXITED", timeout=30, poll_interval=0.05)
    return pod


def warnings_in(text: str) -> list[str]:
    return [line for line in text.splitlines() if "over your budget" in line]


def test_the_bar_shows_the_days_spend_against_the_budget(ip: Any, guard: Any, client: Any) -> None:
    stopped_pod(client)
    spent = day_spend(client)
    run = run_cell(ip, "nbtest_budget = %billing --budget 1000")
    assert run.success, run.text
    status = ip.user_ns["nbtest_budget"]
    assert isinstance(status, BudgetStatus)
    assert status.spent == pytest.approx(spent, abs=1e-9) and not status.over
    assert status.budget == Budget(1000.0, "day")
    assert warnings_in(run.text) == []
    assert len(run.outputs) == 1
    html, text = run.outputs[0].data["text/html"], run.outputs[0].data["text/plain"]
    assert 'data-over="false"' in html and 'class="podbook-budget-bar"' in html
    assert "spent today of your $1,000.00/day budget (0%)" in text
    assert "the service has no account-level budget" in text
    assert guard.running


def test_a_week_budget_counts_the_week(ip: Any, guard: Any, client: Any) -> None:
    run = run_cell(ip, "nbtest_week = %billing --budget $5 --per week")
    assert run.success, run.text
    week = client.billing.list(bucket_size="week", last_n=1)
    status = ip.user_ns["nbtest_week"]
    assert status.spent == pytest.approx(sum(r.total_amount for r in week.records), abs=1e-9)
    assert "spent this week of your $5.00/week budget" in run.outputs[0].data["text/plain"]


def test_going_over_in_the_background_warns_exactly_once(ip: Any, guard: Any, client: Any) -> None:
    pod = client.pods.create(name="nbtest-budget-run", image="runpod/pytorch", gpu=RTX4090)
    try:
        client.pods.wait_for(pod.id, "RUNNING", timeout=30, poll_interval=0.05)
        budget = day_spend(client) + 0.0004  # about 2 s of an RTX 4090 at $0.69/h
        run = run_cell(ip, f"%billing --budget {budget:.6f}")
        assert run.success, run.text
        # Normally the background check goes over; a machine slow enough to be over already
        # when the cell checks warns there instead, and still only once.
        with capture_output() as seen:
            wait_until(lambda: warnings_in(run.stderr + seen.stderr), timeout=60)
            checks = guard.checks
            wait_until(lambda: guard.checks >= checks + 10)
        lines = warnings_in(run.stderr + seen.stderr)
        assert len(lines) == 1, run.stderr + seen.stderr
        assert WARNING.match(lines[0]), lines[0]
    finally:
        client.pods.terminate(pod.id)


def test_already_over_warns_once_in_the_cell_that_sets_it(ip: Any, guard: Any, client: Any) -> None:
    stopped_pod(client)
    run = run_cell(ip, "%billing --budget 0.000001")
    assert run.success, run.text
    assert len(warnings_in(run.stderr)) == 1 and WARNING.match(warnings_in(run.stderr)[0])
    assert 'data-over="true"' in run.outputs[0].data["text/html"]
    assert "OVER BUDGET" in run.outputs[0].data["text/plain"]
    with capture_output() as seen:
        checks = guard.checks
        wait_until(lambda: guard.checks >= checks + 10)
    assert warnings_in(seen.stderr) == []


def test_off_clears_the_budget_and_stops_the_checks(ip: Any, guard: Any) -> None:
    assert run_cell(ip, "%billing --budget 25 --per week").success
    assert guard.running
    run = run_cell(ip, "nbtest_off = %billing --budget off")
    assert run.success and ip.user_ns["nbtest_off"] is None
    assert "budget $25.00/week cleared" in run.stdout
    assert not guard.running and guard.budget is None
    again = run_cell(ip, "%billing --budget OFF")
    assert "no budget was set" in again.stdout


def test_unloading_the_extension_stops_the_checks(ip: Any, guard: Any) -> None:
    assert run_cell(ip, "%billing --budget 25").success and guard.running
    run_cell(ip, "%unload_ext podbook")
    assert not guard.running
    assert guard not in ip.configurables
    run_cell(ip, "%load_ext podbook")
