"""``%catalog gpus`` as the GPU finder, in a real IPython shell against the emulator: every
filter, every bad input (one line naming the fix), the panel's buttons and its static form."""

from __future__ import annotations

from typing import Any

import pytest
from nbhelpers import assert_one_line_error, run_cell, wait_until

A40 = "NVIDIA A40"
WIDGET = "application/vnd.jupyter.widget-view+json"


def find(ip: Any, flags: str = "") -> tuple[list[Any], Any]:
    """Run ``%catalog gpus FLAGS``; return the result and its live panel."""
    from ipywidgets.widgets.widget import _instances

    run = run_cell(ip, f"nbtest_gpus = %catalog gpus {flags}")
    assert run.success, run.text
    assert len(run.outputs) == 1, run.outputs
    panel = _instances[run.outputs[0].data[WIDGET]["model_id"]]
    return ip.user_ns["nbtest_gpus"], panel


def ids(rows: list[Any]) -> list[str]:
    return [row.id for row in rows]


def all_gpus(client: Any, **filters: Any) -> list[Any]:
    return client.catalog.gpus(availability=True, **filters)


def test_no_filters_lists_every_gpu_type_in_a_panel(ip: Any, comms: Any, client: Any) -> None:
    rows, panel = find(ip)
    assert ids(rows) == ids(all_gpus(client))
    assert [g["id"] for g in panel.gpus] == ids(rows)
    assert panel.filters["text"] == "no filters"
    a40 = next(g for g in panel.gpus if g["id"] == A40)
    assert a40["command"] == f'%pod create --gpu "{A40}" --image runpod/pytorch'
    assert a40["cudaVersions"] and a40["dataCenters"] and a40["price"]["secure"] > 0


def test_min_vram(ip: Any, comms: Any, client: Any) -> None:
    rows, panel = find(ip, "--min-vram 48")
    expected = [g.id for g in all_gpus(client) if g.memory >= 48]
    assert ids(rows) == expected and "NVIDIA GeForce RTX 4090" not in expected
    assert "VRAM ≥ 48 GB" in panel.filters["text"]


def test_cuda_is_the_apis_minimum_cuda_version(ip: Any, comms: Any, client: Any) -> None:
    rows, panel = find(ip, "--cuda 12.8")
    listed = all_gpus(client, min_cuda_version="12.8")
    assert ids(rows) == [g.id for g in listed if g.cuda_versions]
    assert 0 < len(rows) < len(all_gpus(client)), "some types have no host with CUDA 12.8+"
    for gpu in panel.gpus:
        assert any(tuple(map(int, v.split("."))) >= (12, 8) for v in gpu["cudaVersions"])


def test_cloud(ip: Any, comms: Any, client: Any) -> None:
    rows, panel = find(ip, "--cloud community")
    expected = [g.id for g in all_gpus(client, cloud="COMMUNITY") if g.community]
    assert ids(rows) == expected and all(r.community for r in rows)
    assert all(g["command"].endswith("--cloud COMMUNITY") for g in panel.gpus)


def test_dc_pattern_keeps_and_narrows_data_centers(ip: Any, comms: Any, client: Any) -> None:
    rows, panel = find(ip, "--dc eu-*")
    expected = [
        g.id
        for g in all_gpus(client)
        if any(dc.id.startswith("EU-") for dc in g.data_centers or [])
    ]
    assert ids(rows) == expected
    centers = {dc["id"] for g in panel.gpus for dc in g["dataCenters"]}
    assert centers and all(dc.startswith("EU-") for dc in centers)
    rows, _ = find(ip, "--dc US-TX-3")
    assert all(any(dc.id == "US-TX-3" for dc in r.data_centers) for r in rows)


def test_max_price_in_the_chosen_cloud(ip: Any, comms: Any, client: Any) -> None:
    rows, _ = find(ip, "--max-price 0.5 --cloud SECURE")
    expected = [g.id for g in all_gpus(client) if g.secure and g.price.secure <= 0.5]
    assert ids(rows) == expected and rows
    rows, _ = find(ip, "--max-price 0.5")
    cheapest = [
        g.id
        for g in all_gpus(client)
        if min(p for p, on in ((g.price.secure, g.secure), (g.price.community, g.community)) if on)
        <= 0.5
    ]
    assert ids(rows) == cheapest and len(cheapest) >= len(expected)


def test_available(ip: Any, comms: Any, client: Any) -> None:
    rows, _ = find(ip, "--available")
    everything = all_gpus(client)
    assert ids(rows) == [g.id for g in everything if g.availability != "NONE"]
    assert len(rows) < len(everything), "the emulator has sold-out types"


def test_available_in_matching_data_centers(ip: Any, comms: Any) -> None:
    rows, _ = find(ip, "--dc EU-* --available")
    for row in rows:
        assert any(
            dc.id.startswith("EU-") and dc.availability != "NONE" for dc in row.data_centers
        ), row.id


def test_count_goes_to_the_api_and_into_the_create_line(ip: Any, comms: Any, client: Any) -> None:
    rows, panel = find(ip, "--count 8")
    assert ids(rows) == ids(all_gpus(client, count=8))
    assert all(':8" --image' in g["command"] for g in panel.gpus)


def test_image_of_the_create_lines(ip: Any, comms: Any) -> None:
    _, panel = find(ip, "--min-vram 40 --image me/train:2")
    assert all(g["command"].endswith("--image me/train:2") for g in panel.gpus)
    assert "me/train" not in panel.filters["text"]


def test_the_issues_example(ip: Any, comms: Any) -> None:
    rows, panel = find(ip, "--min-vram 40 --cuda 12.4 --cloud SECURE --dc EU-*")
    assert rows and all(r.memory >= 40 and r.secure for r in rows)
    assert panel.filters["text"] == "VRAM ≥ 40 GB · CUDA ≥ 12.4 · SECURE · DC EU-*"


def test_nothing_matches_says_so(ip: Any, comms: Any) -> None:
    rows, panel = find(ip, "--min-vram 100000")
    assert rows == [] and panel.gpus == []
    assert "no GPU type matches; loosen the filters" in panel.snapshot_text()


def test_static_form_for_saved_notebooks(ip: Any, comms: Any) -> None:
    run = run_cell(ip, "%catalog gpus --min-vram 40 --dc EU-*")
    bundle = run.outputs[0].data
    assert WIDGET in bundle
    text, html = bundle["text/plain"], bundle["text/html"]
    assert text.startswith("GPU types (") and "DC EU-*" in text
    line = next(row for row in text.splitlines() if row.startswith(A40))
    assert "$0.40" in line and "EU-RO-1:" in line and "US-" not in line
    assert "<table" in html and A40 in html
    run_cell(ip, "%config PodMagics.show_panels = False")
    run = run_cell(ip, "nbtest_gpus = %catalog gpus --min-vram 40")
    assert run.success and run.outputs == []
    run = run_cell(ip, "nbtest_gpus")
    assert len(run.outputs) == 1 and WIDGET not in run.outputs[0].data
    assert (
        A40 in run.outputs[0].data["text/html"]
        and "VRAM ≥ 40 GB" in run.outputs[0].data["text/plain"]
    )


def test_create_now_button_creates_the_pod(ip: Any, comms: Any, client: Any) -> None:
    _, panel = find(ip, "--min-vram 40 --cloud SECURE")
    panel._handle_custom_msg({"type": "run", "gpu": A40}, [])
    wait_until(lambda: panel.created.get("id") and not panel.busy, timeout=30)
    assert panel.error == ""
    pod = client.pods.get(panel.created["id"])
    assert pod.gpu.id == A40 and pod.image == "runpod/pytorch" and pod.cloud == "SECURE"
    assert f"created pod {pod.id}" in panel.snapshot_text()
    client.pods.terminate(pod.id)


def test_buttons_refuse_a_gpu_not_in_the_table(ip: Any, comms: Any) -> None:
    _, panel = find(ip, "--min-vram 40")
    panel._handle_custom_msg({"type": "run", "gpu": "NVIDIA GeForce RTX 4090"}, [])
    assert panel.error == "'NVIDIA GeForce RTX 4090' is not in this table; run %catalog gpus again."
    assert not panel.busy


def test_fill_message_queues_the_line_as_next_input(ip: Any, comms: Any) -> None:
    _, panel = find(ip, "--min-vram 40")
    queued: list[tuple[str, bool]] = []
    ip.set_next_input = lambda text, replace=False: queued.append((text, replace))
    try:
        panel._handle_custom_msg({"type": "fill", "gpu": A40}, [])
    finally:
        del ip.set_next_input
    assert queued == [(f'%pod create --gpu "{A40}" --image runpod/pytorch', False)]


def test_no_key_in_widget_state(ip: Any, comms: Any, nb_env: Any) -> None:
    find(ip, "--available")
    assert nb_env.api_key not in comms.all_text()


@pytest.mark.parametrize(
    ("flags", "needles"),
    [
        ("--min-vram abc", ["--min-vram", "positive integer", "'abc'"]),
        ("--min-vram 0", ["--min-vram", "'0'"]),
        ("--cuda twelve", ["--cuda", "12.4", "'twelve'"]),
        ("--cuda 12.4.1", ["--cuda", "'12.4.1'"]),
        ("--cloud MOON", ["--cloud", "SECURE or COMMUNITY", "'MOON'"]),
        ("--dc 'EU;RO'", ["--dc", "EU-*", "'EU;RO'"]),
        ("--max-price free", ["--max-price", "USD", "'free'"]),
        ("--max-price -1", ["--max-price"]),
        ("--max-price nan", ["--max-price", "'nan'"]),
        ("--count 0", ["--count", "positive integer", "'0'"]),
        ("--count", ["--count", "expected one argument"]),
        ("--min-ram 4", ["unknown argument --min-ram", "%catalog gpus --help"]),
        ("--dc EU RO", ["unexpected words", "quote values"]),
        ("--available yes", ["unexpected words"]),
        ("--image ''", ["--image", "container image"]),
    ],
)
def test_bad_input_is_one_line(ip: Any, flags: str, needles: list[str]) -> None:
    run = run_cell(ip, f"%catalog gpus {flags}")
    assert_one_line_error(run, *needles)


def test_other_kinds_take_no_filters(ip: Any) -> None:
    assert_one_line_error(run_cell(ip, "%catalog cpus --min-vram 40"), "unknown argument")
