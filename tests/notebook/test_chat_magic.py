"""``%%chat``, ``%chat history|reset`` and ``%endpoint serve FUNC --openai`` in a real IPython
shell against the emulator process: the reply printed as it arrives without a front end, or
streamed into the chat panel through a recording comm (pieces in order, the whole reply in the
final trait and the saved forms, time to first token and tokens/s, Stop cancels the job), the
conversation kept per endpoint, one-line errors, and no key in any message."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from nbhelpers import assert_one_line_error, magics_of, run_cell, wait_until

ENDED = ("DONE", "STOPPED", "FAILED")

SLOW_GENERATOR = """
import time
def nbtest_slow(messages, params):
    for i in range(params.get('max_tokens') or 400):
        time.sleep(0.02)
        yield f"w{i} "
"""
COUNTING_GENERATOR = """
def nbtest_count(messages, params):
    roles = ",".join(m["role"] for m in messages)
    yield f"{len(messages)} messages ({roles}); last: {messages[-1]['content']}"
"""


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a kernel with a front end: ``%%chat`` shows the panel and returns at once."""
    from podbook.notebook.chat import magic

    monkeypatch.setattr(magic, "live_front_end", lambda session: True)


def serve(ip: Any, source: str, function: str, flags: str = "") -> tuple[str, Any]:
    """Define ``function`` and serve it with ``--openai``; returns (endpoint, worker)."""
    name = "nbtest-chat-" + secrets.token_hex(3)
    assert run_cell(ip, source).success
    run = run_cell(ip, f"nbtest_worker = %endpoint serve {function} --openai --name {name} {flags}")
    assert run.success, run.text
    return name, ip.user_ns["nbtest_worker"]


@pytest.fixture
def slow(ip: Any) -> Iterator[str]:
    """An OpenAI-compatible endpoint served from the notebook: 50 pieces a second."""
    name, worker = serve(ip, SLOW_GENERATOR, "nbtest_slow")
    try:
        yield name
    finally:
        worker.stop()


def chat(ip: Any, endpoint: str, message: str, flags: str = "") -> tuple[Any, Any]:
    """Run a ``%%chat`` cell; returns (the turn it returned, the cell run)."""
    run = run_cell(ip, f"%%chat {endpoint} {flags} -o nbtest_turn\n{message}")
    assert run.success, run.text
    return ip.user_ns["nbtest_turn"], run


def custom_messages(comms: Any, panel: Any, kind: str) -> list[dict[str, Any]]:
    comm = next(c for c in comms.comms if c is panel.comm)
    return [
        m["data"]["content"]
        for m in list(comm.messages)
        if (m["data"] or {}).get("method") == "custom" and m["data"]["content"].get("type") == kind
    ]


def streamed(messages: list[dict[str, Any]]) -> list[str]:
    items: list[str] = []
    for message in messages:
        assert message["start"] <= len(items), (message["start"], len(items))
        items = items[: message["start"]] + list(message["items"])
    return items


# ---------------------------------------------------------------------------- no front end


def test_without_a_front_end_the_reply_is_printed_as_it_arrives(ip: Any, client: Any) -> None:
    turn, run = chat(ip, "chat-demo", "Tell me about streaming", "--max-tokens 6")
    assert turn.status == "DONE" and turn.done
    assert turn.result.usage.completion_tokens == 6 and turn.result.finish_reason == "length"
    assert run.stdout.startswith(turn.text) and "tok/s" in run.stdout and "6 tokens" in run.stdout
    assert run.outputs == []  # printed: the returned turn is not shown a second time
    done = lambda: client.endpoint("chat-demo").status(turn.job_id).status == "COMPLETED"  # noqa: E731
    assert turn.job_id and wait_until(done)
    assert "Chat with chat-demo" in repr(turn) and turn.text in repr(turn)


def test_the_conversation_goes_on_across_cells(ip: Any) -> None:
    name, worker = serve(ip, COUNTING_GENERATOR, "nbtest_count", "--model nbtest-model")
    try:
        first, _ = chat(ip, name, "Hi {nbtest_who}".replace("{nbtest_who}", "there"))
        assert first.text == "1 messages (user); last: Hi there"
        ip.user_ns["nbtest_topic"] = "tokens"
        second, _ = chat(ip, name, "And {nbtest_topic}?", "--system 'Be brief'")
        assert second.text == "4 messages (system,user,assistant,user); last: And tokens?"
        assert second.result.model == "nbtest-model"
        run = run_cell(ip, "nbtest_history = %chat history")
        assert run.success, run.text
        history = ip.user_ns["nbtest_history"]
        assert [m.role for m in history] == ["system", "user", "assistant", "user", "assistant"]
        assert history[-1].content == second.text
        assert "Conversation with" in str(run.outputs[0].data["text/plain"])
        reset = run_cell(ip, f"%chat reset {name}")
        assert "Forgot the conversation" in reset.stdout and "(4 messages)" in reset.stdout
        third, _ = chat(ip, name, "Again")
        assert third.text.startswith("1 messages (user)")
    finally:
        worker.stop()


def test_user_mistakes_are_one_line(ip: Any) -> None:
    assert_one_line_error(run_cell(ip, "%%chat chat-demo --temperature 3\nx"), "--temperature")
    assert_one_line_error(run_cell(ip, "%%chat chat-demo --max-tokens 0\nx"), "--max-tokens")
    assert_one_line_error(run_cell(ip, "%%chat chat-demo --bogus\nx"), "--bogus")
    assert_one_line_error(run_cell(ip, "%%chat\nx"), "ENDPOINT")
    assert_one_line_error(run_cell(ip, "%%chat chat-demo\n   \n"), "cell is empty")
    assert_one_line_error(run_cell(ip, "%chat"), "history, reset")
    assert_one_line_error(run_cell(ip, "%chat what"), "unknown subcommand")
    assert_one_line_error(run_cell(ip, "%chat reset chat-demo --all"), "not both")
    assert_one_line_error(run_cell(ip, "%chat history"), "no conversation yet")
    assert_one_line_error(run_cell(ip, "%%chat nbtest-no-such\nhi"), "404", "--openai")
    assert_one_line_error(run_cell(ip, "%%chat echo\nhi"), "OpenAI chat format")
    assert run_cell(ip, "%%chat --help\nx").success


def test_serve_openai_mistakes_are_one_line(ip: Any) -> None:
    assert run_cell(ip, "def nbtest_plain(job):\n    return 1\n").success
    assert_one_line_error(
        run_cell(ip, "%endpoint serve nbtest_plain --openai --name x"), "generator function"
    )
    assert_one_line_error(
        run_cell(ip, "%endpoint serve nbtest_plain --model m --name x"), "--openai only"
    )


def test_the_openai_package_talks_to_a_notebook_served_endpoint(ip: Any, nb_env: Any) -> None:
    from openai import OpenAI

    name, worker = serve(ip, COUNTING_GENERATOR, "nbtest_count")
    try:
        base_url = magics_of(ip).session.client.endpoint(name).openai_base_url
        openai = OpenAI(base_url=base_url, api_key=nb_env.api_key, max_retries=0)
        assert [m.id for m in openai.models.list().data] == [name]
        pieces = [
            chunk.choices[0].delta.content or ""
            for chunk in openai.chat.completions.create(
                model=name, messages=[{"role": "user", "content": "hey"}], stream=True
            )
            if chunk.choices
        ]
        assert "".join(pieces) == "1 messages (user); last: hey"
    finally:
        worker.stop()


# ---------------------------------------------------------------------------- the panel


def test_the_panel_streams_the_reply_and_keeps_all_of_it(
    ip: Any, comms: Any, live: None, slow: str, nb_env: Any
) -> None:
    turn, run = chat(ip, slow, "Count for me", "--max-tokens 60")
    panel = turn.panel
    assert panel is not None and not turn.done  # the cell returned while it streams
    assert run.outputs, "the panel was displayed"
    assert panel.endpoint == slow and panel.prompt == "Count for me"
    statuses = [panel.status]
    panel.observe(lambda change: statuses.append(change["new"]), "status")
    turn.wait(timeout=30)
    wait_until(lambda: panel.status in ENDED)
    words = [f"w{i} " for i in range(60)]
    assert panel.status == "DONE" and panel.reply == "".join(words) == turn.text
    assert "STREAMING" in statuses and statuses[-1] == "DONE"
    assert streamed(custom_messages(comms, panel, "chunks")) == words
    assert len(custom_messages(comms, panel, "chunks")) < 60  # batched
    assert panel.stats["tokens"] == 60 and panel.stats["finishReason"] == "length"
    assert 0 < panel.stats["ttft"] < 10 and panel.stats["tokensPerSecond"] > 5
    assert panel.pieces == 60 and [e["output"] for e in panel.tail] == words
    assert "".join(words) in panel.snapshot_text() and "w59" in panel.snapshot_html()
    assert nb_env.api_key not in comms.all_text()


def test_stop_closes_the_stream_and_the_job_is_cancelled(
    ip: Any, comms: Any, live: None, slow: str, client: Any
) -> None:
    turn, _ = chat(ip, slow, "Go on and on")
    panel = turn.panel
    wait_until(lambda: panel.pieces >= 5, timeout=20)
    panel._handle_custom_msg({"type": "stop"}, [])
    wait_until(lambda: panel.status in ENDED, timeout=10)
    assert panel.status == "STOPPED" and turn.result.stopped
    assert 5 <= len(turn.text.split()) < 400 and panel.reply == turn.text
    wait_until(lambda: client.endpoint(slow).status(turn.job_id).status == "CANCELLED")
    history = magics_of(ip).session  # the partial reply is kept in the conversation
    from podbook.notebook.chat.conversation import for_session

    kept = for_session(history).get(slow).history()
    assert [m.role for m in kept] == ["user", "assistant"] and kept[1].content == turn.text


def test_a_late_view_gets_the_pieces_it_missed(ip: Any, comms: Any, live: None, slow: str) -> None:
    turn, _ = chat(ip, slow, "Hello", "--max-tokens 20")
    turn.wait(timeout=30)
    panel = turn.panel
    wait_until(lambda: panel.status in ENDED)
    before = len(custom_messages(comms, panel, "chunks"))
    panel._handle_custom_msg({"type": "ready", "have": 15}, [])
    backlog = custom_messages(comms, panel, "chunks")[before:]
    assert backlog == [{"type": "chunks", "start": 15, "items": [f"w{i} " for i in range(15, 20)]}]


def test_a_second_question_waits_for_the_first_reply(
    ip: Any, comms: Any, live: None, slow: str
) -> None:
    first, _ = chat(ip, slow, "One", "--max-tokens 25")
    assert not first.done
    second, _ = chat(ip, slow, "Two", "--max-tokens 3")
    assert first.done and first.status == "DONE"  # the cell waited for it
    second.wait(timeout=30)
    assert second.text == "w0 w1 w2 "


def test_a_failure_shows_in_the_panel_as_one_line(ip: Any, comms: Any, live: None) -> None:
    turn, _ = chat(ip, "nbtest-no-such-endpoint", "Hello?")
    wait_until(lambda: turn.done, timeout=20)
    panel = turn.panel
    wait_until(lambda: panel.status == "FAILED")
    assert "404" in panel.error and "\n" not in panel.error and "--openai" in panel.error
    assert turn.error == panel.error
    with pytest.raises(Exception, match="404"):
        turn.wait(timeout=1)
    from podbook.notebook.chat.conversation import for_session

    assert len(for_session(magics_of(ip).session).get("nbtest-no-such-endpoint")) == 0


def test_unloading_the_extension_stops_a_streaming_reply(
    ip: Any, comms: Any, live: None, slow: str
) -> None:
    turn, _ = chat(ip, slow, "Long one")
    wait_until(lambda: turn.panel.pieces >= 2, timeout=20)
    magics_of(ip).close()
    turn.wait_quietly(timeout=10)
    assert turn.status == "STOPPED"
