"""``%load_ext podbook``: fast, one line naming the service, configurable, unloadable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbhelpers import magics_of, run_cell

LOAD_SCRIPT = """
import json, sys, time
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
config = Config()
config.HistoryManager.enabled = False
shell = InteractiveShell.instance(config=config)
start = time.perf_counter()
shell.run_line_magic("load_ext", "podbook")
elapsed = time.perf_counter() - start
heavy = [m for m in ("httpx", "pydantic", "anywidget", "ipywidgets") if m in sys.modules]
sys.stderr.write(json.dumps({"elapsed": elapsed, "heavy": heavy}))
"""


def load_in_fresh_process(env: dict[str, str]) -> tuple[str, dict]:
    """Load the extension in a new interpreter; its stdout and the measurements."""
    result = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout, json.loads(result.stderr.strip().splitlines()[-1])


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PODBOOK_", "RUNPOD_"))}
    env.update(HOME=str(tmp_path), PODBOOK_HOME=str(tmp_path / "podbook-home"), **extra)
    return env


def test_load_is_fast_and_imports_nothing_heavy(tmp_path: Path) -> None:
    stdout, measured = load_in_fresh_process(clean_env(tmp_path))
    # The best of three fresh loads: a busy CI machine must not stand for podbook's speed.
    best = min(
        [measured["elapsed"]]
        + [load_in_fresh_process(clean_env(tmp_path))[1]["elapsed"] for _ in range(2)]
    )
    assert best < 0.5, best
    assert measured["heavy"] == [], "httpx/pydantic/anywidget must load lazily"
    assert len(stdout.strip().splitlines()) == 1


def test_load_line_names_the_local_emulator_without_starting_it(tmp_path: Path) -> None:
    stdout, _ = load_in_fresh_process(clean_env(tmp_path))
    assert "local emulator" in stdout
    assert "starts on first use" in stdout
    assert not (tmp_path / "podbook-home" / "emulator.json").exists()


def test_readme_shows_the_load_line_a_new_user_gets(tmp_path: Path) -> None:
    stdout, _ = load_in_fresh_process(clean_env(tmp_path))
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    shown = [line[2:] for line in readme.splitlines() if line.startswith("# podbook →")]
    assert shown == [stdout.strip()]


def test_load_line_names_the_cloud_and_the_key_source_but_not_the_key(tmp_path: Path) -> None:
    key = "rpa_SECRETSECRETSECRET0123456789"
    stdout, _ = load_in_fresh_process(clean_env(tmp_path, RUNPOD_API_KEY=key))
    assert "RunPod cloud" in stdout and "RUNPOD_API_KEY" in stdout
    assert key not in stdout


def test_load_line_names_the_key_file_of_the_service_cli(tmp_path: Path) -> None:
    key = "rpa_FILEKEY0123456789"
    (tmp_path / ".runpod").mkdir()
    (tmp_path / ".runpod" / "config.toml").write_text(f'[default]\napi_key = "{key}"\n')
    stdout, _ = load_in_fresh_process(clean_env(tmp_path))
    assert "RunPod cloud" in stdout and "config.toml" in stdout
    assert key not in stdout


def test_load_line_names_a_custom_url(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9"
    stdout, _ = load_in_fresh_process(clean_env(tmp_path, PODBOOK_URL=url, RUNPOD_API_KEY="k"))
    assert url in stdout


def test_config_magic_sets_traits(ip) -> None:
    run = run_cell(ip, "%config PodMagics.refresh_interval = 2")
    assert run.success, run.text
    assert magics_of(ip).refresh_interval == 2.0
    run = run_cell(ip, "%config PodMagics.show_panels = False")
    assert run.success and magics_of(ip).show_panels is False


def test_unload_removes_the_magics(ip) -> None:
    run_cell(ip, "%unload_ext podbook")
    assert "pod" not in ip.magics_manager.magics["line"]
    run = run_cell(ip, "%load_ext podbook")
    assert run.success and "podbook →" in run.stdout
    assert "pod" in ip.magics_manager.magics["line"]


@pytest.mark.parametrize("magic", ["pod", "cluster", "catalog"])
def test_help_prints_usage_and_returns_nothing(ip, magic: str) -> None:
    run = run_cell(ip, f"nbtest_help = %{magic} --help")
    assert run.success, run.text
    assert f"%{magic}" in run.stdout
    assert ip.user_ns["nbtest_help"] is None


def test_subcommand_help_lists_every_create_flag(ip) -> None:
    run = run_cell(ip, "%pod create --help")
    assert run.success, run.text
    flags = [
        "--gpu",
        "--cpu",
        "--image",
        "--template",
        "--name",
        "--disk",
        "--ports",
        "--env",
        "--volume",
        "--persistent",
        "--cloud",
        "--dc",
        "--cuda",
        "--min-cuda",
        "--global-networking",
        "--ssh",
        "--jupyter",
        "--registry",
        "--args",
        "-o",
    ]
    for flag in flags:
        assert flag in run.stdout, flag


@pytest.mark.parametrize(
    ("env", "kind"),
    [
        ({}, "local emulator"),
        ({"PODBOOK_LOCAL": "1", "RUNPOD_API_KEY": "k"}, "local emulator"),
        ({"RUNPOD_API_KEY": "k"}, "RunPod cloud"),
        ({"PODBOOK_URL": "http://127.0.0.1:9", "RUNPOD_API_KEY": "k"}, "service at"),
    ],
)
def test_load_line_agrees_with_the_client_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], kind: str
) -> None:
    """The fast load line and ``Client``'s own resolution name the same kind of target."""
    from podbook.client.config import resolve_settings
    from podbook.notebook.target import describe_target

    for name in [n for n in os.environ if n.startswith(("PODBOOK_", "RUNPOD_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PODBOOK_HOME", str(tmp_path / "podbook-home"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert kind in str(resolve_settings(start_emulator=False))
    assert kind in describe_target()
