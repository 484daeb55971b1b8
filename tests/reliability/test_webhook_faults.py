"""Webhook receiver down, slow, or answering 500: exactly 3 attempts, spaced as the seed says.

The seed: "When the call fails, the service retries up to 2 more times, 10 seconds apart."
The emulator runs at ``--queue-time-scale 0.1``, so the pause is 1 s here (the ratio to the
seed's 10 s is what is asserted); an attempt not answered within the pause (at least 2 s)
counts as failed. Receivers are real HTTP servers on loopback that record each attempt with
its arrival time; jobs run on the built-in ``echo`` endpoint's supervised worker.
"""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest
from faults_helpers import QUEUE_TIME_SCALE, WebhookReceiver, free_port, status, wait_for

SCALE = QUEUE_TIME_SCALE
SEED_PAUSE_SECONDS = 10.0
PAUSE = SEED_PAUSE_SECONDS * SCALE
ATTEMPT_TIMEOUT = 2.0  # the pause clamped to at least 2 s (broker/webhooks.py)
SLACK = 1.5  # seconds of lateness tolerated on a loaded machine


def finished_job_with_webhook(http: httpx.Client, url: str) -> str:
    """Run a job on ``echo`` with ``webhook=url``; wait until it is COMPLETED."""
    response = http.post("/v2/echo/run", json={"input": {"hello": "hook"}, "webhook": url})
    assert response.status_code == 200, response.text
    job_id = response.json()["id"]
    wait_for(lambda: status(http, "echo", job_id)["status"] == "COMPLETED", timeout=60)
    return job_id


def assert_spacing(starts: list[float], ends: list[float]) -> list[float]:
    """Each retry starts one pause after the failed attempt ended; returns the pauses."""
    pauses = [starts[i + 1] - ends[i] for i in range(len(starts) - 1)]
    for pause in pauses:
        assert PAUSE - 0.1 <= pause <= PAUSE + SLACK, (pauses, PAUSE)
    return pauses


@pytest.mark.parametrize("answer", [500, 503, 404])
def test_a_receiver_answering_an_error_gets_exactly_three_attempts(
    http: httpx.Client, answer: int
) -> None:
    receiver = WebhookReceiver(lambda n: (0.0, answer))
    try:
        job_id = finished_job_with_webhook(http, receiver.url)
        wait_for(lambda: len(receiver.attempts) >= 3, timeout=20)
        time.sleep(PAUSE * 3)  # a fourth attempt would have come by now
        assert len(receiver.attempts) == 3
        assert all(body["id"] == job_id for _, _, body in receiver.attempts)
        assert receiver.attempts[0][2]["status"] == "COMPLETED"
        assert receiver.attempts[0][2]["input"] == {"hello": "hook"}
        starts = receiver.arrivals()
        pauses = assert_spacing(starts, [end for _, end, _ in receiver.attempts])
        print(
            f"\nreceiver answering {answer}: 3 attempts, pauses {[round(p, 2) for p in pauses]} s"
        )
    finally:
        receiver.close()


def test_a_receiver_that_recovers_gets_no_more_attempts(http: httpx.Client) -> None:
    receiver = WebhookReceiver(lambda n: (0.0, 500 if n == 1 else 200))
    try:
        finished_job_with_webhook(http, receiver.url)
        wait_for(lambda: len(receiver.attempts) >= 2, timeout=20)
        time.sleep(PAUSE * 3)
        assert len(receiver.attempts) == 2
    finally:
        receiver.close()


def test_a_slow_receiver_that_answers_in_time_gets_one_call(http: httpx.Client) -> None:
    receiver = WebhookReceiver(lambda n: (0.8, 200))
    try:
        finished_job_with_webhook(http, receiver.url)
        wait_for(lambda: receiver.attempts and receiver.attempts[0][1] > receiver.attempts[0][0])
        time.sleep(PAUSE * 3)
        assert len(receiver.attempts) == 1
    finally:
        receiver.close()


def test_a_receiver_too_slow_to_answer_gets_exactly_three_attempts(http: httpx.Client) -> None:
    receiver = WebhookReceiver(lambda n: (ATTEMPT_TIMEOUT + 1.5, 200))
    try:
        finished_job_with_webhook(http, receiver.url)
        wait_for(lambda: len(receiver.attempts) >= 3, timeout=40)
        time.sleep(ATTEMPT_TIMEOUT + PAUSE * 3)
        assert len(receiver.attempts) == 3
        # The sender gives up on an attempt after ATTEMPT_TIMEOUT, pauses, then tries again.
        starts = receiver.arrivals()
        gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
        for gap in gaps:
            assert ATTEMPT_TIMEOUT + PAUSE - 0.2 <= gap <= ATTEMPT_TIMEOUT + PAUSE + SLACK, gaps
        print(f"\nreceiver too slow: 3 attempts, {[round(g, 2) for g in gaps]} s apart")
    finally:
        receiver.close()


_TRY = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) .*webhook for job (\S+) failed \(\w+\) "
    r"\(try (\d) of 3\)"
)


def _log_tries(log_text: str, job_id: str) -> list[tuple[float, int]]:
    tries = []
    for line in log_text.splitlines():
        match = _TRY.match(line)
        if match and match.group(3) == job_id:
            stamp = time.mktime(time.strptime(match.group(1), "%Y-%m-%d %H:%M:%S"))
            tries.append((stamp + int(match.group(2)) / 1000, int(match.group(4))))
    return tries


def test_a_receiver_that_is_down_gets_exactly_three_attempts(emu: Any, http: httpx.Client) -> None:
    port = free_port()  # nothing listens: every attempt is refused
    url = f"http://127.0.0.1:{port}/hook"
    job_id = finished_job_with_webhook(http, url)
    log_path = emu.log_path

    def given_up() -> bool:
        text = log_path.read_text(errors="replace")
        return f"webhook for job {job_id} not delivered after 3 tries" in text

    wait_for(given_up, timeout=20)
    tries = _log_tries(log_path.read_text(errors="replace"), job_id)
    assert [n for _, n in tries] == [1, 2, 3]
    gaps = [b - a for (a, _), (b, _) in zip(tries, tries[1:], strict=False)]
    for gap in gaps:  # a refused connection fails at once: the gap is the pause
        assert PAUSE - 0.1 <= gap <= PAUSE + SLACK, gaps
    # Up now: nothing more comes (the sender gave up after the third attempt).
    receiver = WebhookReceiver(lambda n: (0.0, 200), port=port)
    try:
        time.sleep(PAUSE * 3)
        assert receiver.attempts == []
    finally:
        receiver.close()
    print(f"\nreceiver down: 3 attempts, {[round(g, 2) for g in gaps]} s apart, then given up")
