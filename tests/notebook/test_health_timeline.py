"""The worker timeline of ``%endpoint health`` (issue 20 §3).

First what the panel makes of samples (synthetic listings, as the service and the emulator
answer them), then the whole path in a real IPython shell against a real emulator process:
an endpoint whose workers the emulator starts from its start command (a handler file written
for the ``runpod`` SDK) scales from zero and back, and the panel's history records each
worker starting, running and gone, with its cold start.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from nbhelpers import magics_of, run_cell, wait_until

from podbook import errors
from podbook.notebook.endpoints.health import HealthPanel
from podbook.notebook.endpoints.polling import HealthReading
from podbook.notebook.endpoints.timeline import (
    GONE,
    MAX_LANES,
    MAX_POINTS,
    WorkerTimeline,
    timeline_summary,
)

T0 = 1_795_000_000.0  # epoch seconds of the first sample


def iso(at: float) -> str:
    """``startedAt`` as the service writes it (whole seconds, ``Z``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def listing(*workers: tuple[str, str, float | None]) -> dict[str, Any]:
    """A ``GET /v2/serverless/{id}/workers`` body of ``(id, status, startedAt)``."""
    return {
        "workers": [
            {"id": wid, "status": status, "startedAt": iso(at) if at is not None else None}
            for wid, status, at in workers
        ],
        "summary": {},
    }


def depth(n: int) -> dict[str, Any]:
    return {"jobs": {"inQueue": n}, "workers": {}}


def states(lane: dict[str, Any]) -> list[str]:
    return [state for _, state in lane["points"]]


def lane_of(wire: dict[str, Any], worker_id: str) -> dict[str, Any]:
    return next(lane for lane in wire["lanes"] if lane["id"] == worker_id)


# -- what the panel makes of samples -----------------------------------------------------------


def test_a_worker_starts_runs_idles_and_goes_with_its_cold_start() -> None:
    timeline = WorkerTimeline()
    timeline.add(T0, depth(0), listing())
    timeline.add(T0 + 2, depth(5), listing(("w1", "INITIALIZING", T0 + 1)))
    timeline.add(T0 + 4, depth(5), listing(("w1", "INITIALIZING", T0 + 1)))
    timeline.add(T0 + 6, depth(3), listing(("w1", "RUNNING", T0 + 1)))
    timeline.add(T0 + 8, depth(0), listing(("w1", "IDLE", T0 + 1)))
    timeline.add(T0 + 10, depth(0), listing())
    wire = timeline.to_wire()
    lane = lane_of(wire, "w1")
    # drawn from its startedAt; each state from the first sample that showed it
    assert lane["points"] == [
        [int((T0 + 1) * 1000), "INITIALIZING"],
        [int((T0 + 6) * 1000), "RUNNING"],
        [int((T0 + 8) * 1000), "IDLE"],
        [int((T0 + 10) * 1000), GONE],
    ]
    assert lane["coldStart"] == 5.0  # startedAt → the first sample that shows it RUNNING
    assert wire["queue"] == [[int(T0 * 1000), 0], [int((T0 + 2) * 1000), 5]] + [
        [int((T0 + 6) * 1000), 3],
        [int((T0 + 8) * 1000), 0],
    ]
    assert wire["now"] == int((T0 + 10) * 1000) and wire["since"] == int(T0 * 1000)
    assert wire["samples"] == 6 and wire["resolution"] == 2.0
    assert wire["window"] == 60  # the axis: the shortest span that holds the samples
    summary = timeline.summary()
    assert summary.startswith("worker timeline, last 10.0 s: 1 worker(s) seen (1 gone)")
    assert "cold start(s) 5.0 s (sampled every 2.0 s)" in summary
    assert summary.endswith("queue peak 5")


def test_the_axis_grows_with_what_was_sampled_up_to_the_window() -> None:
    timeline = WorkerTimeline()
    spans = []
    for at in (0, 59, 61, 119, 121, 299, 301, 900):
        timeline.add(T0 + at, depth(0), listing())
        spans.append(timeline.to_wire()["window"])
    assert spans == [60, 60, 120, 120, 300, 300, 300, 300]


def test_a_cold_start_is_known_only_for_a_start_the_panel_watched() -> None:
    timeline = WorkerTimeline()
    # already serving when the panel opened: no cold start; still starting: measured
    timeline.add(T0, depth(0), listing(("old", "IDLE", T0 - 60), ("boot", "INITIALIZING", T0 - 1)))
    timeline.add(T0 + 1, depth(0), listing(("old", "IDLE", T0 - 60), ("boot", "IDLE", T0 - 1)))
    # started and ready between two samples: measured, and drawn starting from startedAt
    timeline.add(
        T0 + 2,
        depth(0),
        listing(
            ("old", "RUNNING", T0 - 60), ("boot", "IDLE", T0 - 1), ("quick", "RUNNING", T0 + 1)
        ),
    )
    wire = timeline.to_wire()
    assert lane_of(wire, "old")["coldStart"] is None
    assert states(lane_of(wire, "old")) == ["IDLE", "RUNNING"]
    assert lane_of(wire, "boot")["coldStart"] == 2.0
    assert lane_of(wire, "quick")["coldStart"] == 1.0
    assert states(lane_of(wire, "quick")) == ["INITIALIZING", "RUNNING"]


def test_a_worker_listed_twice_counts_once() -> None:
    """For a moment after its first job request, the emulator lists a worker twice: once
    RUNNING (startedAt: that request), once INITIALIZING (startedAt: its process start)."""
    timeline = WorkerTimeline()
    timeline.add(T0, depth(1), listing(("w", "INITIALIZING", T0 - 2)))
    timeline.add(T0 + 1, depth(0), listing(("w", "RUNNING", T0 + 1), ("w", "INITIALIZING", T0 - 2)))
    lane = lane_of(timeline.to_wire(), "w")
    assert states(lane) == ["INITIALIZING", "RUNNING"]
    assert lane["startedAt"] == int((T0 - 2) * 1000) and lane["coldStart"] == 3.0


def test_restart_reappearance_and_a_failed_listing() -> None:
    timeline = WorkerTimeline()
    timeline.add(T0, depth(0), listing(("w", "INITIALIZING", T0)))
    timeline.add(T0 + 1, depth(0), listing(("w", "IDLE", T0)))
    timeline.add(T0 + 2, depth(0), None)  # the listing failed: the lanes stay as they were
    assert states(lane_of(timeline.to_wire(), "w")) == ["INITIALIZING", "IDLE"]
    timeline.add(T0 + 3, depth(0), listing(("w", "INITIALIZING", T0 + 3)))  # started again
    timeline.add(T0 + 5, depth(0), listing(("w", "RUNNING", T0 + 3)))
    lane = lane_of(timeline.to_wire(), "w")
    assert states(lane) == ["INITIALIZING", "IDLE", "INITIALIZING", "RUNNING"]
    assert lane["coldStart"] == 2.0
    timeline.add(T0 + 6, depth(0), listing())
    timeline.add(T0 + 7, depth(0), listing(("w", "IDLE", T0 + 6.5)))  # back under the same id
    lane = lane_of(timeline.to_wire(), "w")
    assert states(lane)[-3:] == ["RUNNING", GONE, "IDLE"]
    assert lane["coldStart"] == 1.0  # its start fell between two samples: watched
    timeline.add(T0 + 8, None, None)  # nothing read: no sample
    assert timeline.to_wire()["samples"] == 7


def test_a_worker_back_in_the_same_run_or_resumed() -> None:
    """A worker listed again with the startedAt its lane knows was only out of the listing for a
    while: no new start. One listed again with a later startedAt started again (FlashBoot on the
    emulator resumes a frozen worker so): its lane shows it starting from then, with its cold
    start."""
    timeline = WorkerTimeline()
    timeline.add(T0, depth(0), listing(("w", "INITIALIZING", T0)))
    timeline.add(T0 + 2, depth(0), listing(("w", "IDLE", T0)))
    timeline.add(T0 + 4, depth(0), listing())
    timeline.add(T0 + 6, depth(0), listing(("w", "IDLE", T0)))  # the same run
    lane = lane_of(timeline.to_wire(), "w")
    assert states(lane) == ["INITIALIZING", "IDLE", GONE, "IDLE"] and lane["coldStart"] == 2.0
    timeline.add(T0 + 8, depth(0), listing())
    timeline.add(T0 + 12, depth(1), listing(("w", "RUNNING", T0 + 11)))  # resumed at T0 + 11
    lane = lane_of(timeline.to_wire(), "w")
    assert lane["points"][-3:] == [
        [int((T0 + 8) * 1000), GONE],
        [int((T0 + 11) * 1000), "INITIALIZING"],
        [int((T0 + 12) * 1000), "RUNNING"],
    ]
    assert lane["coldStart"] == 1.0 and lane["startedAt"] == int((T0 + 11) * 1000)


def test_the_history_is_bounded_in_time_lanes_and_points() -> None:
    timeline = WorkerTimeline()
    timeline.add(T0, depth(9), listing(("early", "IDLE", T0 - 5)))
    timeline.add(T0 + 10, depth(9), listing())  # early is gone at T0 + 10
    # a worker flapping every sample for 20 minutes, with 40 short-lived ones beside it
    at = T0 + 10
    for n in range(2_400):
        at += 0.5
        status = "RUNNING" if n % 2 else "IDLE"
        extra = [(f"brief-{n // 60}", "INITIALIZING", at - 0.2)] if n % 60 < 30 else []
        timeline.add(at, depth(n % 7), listing(("flap", status, T0), *extra))
    wire = timeline.to_wire()
    cut = wire["now"] - 300_000
    assert all(lane["id"] != "early" for lane in wire["lanes"])  # gone before the window
    assert len(wire["lanes"]) <= MAX_LANES
    assert wire["hiddenLanes"] == 0 or len(wire["lanes"]) == MAX_LANES
    flap = lane_of(wire, "flap")  # live lanes are shown first
    assert len(flap["points"]) <= MAX_POINTS
    assert flap["points"][0][0] >= cut  # clipped to the window
    assert len(wire["queue"]) <= MAX_POINTS and wire["queue"][0][0] >= cut
    assert len(json.dumps(wire)) < 60_000  # what one refresh sends stays small


def test_too_many_workers_show_the_live_and_the_latest() -> None:
    timeline = WorkerTimeline()
    many = [(f"w{i:02}", "RUNNING", T0 - 1) for i in range(MAX_LANES + 6)]
    timeline.add(T0, depth(0), listing(*many))
    timeline.add(T0 + 1, depth(0), listing(*many[:10]))
    wire = timeline.to_wire()
    assert len(wire["lanes"]) == MAX_LANES and wire["hiddenLanes"] == 6
    shown = {lane["id"] for lane in wire["lanes"]}
    assert {f"w{i:02}" for i in range(10)} <= shown  # every live worker is among them
    assert "6 more" not in timeline_summary(wire)
    assert f"{MAX_LANES + 6} worker(s) seen (14 gone, 10 running)" in timeline_summary(wire)


def test_the_panel_stops_asking_for_a_listing_its_key_may_not_read() -> None:
    refused = errors.Forbidden(403, "Forbidden", "this key may not read workers")
    panel = HealthPanel("ep", {"jobs": {"inQueue": 2}, "workers": {"idle": 0}}, refused)
    try:
        assert panel.queue_key() == ("health", "ep")
        assert panel.timeline["note"] == (
            "worker lanes unavailable: 403 Forbidden: this key may not read workers"
        )
        assert "403" in panel.snapshot_text()
        panel.apply_queue({"jobs": {"inQueue": 1}, "workers": {}})  # a /health body alone
        assert panel.timeline["queue"][-1][1] == 1 and panel.timeline["lanes"] == []
        assert panel.health["jobs"]["inQueue"] == 1
    finally:
        panel.close()
    other = HealthPanel(
        "ep2", {"jobs": {"inQueue": 0}}, errors.ServerError(503, "Service Unavailable", "")
    )
    try:
        assert other.queue_key() == ("health", "ep2", "workers")  # a passing failure: ask again
        other.apply_queue(HealthReading(depth(0), listing(("w", "IDLE", T0)), time.time()))
        assert [lane["id"] for lane in other.timeline["lanes"]] == ["w"]
    finally:
        other.close()


# -- in a real shell, against a real emulator --------------------------------------------------

SDK_HANDLER = """\
import os
import time

import runpod

GATE = {gate!r}


def handler(job):
    # Holds each job until the test opens the gate: the panel sees the worker RUNNING
    # however slowly its samples come.
    deadline = time.time() + 240
    while not os.path.exists(GATE) and time.time() < deadline:
        time.sleep(0.05)
    return {{"n": job["input"]["n"]}}


runpod.serverless.start({{"handler": handler}})
"""


@pytest.fixture
def scaled_endpoint(client: Any, tmp_path: Path) -> Any:
    """An endpoint with min 0, max 2 and idleTimeout 1 whose start command runs a handler
    file written for the ``runpod`` SDK; yields (endpoint id, gate file)."""
    gate = tmp_path / "gate"
    handler = tmp_path / "handler.py"
    handler.write_text(SDK_HANDLER.format(gate=str(gate)))
    endpoint = client.endpoints.create(
        name="nbtest-tl-" + secrets.token_hex(3),
        args=f"{sys.executable} {handler}",
        workers={"min": 0, "max": 2, "idleTimeout": 1},
    )
    try:
        yield endpoint.id, gate
    finally:
        gate.touch()
        client.endpoints.delete(endpoint.id)


@pytest.mark.timeout(420)
def test_the_panel_records_workers_starting_running_and_gone(
    ip: Any, comms: Any, client: Any, nb_env: Any, scaled_endpoint: Any
) -> None:
    endpoint_id, gate = scaled_endpoint
    ip.user_ns["nbtest_ep"] = endpoint_id
    run = run_cell(ip, "nbtest_health = %endpoint health {nbtest_ep}")
    assert run.success, run.text
    refresher = magics_of(ip).session.refresher
    panel = next(p for p in refresher.panels if getattr(p, "endpointId", "") == endpoint_id)
    assert panel.timeline["lanes"] == []  # min 0: no worker until a job comes
    report = ip.user_ns["nbtest_health"]
    assert report.timeline is panel.history  # what the magic returned follows the panel

    queue = client.endpoint(endpoint_id)
    jobs = [queue.run({"n": n}) for n in range(3)]

    def running_lanes() -> list[dict[str, Any]]:
        return [lane for lane in panel.timeline.get("lanes", []) if "RUNNING" in states(lane)]

    started = wait_until(running_lanes, timeout=180)  # a cold start of the runpod SDK
    assert max(depth for _, depth in panel.timeline["queue"]) >= 1
    gate.touch()
    assert sorted(job.output(timeout=120)["n"] for job in jobs) == [0, 1, 2]

    def all_gone() -> dict[str, Any] | None:
        wire = panel.timeline
        lanes = wire.get("lanes") or []
        return wire if lanes and all(lane["points"][-1][1] == GONE for lane in lanes) else None

    wire = wait_until(all_gone, timeout=180, every=0.1)  # idleTimeout 1: back to zero
    assert {lane["id"] for lane in started} <= {lane["id"] for lane in wire["lanes"]}
    # the workers that ran jobs are in the final timeline, with their runs
    assert all("RUNNING" in states(lane) for lane in wire["lanes"] if lane["id"] in {
        one["id"] for one in started})  # fmt: skip
    for lane in wire["lanes"]:
        seen = states(lane)
        # watched from zero: each worker starting, then ready, then gone (on a loaded machine
        # a slow cold start can add a worker the queue no longer needs: idle, then gone)
        assert seen[0] == "INITIALIZING" and seen[-1] == GONE, seen
        ready_at = next(t for t, state in lane["points"] if state in ("IDLE", "RUNNING"))
        assert lane["startedAt"] is not None and lane["coldStart"] is not None, lane
        assert lane["coldStart"] == round(max(0.0, (ready_at - lane["startedAt"]) / 1000), 2)
        assert 0 < lane["coldStart"] < 180
    assert wire["queue"][-1][1] == 0 and wire["resolution"] is not None

    assert report.timeline.live_workers() == 0
    text = panel.snapshot_text()
    assert f"{len(wire['lanes'])} worker(s) seen ({len(wire['lanes'])} gone)" in text
    assert "cold start(s) " in text
    # the view got the timeline, and nothing secret went with it
    sent = comms.all_text()
    assert '"timeline"' in sent and '"GONE"' in sent
    assert nb_env.api_key not in sent


def test_the_static_form_summarizes_one_reading(ip: Any, comms: Any) -> None:
    """Without panels (``show_panels`` off): the counts and a one-line worker summary."""
    assert run_cell(ip, "%config PodMagics.show_panels = False").success
    run = run_cell(ip, "nbtest_health = %endpoint health echo\nnbtest_health")
    assert run.success, run.text
    report = ip.user_ns["nbtest_health"]
    assert report.listing is not None and report.workers is not None  # /health's counts
    (shown,) = [out for out in run.outputs if "text/html" in out.data]
    assert shown.data["text/plain"].startswith("Endpoint echo — jobs: completed ")
    assert "worker timeline, 1 sample: " in shown.data["text/plain"]
    assert 'class="podbook-timeline-summary"' in shown.data["text/html"]
    assert "worker timeline, 1 sample" in repr(report)
