"""Handlers of the built-in endpoints, which need no code of the user's.

- ``echo``: returns its input as its output;
- ``stream-demo`` (:func:`stream_demo`): a streaming text demo. Input
  ``{"prompt": str, "max_tokens": N, "delay_ms": D}``; it yields one token per chunk,
  shaped like the seed's stream sample: ``output`` with ``input_tokens``,
  ``output_tokens`` (so far) and ``text`` (a list), and ``metrics`` with the seed's fields,
  computed from the stream it really produced (measured throughputs, tokens so far, the
  chunk's index, how many demo streams run in this worker).
- ``chat-demo`` (:data:`chat_demo`): an OpenAI-compatible chat model with no code, built with
  :func:`podbook.openai_handler`: point the ``openai`` package at
  ``{queue_url}/v2/chat-demo/openai/v1``. It answers chat and completion requests with
  pretend words, one token per piece, ``delay_ms`` apart (an extra body field, default 20;
  0..60000), as many as ``max_tokens`` (default 32); model name ``chat-demo``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from typing import Any

from podbook.worker._openai_compat import RequestError, openai_handler
from podbook.worker._results import Chunk

__all__ = ["KV_CACHE_TOKENS", "chat_demo", "echo", "stream_demo"]

DEFAULT_PROMPT = "Tell me about GPUs."
DEFAULT_MAX_TOKENS = 32
DEFAULT_DELAY_MS = 20
MAX_TOKENS_LIMIT = 100_000
MAX_DELAY_MS = 60_000
KV_CACHE_TOKENS = 16_384
"""The pretend GPU KV cache (in tokens) that ``gpu_kv_cache_usage`` is a fraction of."""
SCENARIO = "stream-demo"

_SAMPLE_TEXT = (
    "the GPU streams tokens while the kernel keeps running and every chunk arrives in order "
    "as soon as the handler yields it so the notebook shows text long before the job ends "
    "with tokens per second cache usage and a cancel button that stops the stream at once"
)
_WORDS = tuple(_SAMPLE_TEXT.split())

_running = 0  # demo streams in progress in this process


def echo(job: dict[str, Any]) -> Any:
    """Return the job's input as its output."""
    return job.get("input")


def _int_field(data: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"input.{name} must be a whole number from {low} to {high}, got {value!r}")
    return value


def _demo_input(job: dict[str, Any]) -> tuple[str, int, int]:
    data = job.get("input")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(
            'input must be an object like {"prompt": "...", "max_tokens": 32, "delay_ms": 20}'
        )
    prompt = data.get("prompt", DEFAULT_PROMPT)
    if not isinstance(prompt, str):
        raise ValueError(f"input.prompt must be a string, got {type(prompt).__name__}")
    max_tokens = _int_field(data, "max_tokens", DEFAULT_MAX_TOKENS, 1, MAX_TOKENS_LIMIT)
    delay_ms = _int_field(data, "delay_ms", DEFAULT_DELAY_MS, 0, MAX_DELAY_MS)
    return prompt, max_tokens, delay_ms


def _tokens_of(prompt: str) -> int:
    """A rough token count: words and punctuation runs."""
    return max(1, len(prompt.split()))


async def stream_demo(job: dict[str, Any]) -> AsyncIterator[Chunk]:
    """Stream ``max_tokens`` pretend tokens, one per chunk, ``delay_ms`` apart."""
    global _running
    prompt, max_tokens, delay_ms = _demo_input(job)
    input_tokens = _tokens_of(prompt)
    rng = random.Random(prompt)
    _running += 1
    try:
        started = time.perf_counter()
        first_at: float | None = None
        for index in range(max_tokens):
            if delay_ms:
                await asyncio.sleep(delay_ms / 1000)
            else:
                await asyncio.sleep(0)  # stay cancellable
            word = rng.choice(_WORDS)
            text = word if index == 0 else " " + word
            now = time.perf_counter()
            if first_at is None:
                first_at = now
            output_tokens = index + 1
            generating = now - first_at
            metrics = {
                "avg_gen_throughput": round(index / generating, 3) if generating > 0 else 0.0,
                "avg_prompt_throughput": round(input_tokens / max(first_at - started, 1e-6), 3),
                "cpu_kv_cache_usage": 0.0,
                "gpu_kv_cache_usage": round(
                    min(1.0, (input_tokens + output_tokens) / KV_CACHE_TOKENS), 6
                ),
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "pending": 0,
                "running": _running,
                "stream_index": index,
                "swapped": 0,
                "scenario": SCENARIO,
            }
            output = {"input_tokens": input_tokens, "output_tokens": output_tokens, "text": [text]}
            yield Chunk(output, metrics)
    finally:
        _running -= 1


async def _chat_words(prompt_or_messages: Any, params: dict[str, Any]) -> AsyncIterator[str]:
    """The pretend reply of ``chat-demo``: the demo text from a place the prompt picks."""
    try:
        delay_ms = _int_field(params, "delay_ms", DEFAULT_DELAY_MS, 0, MAX_DELAY_MS)
    except ValueError as exc:
        raise RequestError(str(exc).replace("input.", ""), "delay_ms") from None
    # openai_handler stops at max_tokens; without one the reply is DEFAULT_MAX_TOKENS long
    limited = params.get("max_completion_tokens") or params.get("max_tokens")
    count = MAX_TOKENS_LIMIT if limited else DEFAULT_MAX_TOKENS
    start = random.Random(repr(prompt_or_messages)).randrange(len(_WORDS))
    for index in range(count):
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        word = _WORDS[(start + index) % len(_WORDS)]
        yield word if index == 0 else " " + word


chat_demo = openai_handler(_chat_words, model="chat-demo")
"""The handler of the built-in ``chat-demo`` endpoint (OpenAI chat and completions)."""
