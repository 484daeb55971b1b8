"""The issue-4 magics follow ``%pod``'s conventions, in a real IPython shell against the
emulator: ``--help`` on every magic and subcommand prints usage and succeeds; hostile or missing
arguments fail in one line naming the fix (never a traceback); secrets are never shown; and
every flag the issue spells out works exactly as spelled."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from nbhelpers import assert_one_line_error, run_cell

SUBCOMMANDS = {
    "template": ("create", "list", "update", "show", "delete"),
    "volume": ("create", "list", "update", "show", "delete"),
    "endpoint": ("create", "list", "show", "update", "delete"),
    "registry": ("create", "list", "delete", "delegate", "delegations", "revoke"),
    "sshkey": ("list", "add", "remove", "set"),
}


def _help_cases() -> list[str]:
    lines = [f"%{magic} --help" for magic in SUBCOMMANDS]
    lines += [f"%{magic} {sub} --help" for magic, subs in SUBCOMMANDS.items() for sub in subs]
    return [*lines, "%pod logs --help", "%billing --help", "%catalog gpus --help"]


@pytest.mark.parametrize("line", _help_cases())
def test_help_prints_usage_and_succeeds(ip: Any, line: str) -> None:
    run = run_cell(ip, line)
    assert run.success, run.text
    assert "Traceback" not in run.text and "usage" in run.text.lower(), run.text


@pytest.mark.parametrize(
    ("line", "needles"),
    [
        ("%template", ["missing subcommand", "create"]),
        ("%template frob", ["unknown subcommand 'frob'"]),
        ("%template create", ["missing --name, --image"]),
        ("%template create --name x --image y --disk big", ["--disk", "whole number"]),
        ("%template create --name x --image y --env NOEQ", ["--env", "KEY=VALUE"]),
        ("%template create --name 'unclosed", ["quot"]),
        ("%template update", ["missing ID"]),
        ("%template list extra", ["unexpected words"]),
        ("%volume", ["missing subcommand"]),
        ("%volume create", ["missing --name, --size, --dc"]),
        ("%volume create --name v --size -3 --dc EU-RO-1", ["--size", "whole number"]),
        ("%volume grow x", ["unknown subcommand 'grow'"]),
        ("%volume update", ["missing ID"]),
        ("%endpoint", ["missing subcommand", "create"]),
        ("%endpoint create", ["missing NAME"]),
        ("%endpoint create --name", ["--name", "expected one argument"]),
        ("%endpoint create a --name b", ["two names"]),
        ("%endpoint create x --workers-max abc", ["--workers-max"]),
        ("%endpoint create x --env NOEQ", ["--env", "KEY=VALUE"]),
        ("%endpoint create x --flashboot maybe", ["--flashboot", "off, on or priority"]),
        ("%endpoint show", ["missing ID"]),
        ("%endpoint delete", ["missing ID"]),
        ("%endpoint list --bogus", ["unknown argument --bogus"]),
        ("%registry", ["missing subcommand"]),
        ("%registry create", ["missing --name, --username"]),
        ("%registry show x", ["unknown subcommand 'show'"]),
        ("%registry delete", ["missing ID"]),
        ("%sshkey", ["missing subcommand"]),
        ("%sshkey add", ["--key", "--from-home"]),
        ("%sshkey add --key 'not a key'", ["authorized_keys"]),
        ("%sshkey add /no/such/file.pub", ["no file"]),
        ("%sshkey remove", ["missing"]),
        ("%pod logs", ["missing POD_ID"]),
        ("%pod logs abc --tail -1", ["--tail", "0 to 5000"]),
        ("%pod logs abc --tail x", ["--tail"]),
        ("%pod logs abc --source bogus", ["--source", "container", "system"]),
        ("%billing --last 7x", ["--last", "48h, 7d"]),
        ("%billing --last", ["--last"]),
        ("%billing --by minute", ["--by", "hour", "day"]),
        ("%billing --kind bogus", ["--kind", "pods", "serverless"]),
        ("%billing extra", ["unexpected words"]),
        ("%catalog gpus --min-vram x", ["--min-vram"]),
        ("%catalog gpus --cuda abc", ["--cuda", "12.4"]),
        ("%catalog gpus --cloud MOON", ["--cloud", "SECURE or COMMUNITY"]),
        ("%catalog gpus --dc", ["--dc"]),
    ],
)
def test_bad_or_missing_arguments_are_one_line(ip: Any, line: str, needles: list[str]) -> None:
    text = assert_one_line_error(run_cell(ip, line), *needles)
    assert text.startswith("UsageError:"), text


@pytest.mark.parametrize(
    ("line", "needles"),
    [
        ("%template show nbtest-none", ["404", "%template list"]),
        ("%template delete nbtest-none", ["404", "%template list"]),
        ("%volume create --name v --size 10 --dc NOWHERE", ["400", "NOWHERE", "US-TX-3"]),
        ("%volume show nbtest-none", ["404", "%volume list"]),
        ("%volume delete nbtest-none", ["404", "%volume list"]),
        ("%endpoint show nbtest-none", ["404", "%endpoint list"]),
        ("%endpoint delete nbtest-none", ["404", "%endpoint list"]),
        ("%endpoint update nbtest-none --image x", ["404", "%endpoint list"]),
        ("%endpoint delete echo", ["409", "built-in", "%endpoint list"]),
        ("%endpoint create nbtest-t --template nbtest-none", ["404", "--template"]),
        ("%endpoint create nbtest-t --template tpl-own", ["422", "pod template"]),
        ("%registry delete nbtest-none", ["404", "%registry list"]),
        ("%pod logs nbtest-none", ["404", "%pod list"]),
    ],
)
def test_service_refusals_are_one_line_with_the_fix(ip: Any, line: str, needles: list[str]) -> None:
    text = assert_one_line_error(run_cell(ip, line), *needles)
    assert "pod's actions" not in text  # no %pod advice for other magics


def test_endpoint_create_takes_name_as_a_flag_too_and_a_template(ip: Any, client: Any) -> None:
    name = "nbtest-ep-" + secrets.token_hex(3)
    run = run_cell(ip, f"nbtest_ep = %endpoint create --name {name} --template tpl-serverless")
    assert run.success, run.text
    created = ip.user_ns["nbtest_ep"]
    assert created.id == name and created.image == "me/worker:1"  # from the template
    client.endpoints.delete(name)


def test_registry_password_is_never_repeated(ip: Any) -> None:
    for line in (
        "%registry create --name r --username u --password hunter2-secret",
        "%registry create --name r --username u --password=hunter2-secret",
        "%registry create --name r --username u hunter2-secret",
        "%registry create --name r --username u --password-env 'hunter2-secret!'",
    ):
        text = assert_one_line_error(run_cell(ip, line), "--password-env")
        assert "hunter2" not in text, text


def test_secret_env_values_are_masked_in_outputs(ip: Any, client: Any) -> None:
    name = "nbtest-sec-" + secrets.token_hex(3)
    run = run_cell(ip, f"%endpoint create {name} --env HF_TOKEN=hf_nbtest_value --env A=1")
    assert run.success, run.text
    shown = run_cell(ip, f"%endpoint show {name}")
    assert shown.success, shown.text
    for output in (run, shown):
        everything = output.text + "".join(str(o.data) for o in output.outputs)
        assert "hf_nbtest_value" not in everything and "A=1" in everything
    client.endpoints.delete(name)
    tpl = run_cell(ip, "nbtest_t = %template create --name s --image i --env API_KEY=k_nbtest_v")
    assert tpl.success, tpl.text
    assert "k_nbtest_v" not in tpl.text + "".join(str(o.data) for o in tpl.outputs)
    client.templates.delete(ip.user_ns["nbtest_t"])


def test_the_issues_flags_work_as_spelled(ip: Any, client: Any, comms: Any) -> None:
    pod = client.pods.create(name="nbtest-logs", image="img:1", gpu="NVIDIA GeForce RTX 4090")
    client.pods.wait_for(pod, "RUNNING", timeout=30, poll_interval=0.05)
    ip.user_ns["nbtest_pod"] = pod.id
    for line in (
        "nbtest_lines = %pod logs {nbtest_pod} --tail 3 --source container",
        "nbtest_lines = %pod logs {nbtest_pod} --tail 3 --source system",
    ):
        run = run_cell(ip, line)
        assert run.success, run.text
        assert 0 < len(ip.user_ns["nbtest_lines"]) <= 3
    for line in (
        "%billing --last 7d --by day --kind pods",
        "%billing --last 48h --by hour --kind serverless",
        "%billing --last 7d --by day",
        "%catalog gpus --min-vram 40 --cuda 12.4 --cloud SECURE --dc EU-*",
    ):
        run = run_cell(ip, line)
        assert run.success, (line, run.text)
    client.pods.terminate(pod)


def test_registry_ecr_delegations(ip: Any, client: Any) -> None:
    arn = "arn:aws:ecr:us-east-2:123456789012:repository/team/app"
    run = run_cell(ip, f"nbtest_d = %registry delegate --resource {arn} --name nb")
    assert run.success, run.text
    made = ip.user_ns["nbtest_d"]
    assert made.repository == "team/app" and made.id in str(run.outputs[0].data)
    listed = run_cell(ip, "nbtest_rows = %registry delegations")
    assert listed.success and made.id in {d.id for d in ip.user_ns["nbtest_rows"]}
    ip.user_ns["nbtest_id"] = made.id
    assert run_cell(ip, "%registry revoke {nbtest_id}").success
    assert made.id not in {d.id for d in client.registries.list_delegations()}
    assert_one_line_error(run_cell(ip, "%registry revoke {nbtest_id}"), "404", "delegations`")
    assert_one_line_error(run_cell(ip, "%registry delegate"), "missing --resource")
    assert_one_line_error(
        run_cell(ip, "%registry delegate --resource docker.io/me/app"), "ECR repository ARN"
    )
