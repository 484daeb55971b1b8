"""The job panel's stream bookkeeping: bounded tail, batches in order, backlog, rates."""

from __future__ import annotations

from podbook.notebook.endpoints.rate import RateMeter, chunk_tokens
from podbook.notebook.endpoints.streambuffer import PENDING_MAX, TAIL_MAX, StreamBuffer


def test_batches_are_consecutive_and_the_tail_is_bounded() -> None:
    buffer = StreamBuffer()
    for i in range(1000):
        buffer.add(f"tok{i} ")
    seen = []
    while (batch := buffer.take()) is not None:
        assert batch.start == len(seen)
        seen += batch.items
    assert seen == [f"tok{i} " for i in range(1000)]
    tail = buffer.tail()
    assert len(tail) == TAIL_MAX
    assert [e["i"] for e in tail] == list(range(1000 - TAIL_MAX, 1000))


def test_backlog_answers_what_a_late_view_missed() -> None:
    buffer = StreamBuffer()
    for i in range(300):
        buffer.add(i)
    assert buffer.backlog(290).start == 290 and buffer.backlog(290).items == list(range(290, 300))
    early = buffer.backlog(0)  # chunks before the tail are gone for good
    assert early.start == 100 and len(early.items) == TAIL_MAX
    assert buffer.backlog(300) is None


def test_pending_chunks_are_bounded_when_nobody_takes_them() -> None:
    buffer = StreamBuffer()
    for i in range(PENDING_MAX + 10):
        buffer.add(i)
    first = buffer.take()
    assert first.start == 10 and buffer.dropped == 10


def test_tail_resend_costs_at_most_a_quarter_of_the_stream() -> None:
    buffer = StreamBuffer()
    sent_tail_bytes = stream_bytes = 0
    for i in range(20_000):
        buffer.add(f"t{i % 10} ")
        stream_bytes += 5
        if buffer.tail_due():
            sent_tail_bytes += sum(
                len(f'{{"i": {e["i"]}, "output": "t0 "}}') for e in buffer.tail()
            )
    assert 0 < sent_tail_bytes <= stream_bytes // 4


def test_tokens_from_output_tokens_or_text() -> None:
    assert chunk_tokens({"output_tokens": 3, "text": ["abc"]}) == 3
    assert chunk_tokens({"output_tokens": 7}, previous_reported=5) == 2  # count so far
    assert chunk_tokens({"output_tokens": 2}, previous_reported=2) == 2  # the chunk's own
    assert chunk_tokens({"text": ["hello ", "world"]}) == 3
    assert chunk_tokens("hi") == 1
    assert chunk_tokens({"value": 1}) == 0


def test_rate_over_the_window_and_overall() -> None:
    now = [0.0]
    meter = RateMeter(clock=lambda: now[0])
    for i in range(11):
        meter.add(
            {"output_tokens": 2 * (i + 1), "text": ["ab"]}, {"scenario": "demo", "running": 1}
        )
        now[0] += 0.1
    live = meter.snapshot()
    assert live["chunksPerSecond"] == 10.0 and live["tokensPerSecond"] == 20.0
    now[0] += 5.0  # nothing for a while: the live rate falls to zero
    assert meter.snapshot()["chunksPerSecond"] == 0.0
    done = meter.snapshot(finished=True)
    assert done["chunksPerSecond"] == 10.0 and done["tokensPerSecond"] == 20.0
    assert done["metrics"] == {"scenario": "demo", "running": 1}
