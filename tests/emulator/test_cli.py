"""The ``podbook emulator`` command line: key generation, reuse, flags and clear errors."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from podbook.emulator.app import create_app
from podbook.emulator.settings import EmulatorSettings

PREFIX = "podbook emulator listening on "


def run_until_listening(args: list[str], stdout: Path, log: Path) -> tuple[subprocess.Popen, str]:
    with stdout.open("wb") as out, log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "podbook", "emulator", *args],
            stdout=out,
            stderr=err,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = stdout.read_text().splitlines()
        if lines and lines[0].startswith(PREFIX):
            return proc, lines[0][len(PREFIX) :]
        assert proc.poll() is None, log.read_text()
        time.sleep(0.02)
    proc.kill()
    raise AssertionError("no listening line")


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)


def test_generates_prints_once_then_reuses_the_key(tmp_path):
    home = tmp_path / "home"
    args = [
        "--port",
        "0",
        "--home",
        str(home),
        "--provision-seconds",
        "0.1",
        "--start-seconds",
        "0.1",
    ]
    proc, url = run_until_listening(args, tmp_path / "out1.txt", tmp_path / "log1.txt")
    try:
        key = (home / "emulator.key").read_text().strip()
        assert stat.S_IMODE((home / "emulator.key").stat().st_mode) == 0o600
        assert stat.S_IMODE((home / "emulator.db").stat().st_mode) == 0o600
        info = json.loads((home / "emulator.json").read_text())
        assert info["url"] == url and info["pid"] == proc.pid
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
        out = (tmp_path / "out1.txt").read_text()
        assert out.count(key) == 1
        response = httpx.get(f"{url}/v2/pods", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200
    finally:
        stop(proc)
    assert not (home / "emulator.json").exists()
    assert key not in (tmp_path / "log1.txt").read_text()

    proc, url = run_until_listening(args, tmp_path / "out2.txt", tmp_path / "log2.txt")
    try:
        assert (home / "emulator.key").read_text().strip() == key
        assert key not in (tmp_path / "out2.txt").read_text()
        assert (
            httpx.get(f"{url}/v2/pods", headers={"Authorization": f"Bearer {key}"}).status_code
            == 200
        )
    finally:
        stop(proc)


FIND_WITH_CLIENT = (
    "import json\n"
    "from podbook import Client\n"
    "with Client() as client:\n"
    "    pod = client.pods.create(name='found', image='i', gpu={'id': 'NVIDIA GeForce RTX 4090'})\n"
    "    print(json.dumps({'url': client.settings.rest_url, 'target': client.target,\n"
    "                      'pods': [p.id for p in client.pods.list()], 'pod': pod.id}))\n"
)


def test_a_started_emulator_is_found_by_a_client_with_nothing_configured(tmp_path):
    """``podbook emulator`` leaves its URL and key where the extension looks: no second one."""
    home = tmp_path / "home"
    proc, url = run_until_listening(
        ["--port", "0", "--home", str(home)], tmp_path / "out.txt", tmp_path / "log.txt"
    )
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "PODBOOK_"))}
        env |= {"HOME": str(tmp_path), "PODBOOK_HOME": str(home)}
        result = subprocess.run(
            [sys.executable, "-c", FIND_WITH_CLIENT],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=True,
        )
        found = json.loads(result.stdout)
        assert found["url"] == url and "local emulator" in found["target"]
        assert found["pods"] == [found["pod"]]
        assert json.loads((home / "emulator.json").read_text())["pid"] == proc.pid
        key = (home / "emulator.key").read_text().strip()
        assert key not in result.stdout + result.stderr
    finally:
        stop(proc)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--rate-limit", "week=5"], "--rate-limit"),
        (["--config", "/nonexistent/accounts.toml"], "--config"),
        (["--api-key", "has space"], "--api-key"),
    ],
)
def test_bad_flags_are_one_clear_line(tmp_path, args, fragment):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "podbook",
            "emulator",
            "--port",
            "0",
            "--home",
            str(tmp_path),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0]
    assert "Traceback" not in result.stderr


def test_bad_toml_is_named(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[[accounts]\nkeys = 1\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "podbook",
            "emulator",
            "--home",
            str(tmp_path),
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "not valid TOML" in result.stderr


def test_a_key_in_two_accounts_is_refused(tmp_path):
    config = tmp_path / "dup.toml"
    config.write_text('[[accounts]]\nkeys = ["k-1"]\n\n[[accounts]]\nreadonly_keys = ["k-1"]\n')
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "podbook",
            "emulator",
            "--home",
            str(tmp_path),
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "repeats an API key" in result.stderr
    assert "k-1" not in result.stderr


def test_port_in_use_is_a_clear_error(tmp_path, emulator):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "podbook",
            "emulator",
            "--home",
            str(tmp_path),
            "--port",
            str(emulator.port),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert "cannot listen" in result.stderr and "--port" in result.stderr
    assert "Traceback" not in result.stderr


def test_internal_error_is_a_problem_without_traceback(tmp_path, monkeypatch):
    """A fault no request can cause: a route handler that crashes (injected)."""
    from podbook.emulator.routes import pods

    def boom(*args, **kwargs):
        raise RuntimeError("secret internals /path/to/file.py line 42")

    monkeypatch.setattr(pods, "resolve_create_spec", boom)
    settings = EmulatorSettings(db_path=tmp_path / "e.db", api_key="k-internal")
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        response = client.post(
            "/v2/pods", json={"name": "x"}, headers={"Authorization": "Bearer k-internal"}
        )
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == 500 and body["title"] and body["detail"]
    assert "Traceback" not in response.text and "secret internals" not in response.text
    assert "RateLimit" in response.headers
