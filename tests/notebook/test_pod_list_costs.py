"""``%pod list`` puts what costs most first, marks the pods that have no guard, and shows the
total per hour of what is running (issue 18 §2): live panel and static forms, in a real
IPython shell against an emulator of its own (so the account holds exactly these pods)."""

from __future__ import annotations

from typing import Any

import pytest
from nbhelpers import magics_of, run_cell, wait_until

RTX4090 = "NVIDIA GeForce RTX 4090"


@pytest.fixture(scope="module")
def own(start_emulator: Any) -> Any:
    """An emulator with no pods but this module's."""
    return start_emulator()


@pytest.fixture
def account(own: Any, ip: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Three pods on ``own``: a guarded 2-GPU pod, an unguarded CPU pod (both running) and a
    stopped unguarded GPU pod; the shell pointed at ``own``. Yields the client."""
    from podbook import Client

    monkeypatch.setenv("PODBOOK_URL", own.url)
    monkeypatch.setenv("RUNPOD_API_KEY", own.api_key)
    magics_of(ip).session.reset_client()
    with Client(api_key=own.api_key, url=own.url) as client:
        for pod in client.pods.list():
            client.pods.terminate(pod.id)
        guarded = client.pods.create(
            name="big-guarded",
            gpu={"id": RTX4090, "count": 2},
            image="runpod/pytorch",  # its own command is /start.sh: no GuardWarning
            idle_stop="30m",
        )
        cpu = client.pods.create(name="small-cpu", cpu={"id": "cpu3c", "vcpuCount": 2}, image="x")
        stopped = client.pods.create(name="stopped-gpu", gpu={"id": RTX4090}, image="x")
        for pod in (guarded, cpu, stopped):
            client.pods.wait_for(pod.id, "RUNNING", timeout=30, poll_interval=0.05)
        client.pods.stop(stopped.id)
        yield client


def test_the_panel_sorts_by_price_marks_unguarded_pods_and_totals_the_running(
    ip: Any, comms: Any, account: Any
) -> None:
    pods = {pod.name: pod for pod in account.pods.list()}
    big, small = pods["big-guarded"], pods["small-cpu"]
    assert big.cost > small.cost > 0 and pods["stopped-gpu"].cost == 0

    run = run_cell(ip, "%pod list")
    assert run.success, run.text
    panel = next(
        p for p in magics_of(ip).session.refresher.panels if hasattr(p, "include_cluster_pods")
    )
    assert [(p["name"], p["guardText"]) for p in panel.pods] == [
        ("big-guarded", "idle stop 30m, then stop"),
        ("small-cpu", ""),
        ("stopped-gpu", ""),
    ]
    per_hour = round(big.cost + small.cost, 4)
    assert panel.summary == {"running": 2, "perHour": per_hour, "unguarded": 1}

    bundle = run.outputs[0].data
    text, html = bundle["text/plain"], bundle["text/html"]
    lines = text.splitlines()
    assert lines[0] == f"3 pod(s) · 2 running: ${per_hour:.2f}/h · 1 without a guard"
    assert [line.split()[1] for line in lines[2:5]] == ["big-guarded", "small-cpu", "stopped-gpu"]
    assert lines[2].endswith("idle stop 30m, then stop")
    assert lines[3].endswith("no guard") and lines[4].endswith("no guard")
    assert f'data-pod-id="{big.id}" data-status="RUNNING" data-guarded="yes"' in html
    assert f'data-pod-id="{small.id}" data-status="RUNNING" data-guarded="no"' in html
    assert html.index(big.id) < html.index(small.id) < html.index(pods["stopped-gpu"].id)
    assert f'data-per-hour="{per_hour:.2f}" data-unguarded="1"' in html

    account.pods.stop(big.id)  # the refresher follows: the total drops, the order changes
    wait_until(lambda: panel.summary.get("running") == 1, timeout=15)
    assert panel.summary == {"running": 1, "perHour": small.cost, "unguarded": 1}
    assert [p["name"] for p in panel.pods][0] == "small-cpu"


def test_an_empty_account_says_nothing_runs(ip: Any, account: Any) -> None:
    for pod in account.pods.list():
        account.pods.terminate(pod.id)
    run_cell(ip, "%config PodMagics.show_panels = False")
    run = run_cell(ip, "nbtest_pods = %pod list\nnbtest_pods")
    assert run.success, run.text
    assert run.outputs[-1].data["text/plain"].splitlines()[0] == "0 pod(s) · nothing running"
