"""``ensure_emulator``: start the local emulator once, reuse it, fail clearly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from podbook import Client
from podbook.client import RetryPolicy
from podbook.client._local import emulator_is_healthy, ensure_emulator, read_emulator_record
from podbook.errors import ConnectionFailed, LocalEmulatorError

ENSURE_IN_CHILD = (
    "import json, sys\n"
    "from podbook.client._local import ensure_emulator\n"
    "e = ensure_emulator(sys.argv[1])\n"
    "print(json.dumps({'url': e.url, 'pid': e.pid}))\n"
)


def test_start_then_reuse(podbook_home: Path) -> None:
    first = ensure_emulator(podbook_home)
    assert emulator_is_healthy(first.url)
    assert first.url.startswith("http://127.0.0.1:")
    key_file = podbook_home / "emulator.key"
    assert first.api_key is not None
    assert first.api_key.get_secret_value() == key_file.read_text().strip()
    assert key_file.stat().st_mode & 0o777 == 0o600

    again = ensure_emulator(podbook_home)
    assert (again.url, again.pid) == (first.url, first.pid)

    log = (podbook_home / "emulator.log").read_text()
    assert "listening on" in log
    assert first.api_key.get_secret_value() not in log


def test_outlives_the_process_that_started_it(podbook_home: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", ENSURE_IN_CHILD, str(podbook_home)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    started = json.loads(out.stdout)
    # The starting process (a "kernel") has exited; the emulator still answers.
    assert emulator_is_healthy(started["url"])
    assert ensure_emulator(podbook_home).pid == started["pid"]


def test_two_kernels_starting_at_once_share_one_emulator(podbook_home: Path) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", ENSURE_IN_CHILD, str(podbook_home)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [json.loads(child.communicate(timeout=60)[0]) for child in children]
    assert results[0] == results[1]
    assert read_emulator_record(podbook_home).pid == results[0]["pid"]  # type: ignore[union-attr]


def test_stale_record_starts_a_new_emulator(podbook_home: Path) -> None:
    podbook_home.mkdir(parents=True)
    (podbook_home / "emulator.json").write_text(
        json.dumps({"url": "http://127.0.0.1:9", "pid": 999999, "db": "x"})
    )
    emulator = ensure_emulator(podbook_home)
    assert emulator.url != "http://127.0.0.1:9"
    assert emulator_is_healthy(emulator.url)


def test_failure_to_start_names_the_log_file(podbook_home: Path) -> None:
    podbook_home.mkdir(parents=True)
    (podbook_home / "emulator.db").mkdir()  # the emulator cannot open its database
    with pytest.raises(LocalEmulatorError) as info:
        ensure_emulator(podbook_home, timeout=30)
    message = str(info.value)
    assert str(podbook_home / "emulator.log") in message
    assert "\n" not in message


def test_client_with_nothing_configured_uses_the_local_emulator(podbook_home: Path) -> None:
    with Client() as client:
        assert client.settings.local
        assert client.target == f"local emulator at {client.settings.rest_url}"
        assert client.account.ssh_keys.get().keys == []
    record = read_emulator_record(podbook_home)
    assert record is not None and record.url == client.settings.rest_url


def test_a_stopped_emulator_is_named_and_restarted_by_a_new_client(podbook_home: Path) -> None:
    first = Client(retry=RetryPolicy(max_attempts=1))
    record = read_emulator_record(podbook_home)
    assert record is not None and record.pid is not None
    os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while emulator_is_healthy(record.url) and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(ConnectionFailed) as info:
        first.pods.list()
    assert str(info.value).endswith(
        "the local emulator may have stopped; create a new Client() to start it again"
    )
    first.close()
    with Client() as second:
        assert second.pods.list() == []
