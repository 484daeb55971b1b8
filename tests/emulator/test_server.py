"""The emulator process: start-up, files it writes, auth, problem+json, secrets kept out of logs."""

from __future__ import annotations

import json
import stat
import subprocess
import sys

import httpx
import pytest

PROBLEM = "application/problem+json"


def test_healthz_needs_no_key(emulator):
    response = httpx.get(f"{emulator.url}/healthz")
    assert response.status_code == 200
    assert response.json()["ok"] is True
    assert "version" in response.json()


def test_announces_url_and_writes_private_files(emulator):
    first = emulator.stdout_path.read_text().splitlines()[0]
    assert first == f"podbook emulator listening on {emulator.url}"
    info = json.loads((emulator.home / "emulator.json").read_text())
    assert info["url"] == emulator.url
    assert info["db"] == str(emulator.db)
    assert info["pid"] == emulator.proc.pid
    for path in (emulator.home / "emulator.json", emulator.home / "emulator.key", emulator.db):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert (emulator.home / "emulator.key").read_text().strip() == emulator.api_key


def test_missing_malformed_and_unknown_keys_are_401(emulator):
    url = f"{emulator.url}/v2/pods"
    for headers in (
        {},
        {"Authorization": "Basic abc"},
        {"Authorization": "Bearer"},
        {"Authorization": emulator.api_key},
        {"Authorization": "Bearer not-a-known-key"},
    ):
        response = httpx.get(url, headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["content-type"] == PROBLEM
        body = response.json()
        assert body["status"] == 401 and body["title"] and "Bearer" in body["detail"]
        assert emulator.api_key not in response.text


def test_unknown_route_and_method_are_problems(emulator):
    with emulator.http() as http:
        missing = http.get("/v2/nothing-here/at/all")
        assert missing.status_code == 404
        assert missing.headers["content-type"] == PROBLEM
        assert missing.json()["status"] == 404
        wrong = http.put("/v2/pods")
        assert wrong.status_code == 405
        assert wrong.headers["content-type"] == PROBLEM
        assert "GET or POST" in wrong.json()["detail"]
        assert set(wrong.headers["allow"].split(", ")) >= {"GET", "POST"}


def test_bad_json_is_a_clear_400(emulator):
    with emulator.http() as http:
        response = http.post(
            "/v2/pods", content=b"{not json", headers={"content-type": "application/json"}
        )
    assert response.status_code == 400
    assert response.headers["content-type"] == PROBLEM
    assert "not valid JSON" in response.json()["detail"]
    assert response.json()["errors"][0].startswith("$: request body is not valid JSON")
    with emulator.http() as http:
        empty = http.post("/v2/pods", content=b"", headers={"content-type": "application/json"})
        flag = http.get("/v2/pods", params={"includeClusterPods": "maybe"})
    assert empty.status_code == 400 and empty.json()["errors"] == [
        "$: request body is empty; send a JSON object"
    ]
    assert flag.status_code == 400 and flag.json()["errors"] == [
        "includeClusterPods: must be true or false"
    ]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"name": "x", "image": "i", "disk": NaN}', "NaN is not a JSON value"),
        (b'{"name": "x", "image": "i", "disk": -Infinity}', "-Infinity is not a JSON value"),
    ],
)
def test_bodies_that_are_not_json_are_400_not_500(emulator, content, fragment):
    with emulator.http() as http:
        response = http.post(
            "/v2/pods", content=content, headers={"content-type": "application/json"}
        )
    assert response.status_code == 400 and response.headers["content-type"] == PROBLEM
    assert fragment in response.json()["detail"]


def test_the_emulator_never_imports_the_client():
    """The emulator depends on the wire contract only (``emulator → api``)."""
    code = (
        "import sys, pathlib, tempfile\n"
        "import podbook.cli, podbook.emulator.server\n"
        "from podbook.emulator.app import create_app\n"
        "from podbook.emulator.settings import EmulatorSettings\n"
        "from starlette.testclient import TestClient\n"
        "db = pathlib.Path(tempfile.mkdtemp()) / 'e.db'\n"
        "with TestClient(create_app(EmulatorSettings(db_path=db, api_key='k'))) as c:\n"
        "    r = c.post('/v2/pods', headers={'Authorization': 'Bearer k'},\n"
        "               json={'name': 'x', 'image': 'i', 'gpu': {'id': 'NVIDIA GeForce RTX 4090'}})\n"
        "    assert r.status_code == 201, r.text\n"
        "bad = [m for m in sys.modules if m.startswith(('podbook.client', 'podbook.notebook'))\n"
        "       or m.split('.')[0] in ('IPython', 'ipywidgets', 'anywidget')]\n"
        "print(sorted(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


def test_no_key_in_log_or_stdout(emulator):
    with emulator.http() as http:
        http.get("/v2/pods")
        http.get("/v2/pods/missing")
    with emulator.http(emulator.readonly_key) as http:
        http.post("/v2/pods", json={})
    httpx.get(f"{emulator.url}/v2/pods", headers={"Authorization": "Bearer wrong-key-123"})
    for path in (emulator.log_path, emulator.stdout_path):
        text = path.read_text()
        for secret in (
            emulator.api_key,
            emulator.readonly_key,
            emulator.other_key,
            "wrong-key-123",
        ):
            assert secret not in text, path
