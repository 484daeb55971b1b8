"""The built-in endpoints ``echo`` and ``stream-demo``: the emulator runs podbook workers with
the handlers of :mod:`podbook.worker.builtins` for them, with no code of the user's."""

from __future__ import annotations

from .conftest import Queue
from .test_builtins import SEED_METRICS


def test_echo_returns_its_input(broker):
    queue = Queue(broker.http(), "echo")
    record = queue.runsync({"prompt": "hello", "n": [1, 2]}, wait_ms=60000)
    assert record["status"] == "COMPLETED"
    assert record["output"] == {"prompt": "hello", "n": [1, 2]}


def test_stream_demo_streams_seed_shaped_chunks(broker):
    queue = Queue(broker.http(), "stream-demo")
    job_id = queue.run({"prompt": "Why do GPUs stream?", "max_tokens": 8, "delay_ms": 5})
    items, status = queue.stream(job_id, timeout=60)
    assert status == "COMPLETED"
    assert len(items) == 8
    for index, item in enumerate(items):
        assert set(item["output"]) == {"input_tokens", "output_tokens", "text"}
        assert item["output"]["output_tokens"] == index + 1
        assert set(item["metrics"]) == SEED_METRICS
        assert item["metrics"]["stream_index"] == index
    text = "".join(piece for item in items for piece in item["output"]["text"])
    assert len(text.split()) == 8
