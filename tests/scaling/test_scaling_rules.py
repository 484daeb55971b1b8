"""The service's scaling rules as :func:`podbook.emulator.broker.scaling.plan` applies them."""

from __future__ import annotations

from podbook.emulator.broker.scaling import Load, Settings, WorkerView, plan

QUEUE = Settings(min=0, max=3, idle_timeout=5, rule="QUEUE_DELAY", value=4)


def idle(name: str, for_s: float = 0.0, *, stale: bool = False) -> WorkerView:
    return WorkerView(name, starting=False, busy=False, idle_for=for_s, stale=stale)


def busy(name: str, *, stale: bool = False) -> WorkerView:
    return WorkerView(name, starting=False, busy=True, stale=stale)


def starting(name: str) -> WorkerView:
    return WorkerView(name, starting=True, busy=False)


def test_a_job_and_no_worker_is_a_cold_start_at_once() -> None:
    assert plan(QUEUE, Load(waiting=1), []).start == 1
    assert plan(QUEUE, Load(), []).start == 0


def test_queue_delay_adds_one_worker_when_a_job_waited_too_long() -> None:
    assert plan(QUEUE, Load(waiting=5, oldest_wait=1), [busy("a")]).start == 0
    assert plan(QUEUE, Load(waiting=5, oldest_wait=5), [busy("a")]).start == 1
    # one at a time: not while another is starting
    assert plan(QUEUE, Load(waiting=5, oldest_wait=9), [busy("a"), starting("b")]).start == 0


def test_max_caps_and_what_is_held_back_is_throttled() -> None:
    full = [busy("a"), busy("b"), busy("c")]
    decided = plan(QUEUE, Load(waiting=9, oldest_wait=9), full)
    assert decided.start == 0 and decided.throttled == 1
    assert plan(QUEUE, Load(waiting=9, oldest_wait=9), full[:2], stopping=1).start == 0


def test_request_count_keeps_one_worker_per_n_jobs() -> None:
    rule = Settings(min=0, max=4, rule="REQUEST_COUNT", value=2)
    assert plan(rule, Load(waiting=5, in_progress=0), []).start == 3
    assert plan(rule, Load(waiting=9), []).start == 4


def test_idle_workers_stop_after_idle_timeout_down_to_min() -> None:
    workers = [idle("a", 6), idle("b", 2), idle("c", 9)]
    assert plan(QUEUE, Load(), workers).stop == ["c", "a"]
    warm = Settings(min=1, max=3, idle_timeout=5)
    assert plan(warm, Load(), workers).stop == ["c", "a"]
    assert plan(warm, Load(), [idle("a", 60)]).stop == []
    assert plan(warm, Load(), []).start == 1  # min is kept even with no job


def test_an_old_releases_idle_workers_stop_and_busy_ones_finish() -> None:
    decided = plan(QUEUE, Load(), [idle("old", 0, stale=True), busy("older", stale=True)])
    assert decided.stop == ["old"]


def test_settings_read_the_record_with_the_services_defaults() -> None:
    assert Settings.of({}) == Settings(min=0, max=3, idle_timeout=5.0)
    record = {
        "workers": {"min": 5, "max": 2},
        "scaling": {"type": "REQUEST_COUNT", "requestCount": 3},
    }
    assert Settings.of(record) == Settings(
        min=2, max=2, idle_timeout=5.0, rule="REQUEST_COUNT", value=3
    )
