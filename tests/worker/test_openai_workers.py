"""OpenAI-compatible endpoints served by real worker processes, called with the unmodified
``openai`` package: ``podbook worker`` serving handlers made with ``podbook.openai_handler``
(a sync and an async text generator), a handler written as the service's vLLM worker answers
(SSE strings), and ``podbook.openai_handler`` served by the ``runpod`` SDK."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from .conftest import TERMINAL, Queue
from .openai_handlers import WORDS
from .test_runpod_sdk import sdk_worker  # noqa: F401 - the fixture

MESSAGES = [{"role": "user", "content": "Who serves this?"}]


def openai_client(broker: Any, queue: Queue) -> openai.OpenAI:
    """The ``openai`` package pointed at the endpoint's OpenAI-compatible route."""
    base_url = f"{broker.url}/v2/{queue.id}/openai/v1"
    return openai.OpenAI(base_url=base_url, api_key=broker.api_key, max_retries=0, timeout=60)


def stream_pieces(client: openai.OpenAI, **params: Any) -> tuple[list[str], list[Any]]:
    """The content pieces of a streamed chat, and every chunk."""
    chunks = list(client.chat.completions.create(messages=MESSAGES, stream=True, **params))
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    return pieces, chunks


@pytest.mark.parametrize(
    ("function", "model"), [("handler", "sync-words"), ("async_handler", "async-words")]
)
def test_a_podbook_worker_serves_openai_handler_to_the_openai_package(
    broker: Any, endpoint: Queue, start_worker: Any, function: str, model: str
) -> None:
    start_worker(endpoint, f"openai_handlers.py:{function}", "--concurrency", "2")
    with openai_client(broker, endpoint) as client:
        whole = client.chat.completions.create(messages=MESSAGES, model="mine")  # type: ignore[arg-type]
        assert whole.choices[0].message.content == "".join(WORDS)
        assert whole.choices[0].finish_reason == "stop" and whole.model == "mine"
        assert whole.usage.completion_tokens == len(WORDS)

        pieces, chunks = stream_pieces(
            client, model=model, stream_options={"include_usage": True}, extra_body={"delay_ms": 5}
        )
        assert pieces == WORDS
        assert chunks[0].choices[0].delta.role == "assistant"
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        assert chunks[-1].usage.completion_tokens == len(WORDS)

        text = client.completions.create(model=model, prompt="Say it", max_tokens=3)
        assert (
            text.choices[0].text == "".join(WORDS[:3]) and text.choices[0].finish_reason == "length"
        )
        assert [m.id for m in client.models.list().data] == [model]
        with pytest.raises(openai.BadRequestError, match="max_tokens must be a positive integer"):
            client.chat.completions.create(messages=MESSAGES, model=model, max_tokens=0)  # type: ignore[arg-type]

    # The same handler answers a native job (no openai_route) with the bare text pieces.
    items, status = endpoint.stream(endpoint.run({"prompt": "hi", "n": 3}))
    assert status == "COMPLETED" and [item["output"] for item in items] == WORDS[:3]


def test_leaving_a_stream_cancels_the_job_and_stops_the_handler(
    broker: Any, endpoint: Queue, start_worker: Any
) -> None:
    worker = start_worker(endpoint, "openai_handlers.py:handler")
    with openai_client(broker, endpoint) as client:
        stream = client.chat.completions.create(
            messages=MESSAGES,  # type: ignore[arg-type]
            model="m",
            stream=True,
            extra_body={"n": 10_000, "delay_ms": 20},
        )
        job_id = stream.response.headers["x-request-id"]
        received = []
        for chunk in stream:
            if chunk.choices[0].delta.content:
                received.append(chunk.choices[0].delta.content)
            if len(received) == 3:
                break
        stream.close()
        record = endpoint.wait(job_id)
        assert record["status"] == "CANCELLED"
        worker.wait_for_line(f"job {job_id} stopped by the broker")
        # the worker took no harm: the next request is answered
        answer = client.chat.completions.create(messages=MESSAGES, model="m", max_tokens=2)  # type: ignore[arg-type]
        assert answer.choices[0].message.content == "".join(WORDS[:2])
    assert received == WORDS[:3]


def test_a_vllm_style_handler_yielding_sse_strings_works_unmodified(
    broker: Any, endpoint: Queue, start_worker: Any
) -> None:
    start_worker(endpoint, "openai_handlers.py:vllm_style")
    with openai_client(broker, endpoint) as client:
        pieces, chunks = stream_pieces(client, model="vllm-model", extra_body={"delay_ms": 5})
        assert pieces == WORDS
        assert chunks[-1].choices[0].finish_reason == "stop"
        job_id = client.chat.completions.with_raw_response.create(
            messages=MESSAGES,
            model="vllm-model",  # type: ignore[arg-type]
        ).headers["x-request-id"]
        whole = client.chat.completions.create(messages=MESSAGES, model="vllm-model")  # type: ignore[arg-type]
        assert whole.choices[0].message.content == "".join(WORDS)
        assert [m.id for m in client.models.list().data] == ["vllm-model"]
        with pytest.raises(openai.BadRequestError, match="Invalid route"):
            client.embeddings.create(model="vllm-model", input="x")
    record = endpoint.status(job_id)
    assert record["status"] in TERMINAL and record["output"][0]["object"] == "chat.completion"


def test_the_runpod_sdk_serves_openai_handler(
    broker: Any,
    endpoint: Queue,
    sdk_worker: Any,  # noqa: F811 - the fixture
) -> None:
    sdk_worker(endpoint, "openai")
    served = ["Served", " by", " the", " runpod", " SDK"]
    with openai_client(broker, endpoint) as client:
        whole = client.chat.completions.create(messages=MESSAGES, model="sdk-words")  # type: ignore[arg-type]
        assert whole.choices[0].message.content == "".join(served)
        pieces, _ = stream_pieces(client, model="sdk-words")
        assert pieces == served
