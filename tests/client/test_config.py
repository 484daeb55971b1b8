"""Where a client points: arguments, environment, ~/.runpod/config.toml, or the local emulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from podbook.client.config import (
    DEFAULT_QUEUE_URL,
    DEFAULT_REST_URL,
    DEFAULT_V1_URL,
    Secret,
    resolve_settings,
)
from podbook.errors import ConfigError

CLOUD_KEY = "rpa_CLOUDKEY0123456789abcdef"


def write_runpod_config(home: Path, text: str) -> Path:
    path = home / ".runpod" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_env_key_points_at_the_cloud(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", CLOUD_KEY)
    settings = resolve_settings()
    assert (settings.rest_url, settings.queue_url, settings.v1_url) == (
        DEFAULT_REST_URL,
        DEFAULT_QUEUE_URL,
        DEFAULT_V1_URL,
    )
    assert settings.api_key is not None and settings.api_key.get_secret_value() == CLOUD_KEY
    assert str(settings) == "RunPod cloud (key from RUNPOD_API_KEY)"
    assert not settings.local


def test_argument_beats_environment(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", "rpa_from_env")
    monkeypatch.setenv("PODBOOK_URL", "http://127.0.0.1:9999")
    settings = resolve_settings(api_key="rpa_from_arg", rest_url="https://rest.example.test/")
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "rpa_from_arg"
    assert settings.rest_url == "https://rest.example.test"
    assert settings.queue_url == "http://127.0.0.1:9999"
    assert settings.key_source == "argument"


def test_podbook_url_sets_all_bases_and_individual_vars_win(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", CLOUD_KEY)
    monkeypatch.setenv("PODBOOK_URL", "http://127.0.0.1:8765")
    monkeypatch.setenv("PODBOOK_QUEUE_URL", "http://127.0.0.1:9000")
    settings = resolve_settings()
    assert settings.rest_url == "http://127.0.0.1:8765"
    assert settings.v1_url == "http://127.0.0.1:8765"
    assert settings.queue_url == "http://127.0.0.1:9000"
    assert str(settings) == "service at http://127.0.0.1:8765 (REST) (key from RUNPOD_API_KEY)"


def test_runpod_cli_config_file_is_read(clean_env: Path) -> None:
    write_runpod_config(clean_env, f'[default]\napi_key = "{CLOUD_KEY}"\n')
    settings = resolve_settings()
    assert settings.api_key is not None and settings.api_key.get_secret_value() == CLOUD_KEY
    assert str(settings) == "RunPod cloud (key from ~/.runpod/config.toml [default])"


def test_runpod_profile_selects_a_section(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_runpod_config(
        clean_env, '[default]\napi_key = "rpa_default"\n\n[work]\napi_key = "rpa_work"\n'
    )
    monkeypatch.setenv("RUNPOD_PROFILE", "work")
    settings = resolve_settings()
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "rpa_work"
    assert "[work]" in str(settings)


def test_missing_profile_is_a_clear_error(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_runpod_config(clean_env, '[default]\napi_key = "rpa_default"\n')
    monkeypatch.setenv("RUNPOD_PROFILE", "nope")
    with pytest.raises(ConfigError, match=r"profile \[nope\] \(RUNPOD_PROFILE\) is not in"):
        resolve_settings()


def test_environment_beats_config_file(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_runpod_config(clean_env, '[default]\napi_key = "rpa_file"\n')
    monkeypatch.setenv("RUNPOD_API_KEY", "rpa_env")
    settings = resolve_settings()
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "rpa_env"


def test_broken_config_file_names_the_file(clean_env: Path) -> None:
    path = write_runpod_config(clean_env, "[default\napi_key = \n")
    with pytest.raises(ConfigError) as info:
        resolve_settings()
    message = str(info.value)
    assert str(path) in message and "\n" not in message


def test_bad_url_is_a_one_line_error(clean_env: Path) -> None:
    with pytest.raises(ConfigError, match="is not an http"):
        resolve_settings(api_key="k", url="rest.runpod.io")


def test_bad_podbook_local_value(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODBOOK_LOCAL", "maybe")
    with pytest.raises(ConfigError, match="PODBOOK_LOCAL='maybe' is not a boolean"):
        resolve_settings()


def test_url_without_any_key_is_refused(clean_env: Path) -> None:
    with pytest.raises(ConfigError, match="no API key for http://127.0.0.1:1; set RUNPOD_API_KEY"):
        resolve_settings(url="http://127.0.0.1:1")


def test_nothing_configured_means_local_emulator_without_starting(clean_env: Path) -> None:
    settings = resolve_settings(start_emulator=False)
    assert settings.local
    assert str(settings) == "local emulator (not running yet; it starts on first use)"
    assert not (clean_env / ".podbook").exists()  # nothing was started or written


def test_podbook_local_forces_the_emulator_even_with_a_key(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", CLOUD_KEY)
    monkeypatch.setenv("PODBOOK_LOCAL", "1")
    settings = resolve_settings(start_emulator=False)
    assert settings.local
    assert settings.api_key is None or settings.api_key.get_secret_value() != CLOUD_KEY


def test_key_never_in_repr_or_str(clean_env: Path) -> None:
    settings = resolve_settings(api_key=SecretStr(CLOUD_KEY))
    for text in (repr(settings), str(settings), settings.describe(), f"{settings!r}"):
        assert CLOUD_KEY not in text
    assert "**********" in repr(settings)


def test_url_of_the_local_emulator_uses_its_key_not_the_cloud_key(clean_env: Path) -> None:
    write_runpod_config(clean_env, f'[default]\napi_key = "{CLOUD_KEY}"\n')
    home = clean_env / ".podbook"
    home.mkdir()
    (home / "emulator.json").write_text('{"url": "http://127.0.0.1:8765", "pid": 1, "db": "x"}')
    (home / "emulator.key").write_text("pbk_local_key\n")
    settings = resolve_settings(url="http://127.0.0.1:8765/")
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "pbk_local_key"
    assert str(settings) == (
        "service at http://127.0.0.1:8765 (key from the local emulator's key file)"
    )


def test_the_key_is_masked_everywhere_it_could_be_printed(clean_env: Path) -> None:
    settings = resolve_settings(api_key=CLOUD_KEY)
    key = settings.api_key
    assert isinstance(key, Secret)
    for text in (str(key), repr(key), f"{key}", f"{key!r}", repr(settings), str([key])):
        assert CLOUD_KEY not in text
    assert repr(key) == "Secret('**********')"
    assert key.get_secret_value() == CLOUD_KEY
    assert key == Secret(CLOUD_KEY) and key != Secret("other") and key != CLOUD_KEY


def test_api_key_of_the_wrong_type_is_a_config_error(clean_env: Path) -> None:
    with pytest.raises(ConfigError, match="api_key must be a string or a secret string, not int"):
        resolve_settings(api_key=123)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("env", "kwargs", "reason"),
    [
        ({}, {}, "no API key configured"),
        ({"PODBOOK_LOCAL": "1", "RUNPOD_API_KEY": CLOUD_KEY}, {}, "PODBOOK_LOCAL is set"),
        ({"RUNPOD_API_KEY": CLOUD_KEY}, {"local": True}, "local=True"),
    ],
)
def test_settings_say_why_the_local_emulator_was_chosen(
    clean_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    kwargs: dict[str, bool],
    reason: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = resolve_settings(start_emulator=False, **kwargs)
    assert settings.local and settings.local_reason == reason
    assert reason in repr(settings)


IMPORT_LIGHT = """
import json, sys, time
started = time.process_time()  # CPU time: other processes' load does not count
from podbook.client.config import resolve_settings
settings = resolve_settings(start_emulator=False)
elapsed = time.process_time() - started
heavy = [name for name in ("httpx", "pydantic", "pydantic_core") if name in sys.modules]
print(json.dumps({"line": str(settings), "heavy": heavy, "elapsed": elapsed}))
"""


@pytest.mark.parametrize("recorded", [False, True], ids=["no-emulator-record", "recorded"])
def test_resolving_the_target_imports_neither_httpx_nor_pydantic(
    clean_env: Path, recorded: bool
) -> None:
    """``%load_ext`` resolves the target with this module: it must stay light."""
    if recorded:
        home = clean_env / ".podbook"
        home.mkdir()
        (home / "emulator.json").write_text('{"url": "http://127.0.0.1:8765", "pid": 1}')
        (home / "emulator.key").write_text("pbk_local_key\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PODBOOK_", "RUNPOD_"))}
    env.update(HOME=str(clean_env), PODBOOK_HOME=str(clean_env / ".podbook"))
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_LIGHT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    measured = json.loads(result.stdout)
    assert measured["heavy"] == []
    expected = "local emulator at http://127.0.0.1:8765" if recorded else "not running yet"
    assert expected in measured["line"]
    assert "pbk_local_key" not in result.stdout
    assert measured["elapsed"] < 0.3, measured
