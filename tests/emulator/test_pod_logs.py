"""``GET /v2/pods/{id}/logs``: SSE as the reference describes it, lines from real pod events."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest
from emu_helpers import create, gpu_pod, wait_status

ID = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/\d{12}$")
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIlogsTestKeyMaterial me@host"


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """An emulator whose RUNNING pods write a periodic line every 0.2 s."""
    return start_emulator(extra_args=("--log-interval-seconds", "0.2"))


def read_events(
    http: httpx.Client,
    pod_id: str,
    *,
    count: int | None = None,
    seconds: float = 1.5,
    headers: dict[str, str] | None = None,
    **params: Any,
) -> list[dict[str, Any]]:
    """Events of one logs request: until ``count`` arrived, ``seconds`` passed, or it ended."""
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    deadline = time.monotonic() + seconds
    timeout = httpx.Timeout(10.0, read=max(0.3, seconds))
    with http.stream(
        "GET", f"/v2/pods/{pod_id}/logs", params=params, headers=headers, timeout=timeout
    ) as response:
        assert response.status_code == 200, response.read()
        try:
            for line in response.iter_lines():
                if line.startswith("id: "):
                    current["id"] = line[4:]
                elif line.startswith("data: "):
                    current["data"] = json.loads(line[6:])
                elif line == "" and "data" in current:
                    events.append(current)
                    current = {}
                    if count is not None and len(events) >= count:
                        break
                if time.monotonic() > deadline:
                    break
        except httpx.ReadTimeout:
            pass
    return events


def running_pod(http: httpx.Client, **fields: Any) -> dict[str, Any]:
    pod = create(http, gpu_pod(**fields))
    wait_status(http, pod["id"], "RUNNING")
    return pod


def test_headers_and_event_shape(http: httpx.Client) -> None:
    pod = running_pod(http)
    timeout = httpx.Timeout(10.0, read=2.0)
    with http.stream("GET", f"/v2/pods/{pod['id']}/logs", timeout=timeout) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        assert "ratelimit" in response.headers
    events = read_events(http, pod["id"], count=3)
    assert len(events) == 3
    for event in events:
        assert ID.match(event["id"]), event["id"]
        assert set(event["data"]) == {"ts", "source", "line"}
        assert event["id"].startswith(event["data"]["ts"] + "/")
    seqs = [int(e["id"].rsplit("/", 1)[1]) for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3


def test_start_up_services_and_periodic_lines_never_show_secrets(
    http: httpx.Client, emu: Any
) -> None:
    assert http.put("/v2/account/ssh-keys", json={"keys": [SSH_KEY]}).status_code == 200
    try:
        pod = running_pod(http, startSsh=True, startJupyter=True, ports=["22/tcp", "8888/http"])
    finally:
        http.put("/v2/account/ssh-keys", json={"keys": []})
    time.sleep(0.6)
    events = read_events(http, pod["id"], tail=200, seconds=1.0)
    text = "\n".join(e["data"]["line"] for e in events)
    assert "scheduled on a NVIDIA GeForce RTX 4090 host" in text
    assert "pulling image runpod/pytorch:latest" in text
    assert "sshd listening on port 22" in text
    assert "1 authorized key(s) from PUBLIC_KEY" in text
    assert "Jupyter Server listening" in text
    assert "heartbeat: uptime" in text
    env = http.get(f"/v2/pods/{pod['id']}").json()["env"]
    assert env["JUPYTER_PASSWORD"] not in text
    assert "AAAAC3NzaC1lZDI1NTE5" not in text
    sources = {e["data"]["source"] for e in events}
    assert sources == {"container", "system"}


def test_source_filter_and_tail(http: httpx.Client) -> None:
    pod = running_pod(http)
    time.sleep(0.5)
    system = read_events(http, pod["id"], source="system", seconds=0.5)
    assert system and {e["data"]["source"] for e in system} == {"system"}
    two = read_events(http, pod["id"], tail=2, count=2, seconds=0.5)
    everything = read_events(http, pod["id"], tail=5000, seconds=0.5)
    assert [e["id"] for e in two] == [e["id"] for e in everything[-2:]] or (
        two[0]["id"] in [e["id"] for e in everything]
    )
    assert (
        read_events(http, pod["id"], tail=0, count=1, seconds=0.6)[0]["id"] > (everything[-1]["id"])
    )


def test_last_event_id_and_since_resume_exactly(http: httpx.Client) -> None:
    pod = running_pod(http)
    time.sleep(0.6)
    first = read_events(http, pod["id"], tail=5000, seconds=0.4)
    middle = first[len(first) // 2]
    resumed = read_events(
        http,
        pod["id"],
        headers={"Last-Event-ID": middle["id"]},
        since="2000-01-01T00:00:00Z",
        count=3,
        seconds=1.0,
    )
    expected = [e["id"] for e in first[len(first) // 2 + 1 :]][:3]
    assert [e["id"] for e in resumed][: len(expected)] == expected
    since = read_events(http, pod["id"], since=middle["data"]["ts"], count=2, seconds=1.0)
    assert since[0]["data"]["ts"] >= middle["data"]["ts"]
    assert since[0]["id"] <= middle["id"]  # inclusive: the line at that time comes again


def test_actions_write_lines_and_terminate_ends_the_stream(http: httpx.Client) -> None:
    pod = running_pod(http)
    assert http.post(f"/v2/pods/{pod['id']}/action", json={"action": "stop"}).status_code == 200
    lines = [e["data"]["line"] for e in read_events(http, pod["id"], tail=5000, seconds=0.5)]
    assert lines[-3:] == ["stop requested", "received SIGTERM, shutting down", "container stopped"]
    assert http.post(f"/v2/pods/{pod['id']}/action", json={"action": "start"}).status_code == 200
    wait_status(http, pod["id"], "RUNNING")
    after = [e["data"]["line"] for e in read_events(http, pod["id"], tail=5000, seconds=0.5)]
    assert "start requested" in after and after.count("pod is RUNNING") == 2
    # a refused action writes nothing
    assert http.post(f"/v2/pods/{pod['id']}/action", json={"action": "start"}).status_code == 409

    seen: list[str] = []
    with http.stream("GET", f"/v2/pods/{pod['id']}/logs", params={"tail": "0"}) as response:
        assert http.delete(f"/v2/pods/{pod['id']}").status_code == 204
        for line in response.iter_lines():  # returns: the server closes the stream
            if line.startswith("data: "):
                seen.append(json.loads(line[6:])["line"])
    assert seen[-1] == "pod terminated"
    assert http.get(f"/v2/pods/{pod['id']}/logs").status_code == 404


@pytest.mark.parametrize(
    ("params", "headers", "name"),
    [
        ({"source": "stdout"}, {}, "source"),
        ({"tail": "5001"}, {}, "tail"),
        ({"tail": "-1"}, {}, "tail"),
        ({"since": "yesterday"}, {}, "since"),
        ({"follow": "true"}, {}, "follow"),
        ({}, {"Last-Event-ID": "not-an-id"}, "Last-Event-ID"),
    ],
)
def test_bad_queries_are_400_problems(
    http: httpx.Client, params: dict[str, str], headers: dict[str, str], name: str
) -> None:
    pod = create(http, gpu_pod())
    response = http.get(f"/v2/pods/{pod['id']}/logs", params=params, headers=headers)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["errors"][0].startswith(f"{name}:")


def test_unknown_and_foreign_pods_are_404(http: httpx.Client, emu: Any) -> None:
    assert http.get("/v2/pods/nope/logs").status_code == 404
    pod = create(http, gpu_pod())
    with emu.http(emu.other_key) as other:
        assert other.get(f"/v2/pods/{pod['id']}/logs").status_code == 404


def test_lines_keep_their_ids_across_a_restart(start_emulator: Any) -> None:
    emu = start_emulator(extra_args=("--log-interval-seconds", "0.2"))
    with emu.http() as http:
        pod = running_pod(http)
        # the first lines, as many as a loaded machine has written (at least three)
        before = read_events(http, pod["id"], tail=5000, count=3, seconds=10)
    emu.restart()
    with emu.http() as http:
        # the oldest lines come first: the same number of them, after the restart
        after = read_events(http, pod["id"], tail=5000, count=len(before), seconds=10)
    by_id = {e["id"]: e["data"] for e in after}
    assert before and all(by_id.get(e["id"]) == e["data"] for e in before)
