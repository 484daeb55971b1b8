"""The pod panel's spend: read from the billing records (not price × uptime), at most every
30 s per pod, shown in the panel's static forms and in ``%pod show`` without panels; in a real
IPython shell against the session emulator."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from nbhelpers import magics_of, run_cell, wait_until

from podbook.notebook.billing.podspend import SpendLedger, pod_spend, spend_text
from podbook.notebook.panels.data import pod_state
from podbook.notebook.pods.spendfeed import FEED, MIN_SECONDS

RTX4090 = "NVIDIA GeForce RTX 4090"


@pytest.fixture(autouse=True)
def no_panels_left(ip: Any) -> Any:
    yield
    magics_of(ip).session.refresher.stop()


def billed(client: Any, pod_id: str) -> float:
    """The pod's spend as the billing records say (two days: the test may cross midnight)."""
    answer = client.billing.pods(pod_id=pod_id, bucket_size="day", last_n=2)
    return sum(r.total_amount for r in answer.records if r.pod_id == pod_id)


def running_pod(client: Any, name: str) -> Any:
    """A RUNNING pod with some spend in its billing records."""
    pod = client.pods.create(name=name, image="runpod/pytorch", gpu=RTX4090)
    pod = client.pods.wait_for(pod.id, "RUNNING", timeout=30, poll_interval=0.05)
    wait_until(lambda: billed(client, pod.id) > 0)
    return pod


def stopped_pod(client: Any, name: str) -> Any:
    """A pod that ran and was stopped: its spend no longer moves."""
    pod = running_pod(client, name)
    client.pods.stop(pod.id)
    return client.pods.wait_for(pod.id, "EXITED", timeout=30, poll_interval=0.05)


def shown_panel(ip: Any, pod_id: str) -> Any:
    run = run_cell(ip, f"%pod show {pod_id}")
    assert run.success, run.text
    refresher = magics_of(ip).session.refresher
    return next(p for p in refresher.panels if p.pod_id == pod_id)


def test_the_panels_spend_is_the_pods_billing_records(ip: Any, comms: Any, client: Any) -> None:
    pod = stopped_pod(client, "nbtest-spend-stopped")
    panel = shown_panel(ip, pod.id)
    spend = wait_until(lambda: panel.spend)
    assert spend["total"] == pytest.approx(billed(client, pod.id), abs=1e-7)
    assert spend["total"] > 0 and spend["per_hour"] == 0.0  # a stopped pod costs nothing
    assert spend["lagging"] is False
    as_of = datetime.fromisoformat(spend["as_of"])
    assert abs((datetime.now(timezone.utc) - as_of).total_seconds()) < 60
    assert "spent so far" in panel.snapshot_text()
    assert 'data-field="spend"' in panel.snapshot_html()
    client.pods.terminate(pod.id)


def test_a_running_pods_spend_is_read_at_most_every_30_s(ip: Any, comms: Any, client: Any) -> None:
    pod = running_pod(client, "nbtest-spend-running")
    panel = shown_panel(ip, pod.id)
    spend = wait_until(lambda: panel.spend)
    first_read = time.monotonic()
    assert spend["per_hour"] == pytest.approx(pod.cost) and spend["per_hour"] > 0
    assert 0 < spend["total"] <= billed(client, pod.id)
    refresher = magics_of(ip).session.refresher
    ticks = refresher.ticks
    wait_until(lambda: refresher.ticks >= ticks + 10)  # 10 refreshes at 0.1 s
    elapsed = time.monotonic() - first_read  # about 1 s; a read more per 30 s a slow run took
    assert MIN_SECONDS >= 30 and FEED.reads(pod.id) <= 1 + int(elapsed // MIN_SECONDS)
    client.pods.terminate(pod.id)


def test_pod_show_without_panels_shows_the_spend(ip: Any, client: Any) -> None:
    pod = stopped_pod(client, "nbtest-spend-static")
    run_cell(ip, "%config PodMagics.show_panels = False")
    run = run_cell(ip, f"%pod show {pod.id}")
    assert run.success, run.text
    bundle = run.outputs[0].data
    total = billed(client, pod.id)
    assert f"spend: {spend_text({'total': total})}" in bundle["text/plain"]
    assert 'data-field="spend"' in bundle["text/html"]
    client.pods.terminate(pod.id)


def test_settled_hours_are_not_asked_again_and_late_records_say_as_of(client: Any) -> None:
    pod = pod_state(stopped_pod(client, "nbtest-spend-ledger"))
    now = datetime.now(timezone.utc)
    this_hour = now.replace(minute=0, second=0, microsecond=0)
    ledger = SpendLedger(total=5.0, until=this_hour)  # hours before this one: $5, kept
    spend = pod_spend(client, pod, ledger, now=now)
    assert spend["total"] == pytest.approx(5.0 + billed(client, pod["id"]), abs=1e-7)
    running = {**pod, "status": "RUNNING"}  # its records end with this hour, now is 2 h later
    later = pod_spend(client, running, SpendLedger(), now=now + timedelta(hours=2))
    assert later["lagging"] is True
    assert datetime.fromisoformat(later["as_of"]) == this_hour + timedelta(hours=1)
    assert spend_text(later).endswith(f"as of {(this_hour + timedelta(hours=1)):%H:%M} UTC")
    client.pods.terminate(pod["id"])


def test_spend_text() -> None:
    assert spend_text({}) == "" and spend_text(None) == ""
    assert spend_text({"total": 12.345}) == "$12.35 spent so far"
    assert spend_text({"total": 0.0001}) == "< $0.01 spent so far"
    assert spend_text({"total": 0.0}) == "$0.00 spent so far"
