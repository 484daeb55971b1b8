"""Every user mistake is a short message that names the fix, never a traceback."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

import pytest
from nbhelpers import assert_one_line_error, magics_of, run_cell, wait_until

from podbook.client._local import emulator_is_healthy

RTX4090 = "NVIDIA GeForce RTX 4090"
OK = f'--gpu "{RTX4090}" --image runpod/pytorch'


@pytest.mark.parametrize(
    ("line", "needles"),
    [
        (f"%pod create {OK} --bogus", ["--bogus", "--help"]),
        ('%pod create --gpu "RTX 4090:two" --image x', ["--gpu", "ID[:COUNT]"]),
        ('%pod create --gpu "RTX:0" --image x', ["--gpu"]),
        ("%pod create --cpu cpu3c --image x", ["--cpu", "FLAVOR:VCPUS"]),
        ("%pod create --image x", ["--gpu", "--cpu"]),
        (f'%pod create --gpu "{RTX4090}"', ["--image"]),
        ("%pod create --gpu a --cpu b:2 --image x", ["--cpu", "--gpu"]),
        (f"%pod create {OK} --env NOEQUALS", ["--env", "KEY=VALUE"]),
        (f"%pod create {OK} --ports 8888", ["--ports", "8888/http"]),
        (f"%pod create {OK} --disk big", ["--disk"]),
        (f"%pod create {OK} --volume novolpath", ["--volume", "ID:/mount/path"]),
        (f"%pod create {OK} --persistent 20", ["--persistent", "SIZE_GB:/mount/path"]),
        (f"%pod create {OK} --cloud moon", ["--cloud", "SECURE or COMMUNITY"]),
        (f"%pod create {OK} --cuda 12.8 --min-cuda 12", ["--min-cuda", "--cuda"]),
        (f"%pod create {OK} -o 2bad", ["-o", "variable name"]),
        ("%pod create --gpu NVIDIA GeForce --image x", ["quote"]),
        (f"%pod create {OK} --name 'unclosed", ["quote"]),
        ("%pod", ["subcommand", "create"]),
        ("%pod launch", ["launch", "create"]),
        ("%pod show", ["POD_ID"]),
        ("%pod stop a b", ["unexpected words"]),
        ("%cluster", ["subcommand", "show"]),
        ("%cluster show", ["CLUSTER_ID"]),
        ("%catalog tpus", ["tpus", "gpus"]),
    ],
)
def test_usage_mistakes(ip: Any, line: str, needles: list[str]) -> None:
    text = assert_one_line_error(run_cell(ip, line), *needles)
    assert text.startswith("UsageError:")
    assert len(text.strip().splitlines()) == 1, text


def test_rule_refused_before_sending_names_the_field(ip: Any) -> None:
    text = assert_one_line_error(
        run_cell(ip, "%pod create --cpu cpu3c:3 --image x"), "vcpuCount", "power of two"
    )
    assert text.startswith("UsageError:")


def test_service_404_shows_detail_and_fix(ip: Any) -> None:
    text = assert_one_line_error(run_cell(ip, "%pod show nope123"), "404", "nope123", "%pod list")
    assert text.startswith("ServiceError:")
    assert len(text.strip().splitlines()) == 1, text


def test_service_400_shows_the_detail(ip: Any) -> None:
    text = assert_one_line_error(run_cell(ip, f"%pod create {OK} --cuda 99.1"), "400", "99.1")
    assert text.startswith("ServiceError:")
    assert len(text.strip().splitlines()) == 1, text


def test_service_hints_name_the_magic_not_the_route(ip: Any) -> None:
    text = assert_one_line_error(
        run_cell(ip, '%pod create --gpu "NVIDIA Imaginary 9000" --image x'), "%catalog gpus"
    )
    assert "GET /v2/catalog/gpus" not in text


def test_service_409_for_an_action_not_allowed_now(ip: Any, client: Any) -> None:
    run = run_cell(ip, f"nbtest_p = %pod create {OK}")
    assert run.success
    pod = ip.user_ns["nbtest_p"]
    client.pods.stop(pod.id)
    assert_one_line_error(run_cell(ip, "%pod restart {nbtest_p.id}"), "409", "actions")


def test_service_422_lists_the_errors(ip: Any) -> None:
    text = assert_one_line_error(
        run_cell(ip, f'%pod create --gpu "{RTX4090}" --template runpod-worker-vllm'), "422"
    )
    head, *items = text.strip().splitlines()
    assert "serverless" in head and "→" in head
    assert items and all(item.startswith("  - $.") for item in items), text


def test_unknown_key_gives_401_with_the_fix(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", "pbk_a_" + "0" * 32)
    magics_of(ip).session.reset_client()
    text = assert_one_line_error(run_cell(ip, "%pod list"), "401", "RUNPOD_API_KEY")
    assert "0" * 32 not in text


def test_read_only_key_gives_403(ip: Any, emulator: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", emulator.readonly_key)
    magics_of(ip).session.reset_client()
    text = assert_one_line_error(run_cell(ip, f"%pod create {OK}"), "403")
    assert emulator.readonly_key not in text


def test_no_connection_names_the_url(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("PODBOOK_URL", url)
    magics_of(ip).session.reset_client()
    text = assert_one_line_error(run_cell(ip, "%pod list"), url, "PODBOOK_", "network")
    assert text.startswith("ServiceError:")
    assert len(text.strip().splitlines()) == 1, text


def test_a_stopped_local_emulator_is_named_and_started_again(
    ip: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("PODBOOK_URL", "RUNPOD_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    home = tmp_path / "local-home"
    monkeypatch.setenv("PODBOOK_HOME", str(home))
    magics_of(ip).session.reset_client()
    try:
        assert run_cell(ip, "%pod list").success
        first = json.loads((home / "emulator.json").read_text())
        os.kill(first["pid"], signal.SIGTERM)
        wait_until(lambda: not emulator_is_healthy(first["url"]), timeout=20)
        text = assert_one_line_error(run_cell(ip, "%pod list"), first["url"], "run the magic again")
        assert text.startswith("ServiceError:") and "Client()" not in text
        again = run_cell(ip, "%pod list")
        assert again.success, again.text
        assert json.loads((home / "emulator.json").read_text())["pid"] != first["pid"]
    finally:
        with contextlib.suppress(OSError, ValueError, KeyError, ProcessLookupError):
            os.kill(json.loads((home / "emulator.json").read_text())["pid"], signal.SIGTERM)


def test_create_errors_name_the_flag_to_fix(ip: Any) -> None:
    text = assert_one_line_error(
        run_cell(ip, "%pod create --cpu cpu3c:2 --image x --persistent 20:/w"), "--persistent"
    )
    assert "mounts.persistent" in text
    text = assert_one_line_error(run_cell(ip, f"%pod create {OK} --template nope"), "404")
    assert "--template" in text and "%pod list" not in text
