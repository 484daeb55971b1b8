"""``%endpoint create|list|show|update|delete`` in a real IPython shell against the emulator:
each returns its object, shows a table (text and HTML), and every mistake is one line."""

from __future__ import annotations

import secrets
from typing import Any

from nbhelpers import assert_one_line_error, run_cell


def _html(run: Any) -> str:
    return "".join(out.data.get("text/html", "") for out in run.outputs)


def _text(run: Any) -> str:
    return "".join(out.data.get("text/plain", "") for out in run.outputs)


def test_create_update_show_list_delete(ip: Any, client: Any) -> None:
    name = "nbtest-ep-" + secrets.token_hex(3)
    run = run_cell(
        ip,
        f"nbtest_ep = %endpoint create {name} --image me/w:1 --workers-max 2 "
        "--env MODEL=small --env HF_TOKEN=hf_very_secret",
    )
    assert run.success, run.text
    endpoint = ip.user_ns["nbtest_ep"]
    assert endpoint.id == name and endpoint.workers["max"] == 2 and endpoint.version == 1
    shown = _text(run) + _html(run)
    assert f"Endpoint {name}" in shown and "me/w:1" in shown and "MODEL=small" in shown
    assert "hf_very_secret" not in shown  # secret-looking env values are masked

    run = run_cell(ip, f"%endpoint update {name} --image me/w:2 --workers-min 1 -o nbtest_up")
    assert run.success, run.text
    updated = ip.user_ns["nbtest_up"]
    assert updated.image == "me/w:2" and updated.workers == {"min": 1, "max": 2}
    assert updated.version == 2 and client.endpoints.get(name).image == "me/w:2"

    run = run_cell(ip, f"nbtest_show = %endpoint show {name}")
    assert run.success, run.text
    details = ip.user_ns["nbtest_show"]
    assert details.id == name and len(details.releases.releases) == 2
    text = _text(run)
    assert "Workers (0)" in text and "Releases (2" in text
    assert "image: 'me/w:1' → 'me/w:2'" in text and "hf_very_secret" not in text + _html(run)

    run = run_cell(ip, "nbtest_all = %endpoint list")
    assert run.success, run.text
    assert name in [e.id for e in ip.user_ns["nbtest_all"]]
    assert "Serverless endpoints" in _text(run) and name in _html(run)

    run = run_cell(ip, f"nbtest_gone = %endpoint delete {name}")
    assert run.success, run.text
    assert "Deleted endpoint" in run.stdout and ip.user_ns["nbtest_gone"].id == name
    assert name not in [e.id for e in client.endpoints.list()]


def test_mistakes_are_one_line(ip: Any, client: Any) -> None:
    assert_one_line_error(run_cell(ip, "%endpoint"), "create", "health")
    assert_one_line_error(run_cell(ip, "%endpoint frobnicate x"), "unknown subcommand")
    assert_one_line_error(run_cell(ip, "%endpoint create"), "NAME")
    assert_one_line_error(run_cell(ip, "%endpoint create x --workers-max -1"), "--workers-max")
    assert_one_line_error(run_cell(ip, "%endpoint create x --bogus 1"), "--bogus")
    assert_one_line_error(run_cell(ip, "%endpoint update echo"), "nothing to change")
    missing = "nbtest-none-" + secrets.token_hex(3)
    assert_one_line_error(run_cell(ip, f"%endpoint show {missing}"), "404")
    assert_one_line_error(run_cell(ip, f"%endpoint delete {missing}"), "404")
    assert_one_line_error(run_cell(ip, "%endpoint update echo --image x/y:1"), "built-in")
    name = "nbtest-ep-" + secrets.token_hex(3)
    client.endpoints.create(name=name)
    try:
        run = run_cell(ip, f"%endpoint update {name} --workers-min 5 --workers-max 1")
        assert_one_line_error(run, "min")
        run = run_cell(ip, f"%endpoint update {name} --timeout 5")
        assert_one_line_error(run, "timeout")
    finally:
        client.endpoints.delete(name)


def test_job_subcommands_still_work(ip: Any, comms: Any) -> None:
    run = run_cell(ip, "nbtest_h = %endpoint health echo")
    assert run.success, run.text
    assert ip.user_ns["nbtest_h"].endpoint_id == "echo"


def test_create_with_a_start_command_gets_workers_the_emulator_starts(
    ip: Any, client: Any, tmp_path: Any
) -> None:
    import sys

    handler = tmp_path / "handler.py"
    handler.write_text("def handler(job):\n    return {'twice': job['input']['n'] * 2}\n")
    name = "nbtest-scaled-" + secrets.token_hex(3)
    start = f"{sys.executable} -m podbook worker {handler}"
    run = run_cell(ip, f'%endpoint create {name} --args "{start}" --workers-max 2 --idle-timeout 2')
    assert run.success, run.text
    try:
        assert client.endpoints.get(name).args == start
        job = client.endpoint(name).runsync({"n": 21}, timeout=60)  # no worker started here
        assert job.output() == {"twice": 42}
    finally:
        client.endpoints.delete(name)


def test_logs_print_what_a_scaled_worker_printed(ip: Any, client: Any, tmp_path: Any) -> None:
    import sys

    handler = tmp_path / "loud.py"
    handler.write_text(
        "print('loading the model', flush=True)\n\ndef handler(job):\n    return job['input']\n"
    )
    name = "nbtest-logs-" + secrets.token_hex(3)
    start = f"{sys.executable} -m podbook worker {handler}"
    assert run_cell(ip, f'%endpoint create {name} --args "{start}" --idle-timeout 30').success
    try:
        job = client.endpoint(name).runsync({"n": 1}, timeout=60)
        run = run_cell(ip, f"nbtest_logs = %endpoint logs {name} --tail 50")
        assert run.success, run.text
        (worker,) = ip.user_ns["nbtest_logs"]
        assert worker == job.record.worker_id
        assert "loading the model" in run.stdout and f"worker {worker} (" in run.stdout
        assert_one_line_error(run_cell(ip, f"%endpoint logs {name} --tail 0"), "--tail")
    finally:
        client.endpoints.delete(name)
