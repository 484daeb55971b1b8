"""The refresher rides out a real one-minute outage of the service (issue 5 §2).

A real emulator process is killed (``SIGKILL``) while pod, pod-list, cluster and endpoint
health panels are live in a real IPython shell, stays down for 60 s, then starts again on the
same port and database. Meanwhile every panel shows ``connection == "reconnecting"`` (the
views render it as a "reconnecting…" note: see the vitest suites in ``js/test``), the one
refresher thread keeps running, backs off (bounded, never hammering) and prints nothing;
within a few ticks of the restart every panel is ``"ok"`` again with fresh data.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import Any

import pytest
from nbhelpers import magics_of, ranked, run_cell, wait_until

from podbook.notebook.refresher import MAX_BACKOFF_SECONDS

RTX4090 = "NVIDIA GeForce RTX 4090"
OUTAGE_SECONDS = 60.0
BASE_INTERVAL = 0.5
RETRY_SLEEP = 0.25 + 0.5 + 1.0  # the client's own retries of a refused GET (RetryPolicy)


def live_panels(ip: Any, client: Any) -> dict[str, Any]:
    """Two pod panels, a pod list, a cluster and an endpoint's health, all live."""
    panels: dict[str, Any] = {}
    refresher = magics_of(ip).session.refresher
    for name in ("nbtest_a", "nbtest_b"):
        run = run_cell(ip, f'{name} = %pod create --gpu "{RTX4090}" --image runpod/pytorch')
        assert run.success, run.text
        pod_id = ip.user_ns[name].id
        panels[name] = next(
            p for p in refresher.panels if getattr(p, "pod", {}).get("id") == pod_id
        )
    assert run_cell(ip, "%pod list").success
    panels["list"] = next(p for p in refresher.panels if hasattr(p, "include_cluster_pods"))
    cluster = client.clusters.create(
        name="nb-outage",
        type="TRAINING",
        compute={"gpuTypeId": "NVIDIA H100 80GB HBM3", "gpuCountPerPod": 1, "podCount": 2},
        image="runpod/pytorch",
    )
    wait_until(lambda: ranked(client, cluster.id))
    ip.user_ns["nbtest_cid"] = cluster.id
    assert run_cell(ip, "%cluster show {nbtest_cid}").success
    panels["cluster"] = next(
        p for p in refresher.panels if getattr(p, "cluster_id", "") == cluster.id
    )
    assert run_cell(ip, "nbtest_health = %endpoint health echo").success
    panels["health"] = next(p for p in refresher.panels if getattr(p, "endpointId", "") == "echo")
    return panels


def healthy(panels: dict[str, Any]) -> bool:
    """Every panel connected, without an error, and the pods running."""
    return (
        all(p.connection == "ok" and not p.error for p in panels.values())
        and panels["nbtest_a"].pod.get("status") == "RUNNING"
        and panels["nbtest_b"].pod.get("status") == "RUNNING"
        and len(panels["cluster"].members) == 2
    )


def test_a_minute_long_outage_shows_reconnecting_and_recovers_by_itself(
    ip: Any, comms: Any, start_emulator: Any, monkeypatch: pytest.MonkeyPatch, capfd: Any
) -> None:
    own = start_emulator()
    monkeypatch.setenv("PODBOOK_URL", own.url)
    monkeypatch.setenv("RUNPOD_API_KEY", own.api_key)
    session = magics_of(ip).session
    session.reset_client()
    run_cell(ip, f"%config PodMagics.refresh_interval = {BASE_INTERVAL}")
    from podbook import Client

    direct = Client(api_key=own.api_key, url=own.url)
    panels = live_panels(ip, direct)
    wait_until(lambda: healthy(panels), timeout=30)

    refresher = session.refresher
    thread = next(t for t in threading.enumerate() if t.name == "podbook-refresher")
    escaped: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    client = session.client
    attempts: list[float] = []  # when the refresher's tick asked for the pod list
    original_list = client.pods.list

    def counting_list(*args: Any, **kwargs: Any) -> Any:
        attempts.append(time.monotonic())
        return original_list(*args, **kwargs)

    monkeypatch.setattr(client.pods, "list", counting_list)
    capfd.readouterr()

    # --- the outage: the process dies at once, as a crash would ---------------------------
    own.proc.kill()
    own.proc.wait(timeout=10)
    down_at = time.monotonic()
    wait_until(lambda: all(p.connection == "reconnecting" for p in panels.values()), timeout=20)
    noticed = time.monotonic() - down_at
    samples: list[tuple[list[str], bool, float]] = []
    while time.monotonic() - down_at < OUTAGE_SECONDS:
        states = [p.connection for p in panels.values()]
        samples.append((states, refresher.running and thread.is_alive(), refresher.last_pause))
        time.sleep(0.5)
    during = [t for t in attempts if t >= down_at]

    # --- the service comes back on the same port and database ----------------------------
    own.start()
    up_at = time.monotonic()
    up_wall = datetime.now(timezone.utc).replace(microsecond=0)
    wait_until(
        lambda: (
            healthy(panels)
            and all(p.updated and p.updated >= up_wall.isoformat() for p in panels.values())
        ),
        timeout=MAX_BACKOFF_SECONDS + RETRY_SLEEP + 30,
    )
    recovered = time.monotonic() - up_at
    # fresh data, not a replay: a change made now reaches its panel within a few ticks
    direct.pods.stop(panels["nbtest_b"].pod["id"])
    wait_until(lambda: panels["nbtest_b"].pod.get("status") == "EXITED", timeout=20)
    direct.close()

    out, err = capfd.readouterr()
    assert out == "" and "Traceback" not in err, (out, err)
    print(
        f"outage noticed after {noticed:.1f} s; {len(during)} pod-list attempts in "
        f"{OUTAGE_SECONDS:.0f} s; every panel ok {recovered:.1f} s after the restart"
    )
    assert samples and all(all(s == "reconnecting" for s in states) for states, _, _ in samples)
    assert all(alive for _, alive, _ in samples), "the refresher thread stopped"
    assert thread.is_alive() and refresher.running and escaped == []
    # backoff: it kept trying, paused at most MAX_BACKOFF_SECONDS, and did not hammer
    pauses = [pause for _, _, pause in samples]
    assert max(pauses) <= MAX_BACKOFF_SECONDS and max(pauses) >= 4 * BASE_INTERVAL, pauses
    assert 3 <= len(during) <= OUTAGE_SECONDS / 2, during
    gaps = [b - a for a, b in zip(during, during[1:], strict=False)]
    assert max(gaps) <= MAX_BACKOFF_SECONDS + RETRY_SLEEP + 15, gaps


def test_queue_panels_alone_back_off_too(
    ip: Any, comms: Any, start_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With only an endpoint's health panel live (its failures reach the panel, not the
    tick), the pauses still grow while the service is down, and it recovers."""
    own = start_emulator()
    monkeypatch.setenv("PODBOOK_URL", own.url)
    monkeypatch.setenv("RUNPOD_API_KEY", own.api_key)
    session = magics_of(ip).session
    session.reset_client()
    run_cell(ip, f"%config PodMagics.refresh_interval = {BASE_INTERVAL}")
    assert run_cell(ip, "nbtest_health = %endpoint health echo").success
    refresher = session.refresher
    panel = next(p for p in refresher.panels if getattr(p, "endpointId", "") == "echo")
    wait_until(lambda: panel.connection == "ok" and panel.health, timeout=20)
    own.proc.kill()
    own.proc.wait(timeout=10)
    wait_until(lambda: panel.connection == "reconnecting", timeout=20)
    pauses = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pauses.append(refresher.last_pause)
        time.sleep(0.25)
    assert 4 * BASE_INTERVAL <= max(pauses) <= MAX_BACKOFF_SECONDS, pauses
    assert refresher.running
    own.start()
    wait_until(lambda: panel.connection == "ok", timeout=MAX_BACKOFF_SECONDS + RETRY_SLEEP + 30)
