"""Hot reload without a notebook: ``ServedWorker.reload`` against the emulator process, and
``HandlerWatch`` looking at a real file one poll at a time (no thread, no timing)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from podbook import Client
from podbook.errors import ConfigError
from podbook.worker import serve
from podbook.worker._handlers import HandlerSpec
from podbook.worker._reload import RELEASE_ENV, HandlerWatch, code_label, record_release

from .conftest import Queue


@pytest.fixture
def user_client(broker: Any) -> Any:
    with Client(api_key=broker.api_key, url=broker.url) as client:
        yield client


def test_reload_swaps_the_handler_and_records_one_release(broker: Any, user_client: Any) -> None:
    worker = serve(lambda job: "one", endpoint="hr-" + secrets.token_hex(4), client=user_client)
    try:
        queue = Queue(broker.http(), worker.endpoint_id)
        assert queue.runsync({})["output"] == "one"
        before = user_client.endpoints.get(worker.endpoint_id).version

        def two(job: Any) -> str:
            return "two"

        reload = worker.reload(two)
        assert reload.release == before + 1 and reload.name.endswith("two")
        assert queue.runsync({})["output"] == "two"
        env = user_client.endpoints.get(worker.endpoint_id).env
        assert env[RELEASE_ENV] == code_label(two, reload.name)
        again = worker.reload(two)  # the same code: no new release
        assert (
            again.release is None and again.no_release is None and "no new release" in again.line()
        )
    finally:
        worker.stop()
    with pytest.raises(ConfigError, match="stopped"):
        worker.reload(two)


def test_a_release_that_cannot_be_recorded_says_why(user_client: Any) -> None:
    release, why = record_release(user_client, "echo", "fn sha256:0")
    assert release is None and why and "built-in" in why


def test_a_changed_file_is_taken_once_it_holds_still(tmp_path: Path) -> None:
    path = tmp_path / "handler.py"
    path.write_text("def handler(job):\n    return 1\n")
    watch = HandlerWatch(HandlerSpec.parse(str(path)))
    assert watch.load()({}) == 1 and watch.loads == 1
    loaded: list[Any] = []

    def changed(fn: Any, label: str) -> None:
        loaded.append((fn({}), label))

    assert watch.poll(changed) is None and not loaded  # nothing changed
    path.write_text("def handler(job):\n    return 2\n")
    assert watch.poll(changed) is None and not loaded  # changed: looked at again first
    assert watch.poll(changed) is None
    assert loaded == [(2, watch.label)] and watch.label.startswith(f"{path}:handler sha256:")
    path.write_text("def handler(job):\n    return (\n")
    watch.poll(changed)
    failure = watch.poll(changed)
    assert failure and failure.startswith(f"importing {path} failed: SyntaxError")
    assert watch.poll(changed) is None and len(loaded) == 1  # said once
    path.unlink()
    watch.poll(changed)
    assert watch.poll(changed) == f"{path} is gone"
