"""The OpenAI-compatible route, ``/v2/{endpoint_id}/openai/v1/...``, used through the unmodified
``openai`` package: the built-in ``chat-demo`` endpoint, and endpoints served step by step by a
raw worker (:class:`RawWorker`), so each test controls what the handler yields and when.

The emulator runs with ``--queue-rate-limit openai=200/2``: two requests at once per endpoint.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from test_queue_helpers import (
    RawWorker,
    health,
    queue_emulator,
    status,
    wait_for,
)

from podbook.api.queue import RequestsResponse

CHAT = {"model": "chat-demo", "messages": [{"role": "user", "content": "Tell me about GPUs."}]}


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """An emulator allowing two /openai requests at once per endpoint."""
    return queue_emulator(start_emulator, "--queue-rate-limit", "openai=200/2")


def openai_client(emu: Any, endpoint_id: str, key: str | None = None, **kwargs: Any) -> Any:
    """The ``openai`` package pointed at the endpoint (no retries: each answer shows)."""
    base_url = f"{emu.url}/v2/{endpoint_id}/openai/v1"
    options = {"max_retries": 0, "timeout": 30, **kwargs}
    return openai.OpenAI(base_url=base_url, api_key=key or emu.api_key, **options)


@pytest.fixture
def chat_demo(emu: Any) -> Iterator[Any]:
    """The ``openai`` package pointed at the built-in ``chat-demo``."""
    with openai_client(emu, "chat-demo") as client:
        yield client


class Background:
    """A call made in a thread (the client side, while the test plays the worker)."""

    def __init__(self, call: Any) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Any) -> None:
        try:
            self.result = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc

    def join(self, timeout: float = 20.0) -> Any:
        """The call's result (its exception raised here)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the call did not return"
        if self.error is not None:
            raise self.error
        return self.result


def completion(text: str, job_id: str) -> dict[str, Any]:
    """A ``chat.completion`` body as a handler returns it."""
    return {
        "id": f"chatcmpl-{job_id}",
        "object": "chat.completion",
        "created": 1,
        "model": "raw",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def delta(text: str) -> dict[str, Any]:
    """A ``chat.completion.chunk`` with one content delta."""
    return {
        "id": "chatcmpl-raw",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "raw",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
    }


def sse(*chunks: dict[str, Any], done: bool = False) -> str:
    """SSE text as the service's vLLM worker yields it."""
    text = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
    return text + ("data: [DONE]\n\n" if done else "")


# --- chat-demo through the openai package ----------------------------------------------------


def test_chat_demo_answers_a_whole_chat_completion_that_is_an_ordinary_job(
    chat_demo: Any, http: httpx.Client
) -> None:
    before = health(http, "chat-demo")["jobs"]["completed"]
    answer = chat_demo.chat.completions.create(**CHAT, max_tokens=5, extra_body={"delay_ms": 0})
    assert answer.object == "chat.completion" and answer.model == "chat-demo"
    choice = answer.choices[0]
    assert choice.message.role == "assistant" and len(choice.message.content.split()) == 5
    assert choice.finish_reason == "length"
    assert answer.usage.completion_tokens == 5
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + 5

    job_id = answer._request_id  # x-request-id: the job's id
    record = status(http, "chat-demo", job_id)
    assert record["status"] == "COMPLETED" and record["executionTime"] >= 0
    assert record["output"][0]["choices"][0]["message"]["content"] == choice.message.content
    assert health(http, "chat-demo")["jobs"]["completed"] >= before + 1
    listed = RequestsResponse.model_validate(http.get("/v2/chat-demo/requests").json())
    mine = next(item for item in listed.requests if item.id == job_id)
    assert mine.route == "/v1/chat/completions" and mine.status == "COMPLETED"
    assert mine.completed_at is not None and mine.started_at is not None


def test_chat_demo_streams_the_role_then_deltas_then_finish_and_usage(
    chat_demo: Any, http: httpx.Client
) -> None:
    with chat_demo.chat.completions.create(
        **CHAT,
        max_tokens=6,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"delay_ms": 5},
    ) as stream:
        chunks = list(stream)
        job_id = stream.response.headers["x-request-id"]
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert len(pieces) == 6 and all(pieces)
    finish = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finish[-1] == "length" and set(finish[:-1]) == {None}
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 6
    # /status holds every yield (return_aggregate_stream), each SSE text.
    record = wait_for(
        lambda: (r := status(http, "chat-demo", job_id))["status"] == "COMPLETED" and r
    )
    assert "".join(record["output"]).count("data: ") == len(chunks) + 1  # and [DONE]


def test_chat_demo_completions_whole_and_streamed(chat_demo: Any) -> None:
    whole = chat_demo.completions.create(
        model="chat-demo", prompt="Once upon a time", max_tokens=4, extra_body={"delay_ms": 0}
    )
    assert whole.object == "text_completion" and len(whole.choices[0].text.split()) == 4
    assert whole.usage.completion_tokens == 4
    streamed = chat_demo.completions.create(
        model="chat-demo", prompt="Once upon a time", max_tokens=4, stream=True
    )
    texts = [chunk.choices[0].text for chunk in streamed]
    assert "".join(texts) == whole.choices[0].text  # the same prompt, the same words


def test_chat_demo_lists_its_model(chat_demo: Any) -> None:
    models = chat_demo.models.list()
    assert [model.id for model in models.data] == ["chat-demo"]


def test_errors_are_openai_errors_with_a_fitting_status(emu: Any, chat_demo: Any) -> None:
    with pytest.raises(openai.BadRequestError) as bad:
        chat_demo.chat.completions.create(model="chat-demo", messages=[])
    assert "messages" in bad.value.message and bad.value.param == "messages"
    with pytest.raises(openai.BadRequestError) as route:
        chat_demo.embeddings.create(model="chat-demo", input="hello")
    assert "Invalid route: /v1/embeddings" in route.value.message
    assert route.value.response.headers["x-should-retry"] == "false"
    with openai_client(emu, "no-such-endpoint") as missing, pytest.raises(openai.NotFoundError):
        missing.models.list()
    wrong = openai_client(emu, "chat-demo", key="pbk_wrong")
    with wrong, pytest.raises(openai.AuthenticationError) as refused:
        wrong.models.list()
    assert refused.value.body["type"] == "authentication_error"
    readonly = openai_client(emu, "chat-demo", key=emu.readonly_key)
    with readonly, pytest.raises(openai.PermissionDeniedError):
        readonly.chat.completions.create(**CHAT)
    not_json = httpx.post(
        f"{emu.url}/v2/chat-demo/openai/v1/chat/completions",
        content=b"{not json",
        headers=emu.headers(),
    )
    assert not_json.status_code == 400
    assert set(not_json.json()["error"]) == {"message", "type", "param", "code"}
    other_method = httpx.post(f"{emu.url}/v2/chat-demo/openai/v1/models", headers=emu.headers())
    assert other_method.status_code == 405


# --- step by step, with a raw worker -----------------------------------------------------------


def test_each_request_is_a_job_carrying_the_route_and_the_body_as_sent(
    emu: Any, worker: RawWorker, endpoint: str, http: httpx.Client
) -> None:
    body = {**CHAT, "temperature": 0.5, "custom_field": [1, 2]}
    with openai_client(emu, endpoint) as client:
        call = Background(
            lambda: client.chat.completions.create(
                **CHAT, temperature=0.5, extra_body={"custom_field": [1, 2]}
            )
        )
        job = worker.take_job()
        assert job["input"] == {"openai_route": "/v1/chat/completions", "openai_input": body}
        assert status(http, endpoint, job["id"])["status"] == "IN_PROGRESS"
        worker.post_result(job["id"], {"output": completion("hi there", job["id"])})
        answer = call.join()
        assert answer.choices[0].message.content == "hi there"
        assert answer._request_id == job["id"]

        models = Background(lambda: client.models.list())
        job = worker.take_job()
        assert job["input"] == {"openai_route": "/v1/models"}  # a GET carries no body
        worker.post_result(
            job["id"], {"output": [{"object": "list", "data": [{"id": "m", "object": "model"}]}]}
        )
        assert [m.id for m in models.join().data] == ["m"]


def test_a_stream_writes_each_yield_the_moment_it_arrives(
    emu: Any, worker: RawWorker, endpoint: str, http: httpx.Client
) -> None:
    """The reader gets each chunk while the worker has not yet posted the next one: nothing
    waits for more. Strings of SSE text, chunk objects and lists of them all come out as
    events; the emulator ends the stream with [DONE] when the handler did not."""
    received: list[str] = []
    arrived = threading.Event()

    def read() -> list[str]:
        with openai_client(emu, endpoint) as client:
            for chunk in client.chat.completions.create(**CHAT, stream=True):
                received.append(chunk.choices[0].delta.content)
                arrived.set()
        return received

    reader = Background(read)
    job = worker.take_job()
    assert job["input"]["openai_input"]["stream"] is True
    posts = [sse(delta("raw ")), delta("object "), [delta("list "), delta("of two ")]]
    expected = [["raw "], ["object "], ["list ", "of two "]]
    for output, pieces in zip(posts, expected, strict=True):
        arrived.clear()
        assert worker.post_chunk(job["id"], output).status_code == 200
        wait_for(lambda pieces=pieces: received[-len(pieces) :] == pieces and arrived.is_set())
    worker.post_result(job["id"], {"output": posts}, is_stream=True)
    assert reader.join() == ["raw ", "object ", "list ", "of two "]
    assert status(http, endpoint, job["id"])["status"] == "COMPLETED"


def test_the_handler_sse_text_with_done_ends_the_stream(
    emu: Any, worker: RawWorker, endpoint: str
) -> None:
    with openai_client(emu, endpoint) as client:
        reader = Background(lambda: list(client.chat.completions.create(**CHAT, stream=True)))
        job = worker.take_job()
        worker.post_chunk(job["id"], sse(delta("a"), delta("b"), done=True))
        chunks = reader.join()  # [DONE] ended it, before the job's result
    assert [c.choices[0].delta.content for c in chunks] == ["a", "b"]
    worker.post_result(job["id"], {"output": []}, is_stream=True)


def test_a_handler_error_object_is_an_http_error_with_its_code(
    emu: Any, worker: RawWorker, endpoint: str
) -> None:
    error = {"object": "error", "message": "no model m", "type": "NotFoundError", "code": 404}
    with openai_client(emu, endpoint) as client:
        for stream in (False, True):
            call = Background(
                lambda stream=stream: client.chat.completions.create(**CHAT, stream=stream)
            )
            job = worker.take_job()
            if stream:
                worker.post_chunk(job["id"], error)  # the first item: answered in place of a stream
            worker.post_result(
                job["id"], {"output": [error] if stream else error}, is_stream=stream
            )
            with pytest.raises(openai.NotFoundError) as info:
                call.join()
            assert info.value.body["message"] == "no model m"
            assert info.value.response.headers["x-should-retry"] == "false"


def test_a_failed_job_is_a_500_naming_the_handler_error(
    emu: Any, worker: RawWorker, endpoint: str
) -> None:
    failure = {"error_type": "ValueError", "error_message": "the model is not loaded"}
    with openai_client(emu, endpoint) as client:
        call = Background(lambda: client.chat.completions.create(**CHAT))
        job = worker.take_job()
        worker.post_result(job["id"], {"error": json.dumps(failure)})
        with pytest.raises(openai.InternalServerError) as info:
            call.join()
    assert "ValueError: the model is not loaded" in info.value.message


def test_a_failure_after_the_stream_began_ends_it_with_an_error_event(
    emu: Any, worker: RawWorker, endpoint: str
) -> None:
    received: list[str] = []

    def read() -> None:
        with openai_client(emu, endpoint) as client:
            for chunk in client.chat.completions.create(**CHAT, stream=True):
                received.append(chunk.choices[0].delta.content)

    reader = Background(read)
    job = worker.take_job()
    worker.post_chunk(job["id"], sse(delta("partial")))
    wait_for(lambda: received == ["partial"])
    worker.post_result(job["id"], {"error": "the GPU fell off the bus"}, is_stream=True)
    with pytest.raises(openai.APIError) as info:
        reader.join()
    assert "the GPU fell off the bus" in info.value.message


def test_a_client_that_leaves_mid_stream_cancels_the_job_and_its_worker_is_told(
    emu: Any, worker: RawWorker, endpoint: str, http: httpx.Client
) -> None:
    first = threading.Event()

    def read_one_then_leave() -> None:
        with openai_client(emu, endpoint) as client:
            stream = client.chat.completions.create(**CHAT, stream=True)
            next(iter(stream))
            first.set()
            stream.close()

    reader = Background(read_one_then_leave)
    job = worker.take_job()
    worker.post_chunk(job["id"], sse(delta("one")))
    assert first.wait(10)
    reader.join()
    wait_for(lambda: status(http, endpoint, job["id"])["status"] == "CANCELLED")
    stop = worker.stop_signals()
    assert stop.status_code == 200 and stop.json() == {"jobsToStop": [job["id"]]}
    assert worker.post_chunk(job["id"], sse(delta("two"))).status_code == 409  # not taken any more


def test_a_client_that_gives_up_waiting_cancels_its_queued_job(
    emu: Any, endpoint: str, http: httpx.Client
) -> None:
    client = openai_client(emu, endpoint, timeout=0.5)  # nobody serves it
    with client, pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(**CHAT)
    listed = wait_for(
        lambda: (
            (r := http.get(f"/v2/{endpoint}/requests").json()["requests"])
            and r[0]["status"] == "CANCELLED"
            and r
        )
    )
    assert listed[0]["route"] == "/v1/chat/completions" and "startedAt" not in listed[0]


def test_a_job_cancelled_through_cancel_answers_409(
    emu: Any, worker: RawWorker, endpoint: str, http: httpx.Client
) -> None:
    with openai_client(emu, endpoint) as client:
        call = Background(lambda: client.chat.completions.create(**CHAT))
        job = worker.take_job()
        assert http.post(f"/v2/{endpoint}/cancel/{job['id']}").json()["status"] == "CANCELLED"
        with pytest.raises(openai.ConflictError) as info:
            call.join()
    assert "cancelled" in info.value.message


def test_more_requests_at_once_than_the_limit_answer_429_until_one_ends(
    emu: Any, worker: RawWorker, endpoint: str
) -> None:
    """Two at once (this emulator's limit): a stream counts until it ends."""
    with openai_client(emu, endpoint) as client:
        held = [
            Background(lambda: client.chat.completions.create(**CHAT, stream=True))
            for _ in range(2)
        ]
        jobs = [worker.take_job(), worker.take_job()]
        with pytest.raises(openai.RateLimitError) as info:
            client.models.list()
        assert info.value.response.headers["Retry-After"] == "1"
        assert "2 at once" in info.value.message
        for job in jobs:
            worker.post_result(job["id"], {"output": [sse(delta("x"), done=True)]}, is_stream=True)
        streams = [call.join() for call in held]
        for stream in streams:
            assert [c.choices[0].delta.content for c in stream] == ["x"]
        listing = Background(lambda: client.models.list())
        job = worker.take_job()
        worker.post_result(job["id"], {"output": {"object": "list", "data": []}})
        assert listing.join().data == []


# --- /requests -----------------------------------------------------------------------------------


def test_requests_lists_recent_jobs_newest_first_with_their_route(
    http: httpx.Client, endpoint: str
) -> None:
    first = http.post(f"/v2/{endpoint}/run", json={"input": {"n": 1}}).json()["id"]
    second = http.post(f"/v2/{endpoint}/run", json={"input": {"n": 2}}).json()["id"]
    body = http.get(f"/v2/{endpoint}/requests").json()
    assert [item["id"] for item in body["requests"]] == [second, first]
    item = body["requests"][0]
    assert item["status"] == "IN_QUEUE" and "route" not in item and "startedAt" not in item
    assert item["createdAt"].endswith("Z") and item["delayTime"] >= 0
    RequestsResponse.model_validate(body)


def test_requests_has_its_own_limit_of_ten_per_ten_seconds(
    http: httpx.Client, endpoint: str
) -> None:
    answers = [http.get(f"/v2/{endpoint}/requests").status_code for _ in range(11)]
    assert answers[:10] == [200] * 10 and answers[10] == 429
    assert http.get(f"/v2/{endpoint}/health").status_code == 200  # other operations go on


def test_requests_allows_two_at_once() -> None:
    from podbook.emulator.broker.errors import QueueRefusal
    from podbook.emulator.broker.ratelimit import QueueRateLimiter

    limiter = QueueRateLimiter(clock=lambda: 100.0)
    held = [limiter.acquire("acct", "ep", "requests") for _ in range(2)]
    with pytest.raises(QueueRefusal) as info:
        limiter.acquire("acct", "ep", "requests")
    assert info.value.status == 429 and "2 at once" in info.value.message
    limiter.release(held[0])
    assert limiter.acquire("acct", "ep", "requests") is not None
