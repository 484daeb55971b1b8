"""Hot reload of ``%endpoint serve`` in a real IPython shell against the emulator process:
running the serve cell again swaps the handler for the next job (a job in flight finishes on
the old code, one worker only, one release more); ``--watch FILE.py[:FUNC]`` reloads a changed
file and keeps the old handler, saying so in one line, when the file is broken."""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path
from typing import Any

import pytest
from nbhelpers import assert_one_line_error, run_cell, wait_until

from podbook.worker._reload import RELEASE_ENV

JOB_TIMEOUT = 60.0


def _releases(client: Any, endpoint_id: str) -> list[Any]:
    return client.endpoints.releases(endpoint_id).releases


def _serve_threads(endpoint_id: str) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == f"podbook-serve-{endpoint_id}"]


class Printed:
    """What background threads printed (through pytest's capture), gathered as it comes."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self._capsys = capsys
        self.text = ""

    def lines(self, needle: str) -> list[str]:
        """The lines printed so far that contain ``needle``."""
        self.text += self._capsys.readouterr().out
        complete = self.text[: self.text.rfind("\n") + 1]  # a line being printed waits
        return [line for line in complete.splitlines() if needle in line]


def test_serving_again_swaps_the_handler_for_the_next_job(ip: Any, client: Any) -> None:
    name = "nbtest-reload-" + secrets.token_hex(3)
    started, gate = threading.Event(), threading.Event()
    ip.user_ns.update(nbtest_started=started, nbtest_gate=gate)
    old = (
        "def nbtest_h(job):\n    nbtest_started.set()\n    nbtest_gate.wait(60)\n    return 'old'\n"
    )
    assert run_cell(ip, old).success
    run = run_cell(ip, f"nbtest_worker = %endpoint serve nbtest_h --name {name}")
    assert run.success, run.text
    worker = ip.user_ns["nbtest_worker"]
    try:
        endpoint = client.endpoint(name)
        releases = len(_releases(client, name))
        in_flight = endpoint.run({"n": 1})
        assert started.wait(JOB_TIMEOUT)  # the old handler runs that job now

        assert run_cell(ip, "def nbtest_h(job):\n    return 'new'\n").success
        run = run_cell(ip, f"nbtest_again = %endpoint serve nbtest_h --name {name}")
        assert run.success, run.text
        assert run.stdout.strip() == (
            f"endpoint {name}: handler nbtest_h reloaded (release {releases + 1}); "
            "a running job finishes on the old code"
        )
        assert ip.user_ns["nbtest_again"] is worker and worker.reloads == 1
        following = endpoint.run({"n": 2})  # queued behind the job in flight (one slot)
        gate.set()
        assert in_flight.output(timeout=JOB_TIMEOUT) == "old"
        assert following.output(timeout=JOB_TIMEOUT) == "new"

        history = _releases(client, name)
        assert len(history) == releases + 1
        assert [entry.field for entry in history[0].diff] == [f"env.{RELEASE_ENV}"]
        assert history[0].diff[0].new.startswith("nbtest_h sha256:")
        listing = client.endpoints.workers(name)
        assert [w.id for w in listing.workers] == [worker.worker_id]
        assert not listing.workers[0].is_stale  # it runs the release it recorded
        assert _serve_threads(name) == [f"podbook-serve-{name}"]

        run = run_cell(ip, f"%endpoint serve nbtest_h --name {name}")  # the same code again
        assert "same code as the release before: no new release" in run.stdout, run.text
        assert len(_releases(client, name)) == releases + 1
        assert endpoint.run({"n": 3}).output(timeout=JOB_TIMEOUT) == "new"
    finally:
        gate.set()
        worker.stop()


def _write(path: Path, body: str) -> None:
    """Replace the file at once, as editors save (never seen half written)."""
    partial = path.with_suffix(".partial")
    partial.write_text(body)
    os.replace(partial, path)


def test_watch_reloads_the_file_and_keeps_the_old_handler_when_it_breaks(
    ip: Any, client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "nbtest-watch-" + secrets.token_hex(3)
    path = tmp_path / "nbtest_handler.py"
    _write(path, "def handler(job):\n    return 'v1'\n")
    run = run_cell(ip, f"nbtest_worker = %endpoint serve --watch {path} --name {name}")
    assert run.success, run.text
    assert "reloaded whenever nbtest_handler.py changes" in run.stdout, run.text
    worker = ip.user_ns["nbtest_worker"]
    printed = Printed(capsys)
    try:
        endpoint = client.endpoint(name)
        assert endpoint.run({}).output(timeout=JOB_TIMEOUT) == "v1"
        releases = len(_releases(client, name))

        _write(path, "def handler(job):\n    return 'v2'\n")
        line = wait_until(lambda: printed.lines("reloaded ("), timeout=JOB_TIMEOUT)
        assert line == [
            f"endpoint {name}: handler {path}:handler reloaded (release {releases + 1}); "
            "a running job finishes on the old code"
        ]
        assert endpoint.run({}).output(timeout=JOB_TIMEOUT) == "v2"

        _write(path, "def handler(job):\n    return (\n")
        broken = wait_until(lambda: printed.lines("not reloaded"), timeout=JOB_TIMEOUT)
        assert len(broken) == 1 and "SyntaxError" in broken[0] and broken[0].count("line 2") == 1
        assert "the old handler goes on" in broken[0]
        assert "Traceback" not in printed.text
        assert endpoint.run({}).output(timeout=JOB_TIMEOUT) == "v2"

        _write(path, "def other(job):\n    return 'v3'\n")
        missing = wait_until(lambda: printed.lines("has no function"), timeout=JOB_TIMEOUT)
        assert len(missing) == 1 and "'handler'" in missing[0]
        assert endpoint.run({}).output(timeout=JOB_TIMEOUT) == "v2"
        assert len(_releases(client, name)) == releases + 1  # failures record nothing

        watch = worker.watching
        worker.stop()
        assert worker.watching is None and not watch.running
    finally:
        worker.stop()


def test_serving_a_function_again_ends_the_watch(ip: Any, client: Any, tmp_path: Path) -> None:
    name = "nbtest-unwatch-" + secrets.token_hex(3)
    path = tmp_path / "nbtest_model.py"
    _write(path, "def generate(job):\n    return 'file'\n")
    run = run_cell(ip, f"nbtest_worker = %endpoint serve --watch {path}:generate --name {name}")
    assert run.success, run.text
    worker = ip.user_ns["nbtest_worker"]
    watch = worker.watching
    try:
        assert run_cell(ip, "def nbtest_cell(job):\n    return 'cell'\n").success
        run = run_cell(ip, f"%endpoint serve nbtest_cell --name {name}")
        assert "handler nbtest_cell reloaded" in run.stdout, run.text
        assert worker.watching is None and not watch.running
        assert client.endpoint(name).run({}).output(timeout=JOB_TIMEOUT) == "cell"
    finally:
        worker.stop()


def test_serve_and_watch_mistakes_are_one_line(ip: Any, tmp_path: Path) -> None:
    broken = tmp_path / "nbtest_broken.py"
    _write(broken, "def handler(job)\n    return 1\n")
    lacking = tmp_path / "nbtest_lacking.py"
    _write(lacking, "def other(job):\n    return 1\n")
    cases = {
        "%endpoint serve --name x": "name the handler function (FUNC)",
        f"%endpoint serve f --watch {lacking} --name x": "(--watch FILE.py:f), not as FUNC",
        "%endpoint serve --watch handler.txt --name x": "not a Python file",
        "%endpoint serve --watch pkg.module:fn --name x": "not a Python file",
        f"%endpoint serve --watch {broken}:1x --name x": "is not a function name",
        f"%endpoint serve --watch {tmp_path}/nbtest_none.py --name x": "not found",
        f"%endpoint serve --watch {broken} --name x": "SyntaxError",
        f"%endpoint serve --watch {lacking} --name x": "has no function 'handler'",
        f"%endpoint serve --watch {lacking} --lb --name x": "not an app (--lb)",
    }
    for line, needle in cases.items():
        assert_one_line_error(run_cell(ip, line), needle)
