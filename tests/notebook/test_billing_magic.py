"""``%billing`` in a real IPython shell against the emulator, and its static SVG chart."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from nbhelpers import assert_one_line_error, magics_of, run_cell, wait_until

from podbook.notebook.billing.chart import chart_data, money, nice_max
from podbook.notebook.billing.magic import parse_billing_line
from podbook.notebook.billing.svg import bar_layout, render_html, render_svg

RTX4090 = "NVIDIA GeForce RTX 4090"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def no_panels_left(ip: Any) -> Any:
    yield
    magics_of(ip).session.refresher.stop()


def _aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "records": records,
        "metadata": {
            "query": {
                "startTime": "2026-06-01T00:00:00Z",
                "endTime": "2026-06-03T00:00:00Z",
                "bucketSize": "day",
            },
            "recordCount": len(records),
            "totals": {},
        },
    }


def _record(day: int, **amounts: float) -> dict[str, Any]:
    return {
        "startTime": f"2026-06-0{day}T00:00:00Z",
        "endTime": f"2026-06-0{day + 1}T00:00:00Z",
        **amounts,
    }


def test_chart_stacks_one_series_per_kind() -> None:
    chart = chart_data(
        _aggregate(
            [
                _record(1, podGpuAmount=2.0, podDiskAmount=0.5, serverlessGpuAmount=1.0),
                _record(2, clusterGpuAmount=4.0),
            ]
        )
    )
    assert [s["key"] for s in chart["series"]][:2] == ["pods", "serverless"]
    assert chart["buckets"][0]["values"]["pods"] == 2.5
    assert chart["buckets"][0]["label"] == "Jun 01"
    assert chart["totals"]["clusters"] == 4.0 and chart["total"] == 7.5
    segments = bar_layout(chart)
    assert [(s["bucket"], s["key"]) for s in segments] == [
        (0, "pods"),
        (0, "serverless"),
        (1, "clusters"),
    ]
    pods, serverless = segments[0], segments[1]
    assert serverless["y"] + serverless["height"] == pytest.approx(pods["y"])


def test_static_svg_is_well_formed_with_axes_tooltips_and_legend() -> None:
    chart = chart_data(_aggregate([_record(1, podGpuAmount=3.0), _record(2, endpointAmount=1.0)]))
    root = ET.fromstring(render_svg(chart))
    bars = root.findall(f"{SVG}rect[@class='podbook-billing-bar']")
    assert [b.get("data-key") for b in bars] == ["pods", "endpoints"]
    assert bars[0].find(f"{SVG}title").text == "Jun 01 · Pods: $3.00"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "$0" in texts and "$5.00" in texts  # y axis up to the nice maximum
    assert "Jun 01" in texts and "Jun 02" in texts and "Public endpoints" in texts
    assert "var(--jp-ui-font-color1" in render_svg(chart)
    html = render_html(chart)
    assert "podbook-billing-table" in html and "$4.00" in html  # total beside the chart


def test_money_and_axis_rounding() -> None:
    assert (money(0), money(12.345), money(0.000123)) == ("$0", "$12.35", "$0.000123")
    assert (nice_max(0), nice_max(3.2), nice_max(0.07)) == (1.0, 5, 0.1)


def test_line_parsing() -> None:
    assert parse_billing_line("").last_n == 7
    command = parse_billing_line("--last 48h --by hour --kind pods -o nbtest_b")
    assert (command.last_n, command.bucket_size, command.kind) == (48, "hour", "pods")
    assert parse_billing_line("--last 2w").last_n == 14
    assert parse_billing_line("--last 10h").last_n == 1


def test_billing_shows_the_chart_panel_and_returns_the_report(ip: Any, client: Any) -> None:
    pod = client.pods.create(name="nbtest-billed", image="runpod/pytorch", gpu=RTX4090)
    wait_until(lambda: client.pods.get(pod.id).status == "RUNNING", timeout=30)
    run = run_cell(ip, "nbtest_bill = %billing --last 2d --by hour")
    assert run.success, run.text
    report = ip.user_ns["nbtest_bill"]
    assert len(report.chart["buckets"]) == 48
    assert report.chart["totals"]["pods"] > 0 and report.total >= report.chart["totals"]["pods"]
    assert len(run.outputs) == 1, "the panel is displayed once"
    data = run.outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "<svg" in data["text/html"] and "podbook-billing-bar" in data["text/html"]
    assert data["text/plain"].startswith("Spend by resource kind per hour")
    client.pods.terminate(pod.id)


def test_billing_of_one_kind_stacks_per_resource(ip: Any, client: Any) -> None:
    pod = client.pods.create(name="nbtest-billed-2", image="runpod/pytorch", gpu=RTX4090)
    wait_until(lambda: client.pods.get(pod.id).status == "RUNNING", timeout=30)
    run = run_cell(ip, "%billing --kind pods --by day --last 1d -o nbtest_pods")
    assert run.success, run.text
    keys = [s["key"] for s in ip.user_ns["nbtest_pods"].chart["series"]]
    assert pod.id in keys
    client.pods.terminate(pod.id)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("--last soon", "--last"),
        ("--by minute", "--by"),
        ("--kind gpus", "--kind"),
        ("--last 3m --by hour", "larger --by"),
        ("--color red", "--color"),
        ("--budget -5", "not a positive amount"),
        ("--budget 0", "not a positive amount"),
        ("--budget ten", "not a positive amount"),
        ("--budget nan", "not a positive amount"),
        ("--budget", "--budget"),
        ("--budget 10 --per month", "--per"),
        ("--per week", "--per goes with --budget"),
        ("--budget 10 --last 2d", "--budget takes only --per"),
    ],
)
def test_user_mistakes_are_one_line(ip: Any, line: str, needle: str) -> None:
    run = run_cell(ip, f"%billing {line}")
    text = assert_one_line_error(run, needle)
    assert re.search(r"%billing", text)
