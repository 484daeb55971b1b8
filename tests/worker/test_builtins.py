"""The built-in handlers, run directly (their service through the emulator is tested live)."""

from __future__ import annotations

import asyncio

import pytest

from podbook.worker._results import Chunk
from podbook.worker.builtins import KV_CACHE_TOKENS, echo, stream_demo

SEED_METRICS = {
    "avg_gen_throughput",
    "avg_prompt_throughput",
    "cpu_kv_cache_usage",
    "gpu_kv_cache_usage",
    "input_tokens",
    "output_tokens",
    "pending",
    "running",
    "stream_index",
    "swapped",
    "scenario",
}


def collect(job):
    async def run():
        return [chunk async for chunk in stream_demo(job)]

    return asyncio.run(run())


def test_echo_returns_its_input():
    assert echo({"id": "j", "input": {"a": [1, 2]}}) == {"a": [1, 2]}


def test_stream_demo_chunks_have_the_seed_shape_and_real_metrics():
    chunks = collect(
        {"id": "j", "input": {"prompt": "four words of prompt", "max_tokens": 12, "delay_ms": 5}}
    )
    assert len(chunks) == 12 and all(isinstance(c, Chunk) for c in chunks)
    for index, chunk in enumerate(chunks):
        assert set(chunk.output) == {"input_tokens", "output_tokens", "text"}
        assert chunk.output["input_tokens"] == 4
        assert chunk.output["output_tokens"] == index + 1
        assert isinstance(chunk.output["text"], list) and len(chunk.output["text"]) == 1
        assert set(chunk.metrics) == SEED_METRICS
        assert chunk.metrics["stream_index"] == index
        assert chunk.metrics["output_tokens"] == index + 1
        assert chunk.metrics["gpu_kv_cache_usage"] == pytest.approx(
            (4 + index + 1) / KV_CACHE_TOKENS, abs=1e-6
        )
        assert chunk.metrics["running"] == 1
        assert isinstance(chunk.metrics["scenario"], str)
    # 5 ms between tokens: the measured generation rate is at most 200 tokens/s
    assert 0 < chunks[-1].metrics["avg_gen_throughput"] <= 200
    text = "".join(piece for c in chunks for piece in c.output["text"])
    assert len(text.split()) == 12


def test_stream_demo_is_deterministic_per_prompt():
    first = collect({"input": {"prompt": "same", "max_tokens": 5, "delay_ms": 0}})
    second = collect({"input": {"prompt": "same", "max_tokens": 5, "delay_ms": 0}})
    assert [c.output["text"] for c in first] == [c.output["text"] for c in second]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"max_tokens": 0}, "input.max_tokens must be a whole number from 1 to 100000, got 0"),
        ({"delay_ms": "fast"}, "input.delay_ms must be a whole number from 0 to 60000"),
        ({"prompt": 3}, "input.prompt must be a string"),
        ("text", "input must be an object like"),
    ],
)
def test_stream_demo_refuses_bad_input_with_one_line(data, message):
    with pytest.raises(ValueError) as info:
        collect({"input": data})
    assert str(info.value).startswith(message)
