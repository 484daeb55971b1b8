"""``endpoint.chat()``, ``openai_base_url`` and ``requests()`` against a real emulator process:
the built-in ``chat-demo`` streamed and not, sync and async, a vLLM-style worker that writes
raw SSE text, closing the stream cancels the job, and every error a typed one-liner."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from podbook import AsyncClient, Client
from podbook.api.openai import ChatDelta, ChatResult
from podbook.errors import APIError, BadRequest, InvalidRequest, NotFound, Unauthorized

pytestmark = pytest.mark.anyio

QUESTION = [{"role": "user", "content": "How do streams work?"}]


def wait_for_status(client: Client, endpoint: str, job_id: str, wanted: str) -> str:
    deadline = time.monotonic() + 15
    status = ""
    while time.monotonic() < deadline:
        status = client.endpoint(endpoint).status(job_id).status
        if status == wanted:
            return status
        time.sleep(0.05)
    return status


def test_openai_base_url(client: Client, emulator) -> None:
    assert client.endpoint("chat-demo").openai_base_url == f"{emulator.url}/v2/chat-demo/openai/v1"
    assert client.endpoint("a b").openai_base_url.endswith("/v2/a%20b/openai/v1")
    cloud = Client(api_key="pbk_cloud_key_0123456789", url=None, local=False)
    try:
        assert cloud.endpoint("abc").openai_base_url == "https://api.runpod.ai/v2/abc/openai/v1"
    finally:
        cloud.close()


def test_stream_yields_typed_deltas_then_the_result(client: Client) -> None:
    stream = client.endpoint("chat-demo").chat(QUESTION, max_tokens=8, temperature=0.2)
    deltas = list(stream)
    assert all(isinstance(d, ChatDelta) for d in deltas)
    assert deltas[0].role == "assistant"
    assert deltas[-1].finish_reason == "length"
    pieces = [d.content for d in deltas if d.content]
    assert len(pieces) == 8
    result = stream.result
    assert isinstance(result, ChatResult) and not result.stopped
    assert result.text == "".join(pieces) == stream.text
    assert result.usage is not None and result.usage.completion_tokens == 8
    assert result.usage.total_tokens == result.usage.prompt_tokens + 8
    assert result.finish_reason == "length" and result.model == "chat-demo"
    assert result.time_to_first_token_s is not None and 0 < result.time_to_first_token_s < 10
    assert result.tokens_per_s is not None and result.tokens_per_s > 0
    assert result.duration_s >= result.time_to_first_token_s
    assert result.job_id and result.message.content == result.text
    assert wait_for_status(client, "chat-demo", result.job_id, "COMPLETED") == "COMPLETED"


def test_the_first_token_waits_for_the_handler_pace(client: Client) -> None:
    result = client.endpoint("chat-demo").chat("hi", max_tokens=4, delay_ms=150).read()
    assert result.time_to_first_token_s >= 0.15
    # four pieces 150 ms apart: the whole answer takes at least 0.6 s, whatever the load (a
    # loaded machine may hand the pieces over in bunches, so the measured rate can be any)
    assert result.duration_s >= 0.6 and result.tokens_per_s > 0


def test_not_streamed_returns_the_result(client: Client) -> None:
    result = client.endpoint("chat-demo").chat(
        [{"role": "system", "content": "Be brief"}, "Hello"], stream=False, max_tokens=5
    )
    assert isinstance(result, ChatResult)
    assert result.usage.completion_tokens == 5 and len(result.text.split()) == 5
    assert result.finish_reason == "length" and result.job_id
    assert result.time_to_first_token_s == result.duration_s > 0


def test_closing_the_stream_cancels_the_job(client: Client) -> None:
    stream = client.endpoint("chat-demo").chat("A long story", max_tokens=500, delay_ms=40)
    with stream:
        pieces = [d.content for d in itertools.islice(stream, 5)]  # the role, then 4 pieces
    assert len(pieces) == 5 and pieces[0] == "" and stream.result.stopped
    assert stream.result.text == "".join(pieces)
    assert wait_for_status(client, "chat-demo", stream.job_id, "CANCELLED") == "CANCELLED"
    assert list(stream) == []  # closed: nothing more


def test_close_from_another_thread_ends_the_reader(client: Client) -> None:
    import threading

    stream = client.endpoint("chat-demo").chat("Another long story", max_tokens=500, delay_ms=40)
    seen: list[str] = []

    def read() -> None:
        for delta in stream:
            seen.append(delta.content)

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.monotonic() + 10
    while len(seen) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    stream.close()
    reader.join(timeout=10)
    assert not reader.is_alive()
    assert stream.result.stopped and 3 <= len(seen) < 500
    assert wait_for_status(client, "chat-demo", stream.job_id, "CANCELLED") == "CANCELLED"


def test_requests_lists_the_chats_newest_first(client: Client) -> None:
    result = client.endpoint("chat-demo").chat("count me", stream=False, max_tokens=2)
    records = client.endpoint("chat-demo").requests()
    mine = next(r for r in records if r.id == result.job_id)
    assert mine.route == "/v1/chat/completions"
    assert records[0].created_at >= records[-1].created_at


def test_a_vllm_style_worker_that_writes_raw_sse(client: Client) -> None:
    from worker.openai_handlers import WORDS, vllm_style

    import podbook

    endpoint = "chatvllm" + str(int(time.time() * 1000) % 100000)
    with podbook.serve(vllm_style, endpoint=endpoint, client=client):
        stream = client.endpoint(endpoint).chat("hi", model="my-vllm")
        deltas = list(stream)
        assert "".join(d.content for d in deltas) == "".join(WORDS)
        assert stream.result.finish_reason == "stop" and stream.result.model == "my-vllm"
        assert stream.result.usage is None and stream.result.tokens_per_s is not None
        whole = client.endpoint(endpoint).chat("hi", stream=False)
        assert whole.text == "".join(WORDS) and whole.usage.completion_tokens == 6


def test_errors_are_typed_and_one_line(client: Client, emulator) -> None:
    with pytest.raises(NotFound) as missing:
        list(client.endpoint("no-such-chat").chat("hi"))
    assert "\n" not in str(missing.value) and "no-such-chat" in str(missing.value)
    with pytest.raises(NotFound):
        client.endpoint("no-such-chat").chat("hi", stream=False)
    with pytest.raises(BadRequest) as bad:
        list(client.endpoint("chat-demo").chat("hi", delay_ms=-5))
    assert "delay_ms" in str(bad.value) and "\n" not in str(bad.value)
    with pytest.raises(APIError, match="OpenAI chat format"):
        list(client.endpoint("echo").chat("hi"))
    with pytest.raises(APIError, match="OpenAI chat format"):
        client.endpoint("stream-demo").chat("hi", stream=False)
    stranger = Client(api_key="pbk_wrong_0123456789abcdef", url=emulator.url)
    try:
        with pytest.raises(Unauthorized):
            list(stranger.endpoint("chat-demo").chat("hi"))
    finally:
        stranger.close()


def test_bad_requests_are_refused_before_sending(client: Client) -> None:
    endpoint = client.endpoint("chat-demo")
    cases = [
        ([], {}, "at least one message"),
        ([{"role": "robot", "content": "x"}], {}, "messages[0].role"),
        ([{"role": "user", "content": 3}], {}, "messages[0].content"),
        (QUESTION, {"temperature": 3}, "temperature"),
        (QUESTION, {"max_tokens": 0}, "max_tokens"),
        (QUESTION, {"top_p": "high"}, "top_p"),
        (QUESTION, {"model": ""}, "model"),
        (42, {}, "messages"),
    ]
    for messages, params, needle in cases:
        with pytest.raises(InvalidRequest) as refused:
            endpoint.chat(messages, **params)
        assert needle in str(refused.value), (needle, str(refused.value))


@pytest.fixture
async def aclient(emulator):
    async with AsyncClient(api_key=emulator.api_key, url=emulator.url) as c:
        yield c


async def test_async_stream_and_not(aclient: AsyncClient) -> None:
    endpoint = aclient.endpoint("chat-demo")
    stream = endpoint.chat(QUESTION, max_tokens=5)
    pieces = [d.content async for d in stream if d.content]
    assert len(pieces) == 5 and stream.result.text == "".join(pieces)
    assert stream.result.usage.completion_tokens == 5
    result = await endpoint.chat(QUESTION, stream=False, max_tokens=3)
    assert result.usage.completion_tokens == 3 and result.text
    assert endpoint.openai_base_url.endswith("/v2/chat-demo/openai/v1")
    assert any(r.id == result.job_id for r in await endpoint.requests())


async def test_async_close_cancels_the_job(aclient: AsyncClient, client: Client) -> None:
    stream = aclient.endpoint("chat-demo").chat("long", max_tokens=500, delay_ms=40)
    async with stream:
        count = 0
        async for delta in stream:
            count += bool(delta.content)
            if count == 3:
                break
    assert stream.result.stopped and len(stream.result.text.split()) == 3
    status = await asyncio.to_thread(
        wait_for_status, client, "chat-demo", stream.job_id, "CANCELLED"
    )
    assert status == "CANCELLED"


async def test_async_errors(aclient: AsyncClient) -> None:
    with pytest.raises(NotFound):
        async for _ in aclient.endpoint("no-such-chat").chat("hi"):
            pass
    with pytest.raises(InvalidRequest):
        aclient.endpoint("chat-demo").chat([])
