"""OpenAI-compatible handlers the worker tests serve in real worker processes.

- ``handler`` / ``async_handler``: ``podbook.openai_handler`` over a sync generator (it may
  block: ``time.sleep``) and an async one; the request body's ``delay_ms`` paces the pieces;
- ``vllm_style``: written as the service's vLLM worker answers, with no podbook import: for a
  streamed request it yields strings that already are SSE text (two chunks per string, the last
  with ``data: [DONE]``), otherwise one object; ``/v1/models`` a list; another route an error.
"""

import asyncio
import json
import time

from podbook import openai_handler

WORDS = ["Hello", " from", " a", " podbook", " worker", "."]


def words(prompt_or_messages, params):
    """The reply word by word, ``delay_ms`` apart (a blocking sleep)."""
    for index in range(params.get("n", len(WORDS))):
        time.sleep(params.get("delay_ms", 0) / 1000)
        yield WORDS[index % len(WORDS)]


async def async_words(prompt_or_messages, params):
    """The same from an async generator."""
    for index in range(params.get("n", len(WORDS))):
        await asyncio.sleep(params.get("delay_ms", 0) / 1000)
        yield WORDS[index % len(WORDS)]


handler = openai_handler(words, model="sync-words")
async_handler = openai_handler(async_words, model="async-words")


def _chunk(body, delta, finish=None):
    return {
        "id": "chatcmpl-vllm",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": body.get("model", "vllm-model"),
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


async def vllm_style(job):
    """Answer ``openai_route`` jobs as the service's vLLM worker does (RAW_OPENAI_OUTPUT=1)."""
    data = job["input"]
    route = data.get("openai_route")
    if route == "/v1/models":
        yield {
            "object": "list",
            "data": [{"id": "vllm-model", "object": "model", "owned_by": "me"}],
        }
        return
    if route != "/v1/chat/completions":
        yield {
            "object": "error",
            "message": "Invalid route",
            "type": "BadRequestError",
            "code": 400,
        }
        return
    body = data["openai_input"]
    if not body.get("stream"):
        message = {"role": "assistant", "content": "".join(WORDS)}
        yield {
            "id": "chatcmpl-vllm",
            "object": "chat.completion",
            "created": 1,
            "model": body.get("model", "vllm-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 6, "total_tokens": 9},
        }
        return
    events = [_chunk(body, {"role": "assistant", "content": ""})]
    events += [_chunk(body, {"content": word}) for word in WORDS]
    events.append(_chunk(body, {}, "stop"))
    texts = [f"data: {json.dumps(event)}\n\n" for event in events]
    for start in range(0, len(texts), 2):
        await asyncio.sleep(body.get("delay_ms", 0) / 1000)
        yield "".join(texts[start : start + 2])
    yield "data: [DONE]\n\n"
