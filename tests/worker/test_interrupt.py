"""``InterruptibleCall``: a sync handler stopped in its pool thread, and nothing left pending
in that thread once its call has returned."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from podbook.worker._interrupt import HandlerInterrupted, InterruptibleCall


def test_a_running_call_is_interrupted_and_its_finally_runs() -> None:
    started, cleaned = threading.Event(), threading.Event()
    swallowed: list[str] = []

    def handler() -> str:
        started.set()
        try:
            for _ in range(2000):  # 100 s unless interrupted
                try:
                    time.sleep(0.05)
                except Exception:  # what a handler may do: it must not swallow the interrupt
                    swallowed.append("caught")
            return "ran to the end"
        finally:
            cleaned.set()

    call = InterruptibleCall()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(call.run, handler)
        assert started.wait(10)
        began = time.monotonic()
        assert call.interrupt()
        with pytest.raises(HandlerInterrupted):
            future.result(timeout=10)
        assert time.monotonic() - began < 5
        assert cleaned.is_set() and swallowed == []
        assert not call.interrupt()  # once
        with pytest.raises(HandlerInterrupted):  # a later call of the same job: at once
            pool.submit(call.run, lambda: "later").result(timeout=10)
        # the pool thread is intact: it runs the next job normally
        assert pool.submit(InterruptibleCall().run, lambda: "next").result(timeout=10) == "next"


def test_interrupting_a_call_that_has_returned_leaves_its_thread_alone() -> None:
    call = InterruptibleCall()
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(call.run, lambda: 42).result(timeout=10) == 42
        assert not call.interrupt()

        def busy() -> int:
            total = 0
            for i in range(200_000):
                total += i
            return total

        assert pool.submit(busy).result(timeout=10) == sum(range(200_000))
