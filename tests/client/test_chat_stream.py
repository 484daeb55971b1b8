"""The chat stream's reading, without a server: the I/O-free :class:`ChatTally` (events,
timings, errors inside the stream) and, through respx, what the emulator cannot be made to
do on demand (a 429 before the answer, a connection that drops mid-stream, a 5xx that must
not be sent again)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
import respx

from podbook import AsyncClient, Client
from podbook.client import RetryPolicy
from podbook.client.resources.chat import ChatTally
from podbook.errors import APIError, BadRequest, ConnectionFailed, ServerError

BASE = "http://chat.test"
KEY = "pbk_chat_stream_key_0123456789"
ROUTE = f"{BASE}/v2/ep/openai/v1/chat/completions"
FAST = RetryPolicy(max_attempts=3, max_wait=2.0, backoff=0.01, max_backoff=0.05)


def chunk(
    content: str | None = None,
    *,
    role: str | None = None,
    finish: str | None = None,
    index: int = 0,
    usage: dict | None = None,
) -> dict:
    delta = {k: v for k, v in (("role", role), ("content", content)) if v is not None}
    body: dict = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    body["choices"] = [{"index": index, "delta": delta, "finish_reason": finish}]
    if usage is not None:
        body["usage"], body["choices"] = usage, []
    return body


def sse(*events: dict | str) -> str:
    return "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def feed(tally: ChatTally, text: str) -> list:
    out = []
    for line in text.split("\n"):
        out.extend(tally.take_line(line))
    return out


# ---------------------------------------------------------------------------- the tally


def test_timings_come_from_the_pieces_and_the_usage() -> None:
    clock = Clock()
    tally = ChatTally(ROUTE, clock)
    assert feed(tally, sse(chunk("", role="assistant")))[0].role == "assistant"
    clock.now = 100.5
    feed(tally, sse(chunk("Hello")))
    for step in range(1, 5):
        clock.now = 100.5 + step * 0.25
        feed(tally, sse(chunk(f" w{step}")))
    feed(
        tally, sse(chunk(finish="stop"), chunk(usage={"completion_tokens": 5, "prompt_tokens": 2}))
    )
    assert feed(tally, "data: [DONE]\n\n") == [] and tally.ended
    clock.now = 102.0
    result = tally.result()
    assert result.text == "Hello w1 w2 w3 w4" and result.finish_reason == "stop"
    assert result.time_to_first_token_s == pytest.approx(0.5)
    assert result.tokens_per_s == pytest.approx(4 / 1.0)  # 4 tokens after the first, in 1 s
    assert result.duration_s == pytest.approx(2.0) and result.usage.prompt_tokens == 2


def test_without_usage_the_pieces_are_counted() -> None:
    clock = Clock()
    tally = ChatTally(ROUTE, clock)
    for step in range(3):
        clock.now = 101 + step
        feed(tally, sse(chunk("x")))
    result = tally.result()
    assert result.usage is None and result.completion_tokens is None
    assert result.tokens_per_s == pytest.approx(2 / 2)


def test_events_in_any_framing() -> None:
    tally = ChatTally(ROUTE, Clock())
    # two events in one write, a comment, a keep-alive that is not JSON, an event whose data
    # spans two lines, a choice other than the first, and a last event without its blank line
    text = (
        ": keep-alive\n\n"
        + sse(chunk("a"), chunk("b"))
        + "data: not json\n\n"
        + 'data: {"id": "c1", "choices":\ndata: [{"index": 0, "delta": {"content": "c"}}]}\n\n'
        + sse(chunk("ignored", index=1))
        + f"data: {json.dumps(chunk('d'))}"
    )
    deltas = feed(tally, text) + tally.finish_stream()
    assert [d.content for d in deltas] == ["a", "b", "c", "d"]
    assert tally.result().text == "abcd"


def test_an_error_inside_the_stream_is_typed() -> None:
    tally = ChatTally(ROUTE, Clock())
    feed(tally, sse(chunk("partial")))
    with pytest.raises(BadRequest) as bad:
        feed(
            tally,
            sse(
                {
                    "error": {
                        "message": "bad  stop\nlist",
                        "type": "BadRequestError",
                        "param": "stop",
                        "code": 400,
                    }
                }
            ),
        )
    assert str(bad.value) == "400 BadRequestError: bad stop list (param: stop)"
    with pytest.raises(ServerError):
        feed(ChatTally(ROUTE, Clock()), sse({"error": {"message": "boom", "code": "oops"}}))


def test_an_answer_not_in_the_chat_format_is_named() -> None:
    with pytest.raises(APIError, match="not answer in the OpenAI chat format"):
        feed(ChatTally(ROUTE, Clock()), sse({"text": ["hi"], "output_tokens": 1}))


# ---------------------------------------------------------------------------- over the wire


class Dropping(httpx.SyncByteStream):
    """A body that sends ``head`` then breaks like a dropped connection."""

    def __init__(self, head: str) -> None:
        self.head = head

    def __iter__(self) -> Iterator[bytes]:
        yield self.head.encode()
        raise httpx.ReadError("connection reset by peer")


@pytest.fixture
def client() -> Iterator[Client]:
    with Client(api_key=KEY, url=BASE, retry=FAST) as c:
        yield c


EVENT_STREAM = {"Content-Type": "text/event-stream", "x-request-id": "job-42"}


def test_a_429_is_waited_out_then_the_stream_read(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        route = router.post("/v2/ep/openai/v1/chat/completions").mock(
            side_effect=[
                httpx.Response(
                    429, headers={"Retry-After": "0"}, json={"error": {"message": "slow down"}}
                ),
                httpx.Response(
                    200, headers=EVENT_STREAM, text=sse(chunk("hi")) + "data: [DONE]\n\n"
                ),
            ]
        )
        result = client.endpoint("ep").chat("hello").read()
    assert route.call_count == 2 and result.text == "hi" and result.job_id == "job-42"
    sent = json.loads(route.calls[0].request.content)
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert route.calls[0].request.headers["Accept"].startswith("text/event-stream")
    assert route.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"


def test_a_5xx_is_not_sent_again(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        route = router.post("/v2/ep/openai/v1/chat/completions").mock(
            return_value=httpx.Response(
                502, json={"error": {"message": "worker crashed", "type": "InternalError"}}
            )
        )
        with pytest.raises(ServerError) as failed:
            client.endpoint("ep").chat("hello").read()
    assert route.call_count == 1
    assert str(failed.value) == "502 InternalError: worker crashed"
    assert KEY not in repr(failed.value)


def test_a_dropped_stream_is_a_connection_failure_with_what_was_read(client: Client) -> None:
    with respx.mock(base_url=BASE) as router:
        router.post("/v2/ep/openai/v1/chat/completions").mock(
            return_value=httpx.Response(
                200, headers=EVENT_STREAM, stream=Dropping(sse(chunk("part")))
            )
        )
        stream = client.endpoint("ep").chat("hello")
        with pytest.raises(ConnectionFailed) as dropped:
            list(stream)
    assert "connection reset" in str(dropped.value)
    assert "not sent again" in str(dropped.value)  # it started a job: never resent
    assert stream.result.text == "part" and stream.result.stopped


def test_a_json_answer_to_a_stream_request_is_one_delta(client: Client) -> None:
    body = {
        "id": "c9",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "whole"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    with respx.mock(base_url=BASE) as router:
        router.post("/v2/ep/openai/v1/chat/completions").mock(
            return_value=httpx.Response(200, json=body)
        )
        deltas = list(client.endpoint("ep").chat("hello"))
    assert [(d.content, d.finish_reason) for d in deltas] == [("whole", "stop")]


async def test_async_a_dropped_stream() -> None:
    class AsyncDropping(httpx.AsyncByteStream):
        async def __aiter__(self):
            yield sse(chunk("part")).encode()
            raise httpx.ReadError("reset")

    async with AsyncClient(api_key=KEY, url=BASE, retry=FAST) as aclient:
        with respx.mock(base_url=BASE) as router:
            router.post("/v2/ep/openai/v1/chat/completions").mock(
                return_value=httpx.Response(200, headers=EVENT_STREAM, stream=AsyncDropping())
            )
            stream = aclient.endpoint("ep").chat("hello")
            with pytest.raises(ConnectionFailed):
                async for _ in stream:
                    pass
    assert stream.result.text == "part" and stream.job_id == "job-42"


pytestmark = pytest.mark.anyio
