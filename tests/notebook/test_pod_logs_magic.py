"""``%pod logs`` in a real IPython shell, and the pod panel's Logs tab on the kernel side."""

from __future__ import annotations

import threading
import time
from typing import Any

from nbhelpers import assert_one_line_error, run_cell, wait_until

from podbook import Client

GPU = "NVIDIA GeForce RTX 4090"


def running_pod(emulator: Any) -> Any:
    with Client(api_key=emulator.api_key, url=emulator.url) as client:
        pod = client.pods.create(name="nb-logs", image="img:1", gpu=GPU, start_jupyter=True)
        return client.pods.wait_for(pod, "RUNNING", timeout=30, poll_interval=0.05)


def terminate_later(emulator: Any, pod_id: str, seconds: float) -> threading.Timer:
    def terminate() -> None:
        with Client(api_key=emulator.api_key, url=emulator.url) as client:
            client.pods.terminate(pod_id)

    timer = threading.Timer(seconds, terminate)
    timer.start()
    return timer


def test_pod_logs_prints_and_returns_the_lines(ip: Any, emulator: Any) -> None:
    pod = running_pod(emulator)
    run = run_cell(ip, f"nbtest_logs = %pod logs {pod.id} --tail 3")
    assert run.success, run.text
    lines = ip.user_ns["nbtest_logs"]
    assert len(lines) == 3
    assert lines[-1].line == "pod is RUNNING"
    shown = run_cell(ip, "nbtest_logs")
    assert "[system] pod is RUNNING" in shown.text or any(
        "pod is RUNNING" in str(o.data) for o in shown.outputs
    )
    everything = ip.run_line_magic("pod", f"logs {pod.id} --source system")
    assert everything and {line.source for line in everything} == {"system"}
    jupyter = [line.line for line in ip.run_line_magic("pod", f"logs {pod.id}")]
    assert any("Jupyter Server listening" in text for text in jupyter)
    password = Client(api_key=emulator.api_key, url=emulator.url).pods.get(pod.id).env
    assert password["JUPYTER_PASSWORD"] not in "\n".join(jupyter)


def test_follow_without_a_front_end_prints_until_the_pod_is_terminated(
    ip: Any, emulator: Any
) -> None:
    pod = running_pod(emulator)
    timer = terminate_later(emulator, pod.id, 1.0)
    try:
        run = run_cell(ip, f"%pod logs {pod.id} --follow --tail 2")
    finally:
        timer.join()
    assert run.success, run.text
    printed = [line for line in run.stdout.splitlines() if " [system] " in line]
    assert printed[-1].endswith("[system] pod terminated")
    assert any("terminate requested" in line for line in printed)


def test_user_mistakes_are_one_line_errors(ip: Any, emulator: Any) -> None:
    assert_one_line_error(run_cell(ip, "%pod logs abc --tail 9999"), "--tail", "0 to 5000")
    assert_one_line_error(run_cell(ip, "%pod logs abc --source stdout"), "--source")
    assert_one_line_error(run_cell(ip, "%pod logs"), "POD_ID")
    assert_one_line_error(run_cell(ip, "%pod logs no-such-pod"), "not found")


def custom_messages(comms: Any) -> list[dict[str, Any]]:
    found = []
    for comm in comms.comms:
        for message in list(comm.messages):
            data = message.get("data") or {}
            if data.get("method") == "custom":
                found.append(data["content"])
    return found


def test_logs_tab_follows_new_lines_while_open(comms: Any, emulator: Any) -> None:
    from podbook.notebook.pods.panel import PodPanel

    pod = running_pod(emulator)
    client = Client(api_key=emulator.api_key, url=emulator.url)
    panel = PodPanel(pod, client=client)
    try:
        panel._on_view_message(panel, {"type": "logs", "follow": True, "have": 0}, [])

        def texts() -> list[str]:
            return [
                item["line"]
                for message in custom_messages(comms)
                if message["type"] == "log-lines"
                for item in message["lines"]
            ]

        wait_until(lambda: "pod is RUNNING" in texts(), timeout=20)
        client.pods.stop(pod.id)  # a new line while the tab is open
        wait_until(lambda: "container stopped" in texts(), timeout=20)
        seqs = [
            item["seq"]
            for message in custom_messages(comms)
            if message["type"] == "log-lines"
            for item in message["lines"]
        ]
        assert seqs == sorted(set(seqs))
        assert len(panel.logs.lines) <= 500
        password = client.pods.get(pod.id).env["JUPYTER_PASSWORD"]
        assert password not in str(panel.get_state())
        assert password not in comms.all_text()

        panel._on_view_message(panel, {"type": "logs", "follow": False}, [])
        client.pods.start(pod.id)  # the reader ends at its next line
        wait_until(lambda: not panel.logs.running, timeout=30)
        before = len(texts())
        time.sleep(0.5)
        assert len(texts()) == before

        # reopening replays what the kernel holds after the view's last line
        panel._on_view_message(panel, {"type": "logs", "follow": True, "have": seqs[-2]}, [])
        replay = [m for m in custom_messages(comms) if m["type"] == "log-lines"][-1]
        assert replay["lines"][0]["seq"] == seqs[-1]
    finally:
        panel.close()
        client.pods.terminate(pod.id)
        client.close()
