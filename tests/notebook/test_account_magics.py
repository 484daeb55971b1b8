"""``%template``, ``%volume``, ``%registry`` and ``%sshkey`` in a real IPython shell against
the emulator process: each subcommand returns its object, shows a table, and fails in one line
naming the fix; the registry password never reaches a cell, an output or the history."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any

import pytest
from nbhelpers import assert_one_line_error, run_cell

KEY_A = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBnbAccountKeyA alice@laptop"
KEY_B = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBnbAccountKeyB bob@desk"


def ok(ip: Any, source: str) -> Any:
    run = run_cell(ip, source)
    assert run.success, run.text
    return run


def html_of(run: Any) -> str:
    assert len(run.outputs) == 1, run.outputs
    return run.outputs[0].data["text/html"]


# ---------------------------------------------------------------------------- %template


def test_template_create_show_update_delete(ip: Any, client: Any) -> None:
    run = ok(
        ip,
        "nbtest_tpl = %template create --name nb-tpl --image me/nb:1 --ports 8888/http "
        "--env A=1 --disk 25 --no-jupyter",
    )
    tpl = ip.user_ns["nbtest_tpl"]
    assert "nb-tpl" in html_of(run) and tpl.id in html_of(run)
    assert client.templates.get(tpl.id).image == "me/nb:1"
    assert tpl.start_jupyter is False and tpl.start_ssh is True and tpl.serverless is False

    ip.user_ns["nbtest_id"] = tpl.id
    shown = ok(ip, "nbtest_same = %template show {nbtest_id}")
    assert ip.user_ns["nbtest_same"] == tpl and "me/nb:1" in html_of(shown)
    ok(ip, "nbtest_new = %template update {nbtest_id} --image me/nb:2 --serverless")
    assert ip.user_ns["nbtest_new"].image == "me/nb:2"
    assert client.templates.get(tpl.id).serverless is True

    listed = ok(ip, "nbtest_rows = %template list")
    assert tpl.id in {t.id for t in ip.user_ns["nbtest_rows"]} and tpl.id in html_of(listed)
    gone = ok(ip, "nbtest_gone = %template delete {nbtest_id}")
    assert ip.user_ns["nbtest_gone"].id == tpl.id and "Deleted template" in html_of(gone)
    assert tpl.id not in {t.id for t in client.templates.list()}


def test_public_templates_are_listed_and_read_only(ip: Any, client: Any) -> None:
    ok(ip, "nbtest_rows = %template list --public")
    public = ip.user_ns["nbtest_rows"][0]
    assert public.id in {t.id for t in client.catalog.templates()}
    run = run_cell(ip, f"%template delete {public.id}")
    assert_one_line_error(run, "public catalog template", "%template list")


def test_template_usage_errors_name_the_fix(ip: Any) -> None:
    assert_one_line_error(run_cell(ip, "%template create --name x"), "--image")
    assert_one_line_error(run_cell(ip, "%template update tpl_x"), "nothing to change")
    assert_one_line_error(run_cell(ip, "%template show"), "ID")
    assert_one_line_error(run_cell(ip, "%template frobnicate"), "create, list")
    assert_one_line_error(
        run_cell(ip, "%template create --name x --image y --cuda twelve"), "(--cuda)"
    )


def test_template_update_builds_the_request_model_and_clears_the_registry() -> None:
    from podbook.api.base import to_wire
    from podbook.api.templates import UpdateTemplateRequest
    from podbook.notebook.account.commands import build_template_subcommands

    update = build_template_subcommands()["update"]
    command = update.build(update.parser.parse_args(["tpl_1", "--no-registry", "--disk", "30"]))
    request = command.request(UpdateTemplateRequest)
    assert isinstance(request, UpdateTemplateRequest)
    assert to_wire(request) == {"disk": 30, "registry": None}


# ---------------------------------------------------------------------------- %volume


def test_volume_create_grow_and_delete(ip: Any, client: Any) -> None:
    run = ok(ip, "nbtest_vol = %volume create --name nb-data --size 20 --dc EU-RO-1")
    volume = ip.user_ns["nbtest_vol"]
    assert (volume.size, volume.data_center, volume.type) == (20, "EU-RO-1", "STANDARD")
    assert "EU-RO-1" in html_of(run)
    ip.user_ns["nbtest_id"] = volume.id
    ok(ip, "nbtest_big = %volume update {nbtest_id} --size 40")
    assert client.network_volumes.get(volume.id).size == 40
    shrink = run_cell(ip, "%volume update {nbtest_id} --size 30")
    assert_one_line_error(shrink, "cannot shrink", "at least 40")
    listed = ok(ip, "nbtest_rows = %volume list")
    assert volume.id in html_of(listed)
    ok(ip, "%volume delete {nbtest_id}")
    assert_one_line_error(run_cell(ip, "%volume show {nbtest_id}"), "%volume list")


def test_volume_flags_are_checked(ip: Any) -> None:
    assert_one_line_error(run_cell(ip, "%volume create --name x --size 20"), "--dc")
    assert_one_line_error(
        run_cell(ip, "%volume create --name x --size 20 --dc EU-RO-1 --type FAST"),
        "STANDARD or HIGH_PERFORMANCE",
    )
    assert_one_line_error(run_cell(ip, "%volume update abc"), "--size")


# ---------------------------------------------------------------------------- %registry


def test_registry_password_is_asked_hidden_and_never_shown(
    ip: Any, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts: list[str] = []

    def fake_getpass(prompt: str = "") -> str:
        prompts.append(prompt)
        return "nb-hidden-pw-123"

    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    run = ok(ip, "nbtest_reg = %registry create --name nb-reg --username nbuser")
    registry = ip.user_ns["nbtest_reg"]
    assert prompts and "nbuser" in prompts[0] and "hidden" in prompts[0]
    assert "nb-hidden-pw-123" not in run.text + html_of(run) + repr(registry)
    assert "nb-hidden-pw-123" not in repr(ip.user_ns.get("_"))
    assert registry.id in {r.id for r in client.registries.list()}
    listed = ok(ip, "%registry list")
    assert registry.id in html_of(listed)
    ip.user_ns["nbtest_id"] = registry.id
    ok(ip, "%registry delete {nbtest_id}")
    assert registry.id not in {r.id for r in client.registries.list()}


def test_registry_password_from_an_environment_variable(
    ip: Any, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NBTEST_REG_PW", "env-secret-456")
    run = ok(
        ip, "nbtest_reg = %registry create --name nb-env --username u --password-env NBTEST_REG_PW"
    )
    assert "env-secret-456" not in run.text + html_of(run)
    assert ip.user_ns["nbtest_reg"].name == "nb-env"
    monkeypatch.delenv("NBTEST_REG_PW")
    missing = run_cell(ip, "%registry create --name x --username u --password-env NBTEST_REG_PW")
    assert_one_line_error(missing, "$NBTEST_REG_PW is not set")
    typed = assert_one_line_error(
        run_cell(ip, "%registry create --name x --username u --password hunter2"),
        "--password is refused",
        "--password-env",
    )
    assert "hunter2" not in typed


def test_registry_delete_in_use_names_the_pod(ip: Any, client: Any) -> None:
    registry = client.registries.create(name="nb-used", username="u", password="p")
    pod = client.pods.create(
        name="nb-private", image="me/p:1", gpu="NVIDIA GeForce RTX 4090", registry=registry.id
    )
    ip.user_ns["nbtest_id"] = registry.id
    assert_one_line_error(run_cell(ip, "%registry delete {nbtest_id}"), pod.id, "terminate")
    client.pods.terminate(pod)
    client.registries.delete(registry)


# ---------------------------------------------------------------------------- %sshkey


@pytest.fixture
def keys_restored(client: Any) -> Any:
    before = list(client.account.ssh_keys.get().keys)
    yield
    client.account.ssh_keys.put(before)


def test_sshkey_add_list_remove_set(
    ip: Any, client: Any, tmp_path: Path, keys_restored: Any
) -> None:
    key_file = tmp_path / "id_nb.pub"
    key_file.write_text(KEY_A + "\n", encoding="utf-8")
    ip.user_ns["nbtest_path"] = str(key_file)
    ok(ip, "%sshkey set")  # nothing: removes all
    assert client.account.ssh_keys.get().keys == []
    ok(ip, "%sshkey add {nbtest_path}")
    run = ok(ip, f"nbtest_keys = %sshkey add --key '{KEY_B}'")
    assert ip.user_ns["nbtest_keys"].keys == [KEY_A, KEY_B]
    assert "alice@laptop" in html_of(run) and "bob@desk" in html_of(run)
    ok(ip, "%sshkey add {nbtest_path}")  # already there: not added twice
    assert client.account.ssh_keys.get().keys == [KEY_A, KEY_B]
    ok(ip, "%sshkey remove alice@laptop")
    assert client.account.ssh_keys.get().keys == [KEY_B]
    ok(ip, "nbtest_keys = %sshkey remove 1")
    assert ip.user_ns["nbtest_keys"].keys == []
    listed = ok(ip, "%sshkey list")
    assert "none yet" in html_of(listed)


def test_sshkey_from_home_reads_only_public_keys(
    ip: Any, client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys_restored: Any
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519.pub").write_text(KEY_A + "\n", encoding="utf-8")
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nx\n")
    monkeypatch.setenv("HOME", str(home))
    ok(ip, "%sshkey set --from-home")
    assert client.account.ssh_keys.get().keys == [KEY_A]
    private = run_cell(ip, f"%sshkey add {home / '.ssh' / 'id_ed25519'}")
    assert_one_line_error(private, "private key", "id_ed25519.pub")
    assert "BEGIN OPENSSH" not in private.text
    (home / ".ssh" / "id_ed25519.pub").unlink()
    assert_one_line_error(run_cell(ip, "%sshkey add --from-home"), "ssh-keygen")


def test_sshkey_errors_name_the_fix(ip: Any, keys_restored: Any) -> None:
    assert_one_line_error(run_cell(ip, "%sshkey add"), "--from-home")
    assert_one_line_error(run_cell(ip, "%sshkey add /nonexistent/id.pub"), "no file")
    assert_one_line_error(run_cell(ip, "%sshkey remove nobody@nowhere"), "%sshkey list")
    assert_one_line_error(run_cell(ip, "%sshkey add --key 'not a key'"), "authorized_keys")
