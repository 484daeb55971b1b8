"""Panels through a recording comm: lifecycle via the refresher, buttons, masking, static
forms, and the key never reaching widget state."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from nbhelpers import magics_of, ranked, run_cell, wait_until

RTX4090 = "NVIDIA GeForce RTX 4090"


def create_panel(ip: Any, flags: str = "", name: str = "nbtest_pod") -> tuple[Any, Any]:
    """Create a pod with the magic; return (pod, its live panel)."""
    run = run_cell(ip, f'{name} = %pod create --gpu "{RTX4090}" --image runpod/pytorch {flags}')
    assert run.success, run.text
    pod = ip.user_ns[name]
    panel = next(p for p in magics_of(ip).session.refresher.panels if p.pod.get("id") == pod.id)
    return pod, panel


def statuses_sent(messages: list[dict[str, Any]]) -> list[str]:
    """Pod statuses in the order a comm carried them (open state, then updates)."""
    seen = []
    for message in messages:
        data = message["data"] or {}
        state = data.get("state") or {}
        status = (state.get("pod") or {}).get("status")
        if status and (not seen or seen[-1] != status):
            seen.append(status)
    return seen


def comm_of(comms: Any, panel: Any) -> Any:
    return next(c for c in comms.comms if c is panel.comm)


def click(panel: Any, action: str) -> None:
    """What the view sends when a button is clicked."""
    panel._handle_custom_msg({"type": "action", "action": action}, [])


def test_panel_follows_the_lifecycle_through_the_refresher(ip: Any, comms: Any) -> None:
    pod, panel = create_panel(ip, "--ports 8888/http,22/tcp --ssh")
    comm = comm_of(comms, panel)
    # the trait holds RUNNING a moment before its update message is sent: wait for the message
    wait_until(lambda: statuses_sent(comm.messages)[-1:] == ["RUNNING"])
    sent = statuses_sent(comm.messages)
    assert sent[0] == "PROVISIONING" and sent[-1] == "RUNNING", sent
    assert all(s in ("PROVISIONING", "STARTING", "RUNNING") for s in sent)
    wait_until(lambda: panel.pod.get("runtime"))
    assert panel.pod["ssh"]["direct"]["command"].startswith("ssh ")
    assert panel.connection == "ok" and panel.updated


def test_panel_keeps_updating_while_a_cell_blocks(ip: Any, comms: Any) -> None:
    _, panel = create_panel(ip)
    comm = comm_of(comms, panel)
    before = len(comm.messages)
    ip.user_ns["nbtest_sent"] = lambda: statuses_sent(comm.messages[before:])
    # The cell blocks the kernel's thread until the panel has sent RUNNING (or 60 s pass): the
    # message, not the trait, which holds RUNNING a moment before its message is sent.
    run = run_cell(
        ip,
        "import time\n"
        "deadline = time.monotonic() + 60\n"
        "while 'RUNNING' not in nbtest_sent() and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)",
    )
    assert run.success
    during = statuses_sent(comm.messages[before:])
    assert "RUNNING" in during, during


def test_stop_and_start_buttons(ip: Any, comms: Any, client: Any) -> None:
    pod, panel = create_panel(ip)
    wait_until(lambda: panel.pod["status"] == "RUNNING")
    busy_seen = []
    panel.observe(lambda change: busy_seen.append(change["new"]), names="busy")
    click(panel, "stop")
    wait_until(lambda: panel.pod["status"] == "EXITED" and not panel.busy)
    assert busy_seen[:2] == ["stop", ""]
    assert panel.error == ""
    assert client.pods.get(pod.id).status == "EXITED"
    assert panel.pod["actions"] == ["start", "terminate"]
    click(panel, "start")
    wait_until(lambda: panel.pod["status"] == "RUNNING", timeout=10)


def test_button_click_does_not_block_the_kernel(ip: Any, comms: Any) -> None:
    _, panel = create_panel(ip)
    wait_until(lambda: "stop" in panel.pod["actions"])
    caller = threading.current_thread()
    calls = []
    original = panel.client.pods.stop

    def spy(pod_id: str) -> Any:
        calls.append(threading.current_thread())
        return original(pod_id)

    panel.client.pods.stop = spy
    try:
        click(panel, "stop")
        assert panel.busy == "stop"
        wait_until(lambda: calls and not panel.busy)
    finally:
        del panel.client.pods.stop
    assert calls[0] is not caller


def test_action_not_in_actions_is_refused_in_the_panel(ip: Any, comms: Any) -> None:
    _, panel = create_panel(ip)
    click(panel, "restart")
    assert "restart" in panel.error and "allowed" in panel.error
    assert panel.busy == ""


def test_api_error_of_a_button_lands_in_error(ip: Any, comms: Any, client: Any) -> None:
    pod, panel = create_panel(ip)
    wait_until(lambda: panel.pod["status"] == "RUNNING")
    magics_of(ip).session.refresher.stop()
    client.pods.stop(pod.id)  # behind the panel's back: it still offers restart
    click(panel, "restart")
    wait_until(lambda: not panel.busy)
    assert "409" in panel.error
    assert "Traceback" not in panel.error


def test_secrets_are_masked_and_the_key_never_reaches_the_comm(
    ip: Any, comms: Any, client: Any, emulator: Any
) -> None:
    client.account.ssh_keys.put(["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMASKME nb@test"])
    pod, panel = create_panel(
        ip,
        "--ports 8888/http,22/tcp --ssh --jupyter --env HF_TOKEN=hf_supersecret "
        "--env DB_PASSWORD=pw_supersecret --env my_api_key=k_supersecret --env PLAIN=visible",
    )
    wait_until(lambda: panel.pod["status"] == "RUNNING")
    click(panel, "stop")
    wait_until(lambda: panel.pod["status"] == "EXITED" and not panel.busy)
    real_env = client.pods.get(pod.id).env
    env = panel.pod["env"]
    for name in ("HF_TOKEN", "DB_PASSWORD", "my_api_key", "JUPYTER_PASSWORD", "PUBLIC_KEY"):
        assert env[name] == "••••••", name
    assert env["PLAIN"] == "visible"
    sent = comms.all_text()
    secrets = [
        "hf_supersecret",
        "pw_supersecret",
        "k_supersecret",
        real_env["JUPYTER_PASSWORD"],
        "AAAAC3NzaC1lZDI1NTE5AAAAIMASKME",
        emulator.api_key,
    ]
    for secret in secrets:
        assert secret not in sent
        assert secret not in panel.snapshot_html() and secret not in panel.snapshot_text()
        assert secret not in repr(panel)
    assert "visible" in sent


def test_static_forms(ip: Any, comms: Any) -> None:
    pod, panel = create_panel(ip, "--ports 8888/http,22/tcp --ssh --env TOKEN=t0ps3cret")
    wait_until(lambda: panel.pod["status"] == "RUNNING" and panel.pod["ssh"]["direct"])
    data, _ = panel._repr_mimebundle_()
    html, text = data["text/html"], data["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" in data
    assert f'data-pod-id="{pod.id}"' in html and 'data-status="RUNNING"' in html
    assert 'data-ssh="proxy"' in html and 'data-ssh="direct"' in html
    assert 'data-port="8888/http"' in html
    assert "t0ps3cret" not in html and "t0ps3cret" not in text
    assert pod.name in text and "RUNNING" in text and "ssh " in text
    assert "<script" not in html


def test_static_html_escapes_values(ip: Any, comms: Any) -> None:
    _, panel = create_panel(ip, "--name '<b>x</b>' --env 'NOTE=<script>alert(1)</script>'")
    html = panel.snapshot_html()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_list_and_cluster_panels_have_static_forms(ip: Any, comms: Any, client: Any) -> None:
    pod, _ = create_panel(ip)
    run = run_cell(ip, "%pod list")
    bundle = run.outputs[0].data
    assert f'tr data-pod-id="{pod.id}"' in bundle["text/html"]
    assert pod.id in bundle["text/plain"]
    cluster = client.clusters.create(
        name="nb-static",
        type="RAY",
        compute={"gpuTypeId": "NVIDIA H100 80GB HBM3", "gpuCountPerPod": 1, "podCount": 2},
        image="rayproject/ray",
    )
    ip.user_ns["nbtest_cid"] = cluster.id
    wait_until(lambda: ranked(client, cluster.id))
    run = run_cell(ip, "%cluster show {nbtest_cid}")
    assert run.success, run.text
    html = run.outputs[0].data["text/html"]
    assert "RAY_HEAD" in html and "RAY_WORKER" in html
    assert cluster.id in run.outputs[0].data["text/plain"]


def test_cluster_panel_members_follow_the_lifecycle(ip: Any, comms: Any, client: Any) -> None:
    cluster = client.clusters.create(
        name="nb-live",
        type="TRAINING",
        compute={"gpuTypeId": "NVIDIA H100 80GB HBM3", "gpuCountPerPod": 1, "podCount": 2},
        image="runpod/pytorch",
    )
    ip.user_ns["nbtest_cid"] = cluster.id
    run = run_cell(ip, "%cluster show {nbtest_cid}")
    assert run.success, run.text
    panel = next(
        p
        for p in magics_of(ip).session.refresher.panels
        if getattr(p, "cluster_id", "") == cluster.id
    )
    wait_until(
        lambda: len(panel.members) == 2 and all(m["status"] == "RUNNING" for m in panel.members)
    )
    assert sorted(m["cluster"]["rank"] for m in panel.members) == [0, 1]


def test_one_list_call_per_tick_for_all_panels(ip: Any, comms: Any) -> None:
    for i in range(3):
        create_panel(ip, name=f"nbtest_p{i}")
    refresher = magics_of(ip).session.refresher
    client = magics_of(ip).session.client
    # Each call is tagged with the refresher's tick counter, which moves only between ticks:
    # calls with the same tag happened in the same tick, however slow the machine is.
    calls: list[tuple[str, int]] = []
    original_list, original_get = client.pods.list, client.pods.get

    def count_list(*args: Any, **kwargs: Any) -> Any:
        calls.append(("list", refresher.ticks))
        return original_list(*args, **kwargs)

    def count_get(*args: Any, **kwargs: Any) -> Any:
        calls.append(("get", refresher.ticks))
        return original_get(*args, **kwargs)

    client.pods.list, client.pods.get = count_list, count_get
    try:
        start = refresher.ticks
        wait_until(lambda: refresher.ticks >= start + 6, timeout=60)
    finally:
        del client.pods.list, client.pods.get
    lists = Counter(tick for kind, tick in calls if kind == "list")
    assert len(lists) >= 5, calls
    assert all(lists[tick] == 1 for tick in lists), f"more than one list call in a tick: {lists}"
    assert not [c for c in calls if c[0] == "get"], "no per-pod reads while every pod is listed"

    def refresher_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "podbook-refresher"]

    # one thread for all panels (an earlier test's thread may take a moment to end)
    wait_until(lambda: len(refresher_threads()) == 1)
    assert refresher_threads()[0].daemon


def test_closed_and_terminated_panels_stop_polling(ip: Any, comms: Any, client: Any) -> None:
    refresher = magics_of(ip).session.refresher
    _, closed = create_panel(ip, name="nbtest_a")
    pod_b, gone = create_panel(ip, name="nbtest_b")
    closed.close()
    client.pods.terminate(pod_b.id)
    wait_until(lambda: gone.pod["status"] == "TERMINATED")
    assert gone.pod["actions"] == []
    wait_until(lambda: closed not in refresher.panels and gone not in refresher.panels)
    wait_until(lambda: not refresher.running)


def test_terminate_button_ends_polling(ip: Any, comms: Any) -> None:
    _, panel = create_panel(ip)
    click(panel, "terminate")
    wait_until(lambda: panel.pod["status"] == "TERMINATED" and not panel.busy)
    wait_until(lambda: panel not in magics_of(ip).session.refresher.panels)


def test_refresher_survives_an_outage(
    ip: Any, comms: Any, start_emulator: Any, monkeypatch: pytest.MonkeyPatch, capfd: Any
) -> None:
    own = start_emulator()
    monkeypatch.setenv("PODBOOK_URL", own.url)
    monkeypatch.setenv("RUNPOD_API_KEY", own.api_key)
    magics_of(ip).session.reset_client()
    _, panel = create_panel(ip)
    wait_until(lambda: panel.pod["status"] == "RUNNING")
    capfd.readouterr()
    own.stop()
    wait_until(lambda: panel.connection == "reconnecting", timeout=15)
    own.start()
    wait_until(lambda: panel.connection == "ok", timeout=20)
    assert panel.pod["status"] == "RUNNING"
    out, err = capfd.readouterr()
    assert out == "" and "Traceback" not in err


def test_refresher_slows_down_when_the_quota_runs_low(
    ip: Any, comms: Any, start_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = start_emulator(extra_args=("--rate-limit", "minute=40"))
    monkeypatch.setenv("PODBOOK_URL", own.url)
    monkeypatch.setenv("RUNPOD_API_KEY", own.api_key)
    magics_of(ip).session.reset_client()
    _, panel = create_panel(ip)
    refresher = magics_of(ip).session.refresher
    # Unthrottled, 0.1 s ticks would spend the 40 requests in 4 s; a loaded machine ticks
    # slower, so wait for the slow-down rather than a fixed 3 s.
    wait_until(lambda: refresher.last_pause > 0.1, timeout=20)
    minute = magics_of(ip).session.client.rate_limit.get("minute")
    assert minute.remaining >= 15, minute
    assert panel.connection == "ok" and panel.error == ""


def test_deleted_cluster_panel_shows_its_members_terminated(
    ip: Any, comms: Any, client: Any
) -> None:
    cluster = client.clusters.create(
        name="nb-deleted",
        type="SLURM",
        compute={"gpuTypeId": "NVIDIA H100 80GB HBM3", "gpuCountPerPod": 1, "podCount": 2},
        image="runpod/pytorch",
        ports=["22/tcp"],
    )
    ip.user_ns["nbtest_cid"] = cluster.id
    wait_until(lambda: ranked(client, cluster.id))
    run = run_cell(ip, "%cluster show {nbtest_cid}")
    assert run.success, run.text
    refresher = magics_of(ip).session.refresher
    panel = next(p for p in refresher.panels if getattr(p, "cluster_id", "") == cluster.id)
    wait_until(
        lambda: len(panel.members) == 2 and all(m["status"] == "RUNNING" for m in panel.members)
    )
    client.clusters.delete(cluster.id)
    wait_until(lambda: panel.final, timeout=20)
    assert [m["status"] for m in panel.members] == ["TERMINATED", "TERMINATED"]
    assert all(m["ssh"] == {"proxy": None, "direct": None} for m in panel.members)
    assert "primary" not in panel.cluster and "pods" not in panel.cluster
    assert "deleted" in panel.error
    text, html = panel.snapshot_text(), panel.snapshot_html()
    assert "RUNNING" not in text and "RUNNING" not in html
    wait_until(lambda: panel not in refresher.panels)


def test_pod_list_panel_follows_the_account(ip: Any, comms: Any, client: Any) -> None:
    pod, _ = create_panel(ip)
    run = run_cell(ip, "%pod list")
    assert run.success, run.text
    refresher = magics_of(ip).session.refresher
    panel = next(p for p in refresher.panels if hasattr(p, "include_cluster_pods"))

    def status_of(pod_id: str) -> str | None:
        return next((p["status"] for p in panel.pods if p["id"] == pod_id), None)

    wait_until(lambda: status_of(pod.id) == "RUNNING")
    other = client.pods.create(name="nb-elsewhere", gpu={"id": RTX4090}, image="x")
    wait_until(lambda: status_of(other.id) is not None)
    client.pods.terminate(other.id)
    wait_until(lambda: status_of(other.id) is None)
    assert status_of(pod.id) == "RUNNING"
    sent = comm_of(comms, panel).messages
    assert any(other.id in str(m["data"]) for m in sent), "the new pod reached the view"


def test_a_refused_key_shows_in_the_panels_until_it_is_fixed(
    ip: Any, comms: Any, emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, panel = create_panel(ip)
    wait_until(lambda: panel.pod["status"] == "RUNNING")
    session = magics_of(ip).session
    bad_key = "pbk_a_" + "0" * 32
    monkeypatch.setenv("RUNPOD_API_KEY", bad_key)
    session.reset_client()
    wait_until(lambda: "401" in panel.error)
    assert "RUNPOD_API_KEY" in panel.error and bad_key not in panel.error
    assert panel.connection == "ok", "the service answers; only the key is wrong"
    monkeypatch.setenv("RUNPOD_API_KEY", emulator.api_key)
    session.reset_client()
    wait_until(lambda: panel.error == "", timeout=40)
    assert panel.pod["status"] == "RUNNING"
