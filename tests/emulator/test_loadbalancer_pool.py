"""Load-balancing endpoints, which worker takes a request: real ``podbook worker --lb``
processes, their health as the emulator polls it, balancing between them, and workers that
start, stop, fail or vanish.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from lb_helpers import (
    LB_FLAGS,
    WSGI_APP,
    AppWorker,
    create_lb_endpoint,
    free_port,
    listing,
    wait_for,
)


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """An emulator with quick health polls (0.1 s) and a 5 s wait for starting workers."""
    return start_emulator(extra_args=LB_FLAGS)


@pytest.fixture
def lb(http: Any) -> str:
    """A fresh load-balancing endpoint."""
    return create_lb_endpoint(http)


@pytest.fixture
def workers(emu: Any, lb: str, tmp_path: Path) -> Any:
    """Start workers of ``lb`` with ``workers(name, **options)``; all stopped afterwards."""
    started: list[AppWorker] = []

    def start(name: str, **options: Any) -> AppWorker:
        worker = AppWorker(emu, lb, tmp_path, name=name, **options)
        started.append(worker)
        return worker.wait_registered()

    yield start
    for worker in started:
        worker.stop()


def served_by(emu: Any, lb: str, count: int) -> Counter[str]:
    """Which worker answered each of ``count`` sequential requests."""
    names: Counter[str] = Counter()
    with httpx.Client(base_url=f"{emu.url}/lb/{lb}", headers=emu.headers(), timeout=10) as c:
        for _ in range(count):
            response = c.get("/echo/who")
            assert response.status_code == 200, response.text
            names[response.headers["x-worker"]] += 1
    return names


def status_is(http: Any, lb: str, worker: str, status: str | None) -> Any:
    """A check that the listing shows ``worker`` with ``status`` (None: not listed)."""
    return lambda: listing(http, lb).get(worker) == status


def two_workers(workers: Any, http: Any, lb: str) -> tuple[AppWorker, AppWorker]:
    """Workers ``a`` and ``b``, both healthy."""
    pair = (workers("a"), workers("b"))
    wait_for(lambda: listing(http, lb) == {"a": "IDLE", "b": "IDLE"}, what="both healthy")
    return pair


def test_two_workers_share_the_load(emu: Any, http: Any, lb: str, workers: Any) -> None:
    two_workers(workers, http, lb)
    assert served_by(emu, lb, 10) == {"a": 5, "b": 5}  # ties are taken in turn


def test_a_busy_worker_is_passed_over(emu: Any, http: Any, lb: str, workers: Any) -> None:
    """Least in flight: while one worker streams a long answer, the other takes the rest."""
    two_workers(workers, http, lb)
    with httpx.stream(
        "GET", f"{emu.url}/lb/{lb}/busy", params={"seconds": 3}, headers=emu.headers()
    ) as busy:
        busy_one = busy.headers["x-worker"]
        assert listing(http, lb)[busy_one] == "RUNNING"
        other = ({"a", "b"} - {busy_one}).pop()
        assert served_by(emu, lb, 4) == {other: 4}
        busy.close()
    wait_for(status_is(http, lb, busy_one, "IDLE"), what="the busy worker idle again")


def test_unhealthy_worker_is_skipped_until_healthy(
    emu: Any, http: Any, lb: str, workers: Any
) -> None:
    a, _ = two_workers(workers, http, lb)
    a.set_health(503)
    wait_for(status_is(http, lb, "a", "UNHEALTHY"), what="a unhealthy")
    assert served_by(emu, lb, 6) == {"b": 6}
    a.set_health(200)
    wait_for(status_is(http, lb, "a", "IDLE"), what="a healthy again")
    assert set(served_by(emu, lb, 4)) == {"a", "b"}


def test_only_unhealthy_workers_answer_400_at_once(
    emu: Any, http: Any, lb: str, workers: Any
) -> None:
    workers("sick", env={"APP_HEALTH": "503"})
    wait_for(status_is(http, lb, "sick", "UNHEALTHY"), what="the worker unhealthy")
    started = time.monotonic()
    response = httpx.get(f"{emu.url}/lb/{lb}/echo/x", headers=emu.headers())
    assert response.status_code == 400
    assert "GET /ping answered 503" in response.json()["error"]
    assert time.monotonic() - started < 1.0


def test_initializing_worker_holds_the_request_until_ready(
    emu: Any, http: Any, lb: str, workers: Any
) -> None:
    """A request that arrives while the only worker answers 204 waits for it (up to 5 s)."""
    starting = workers("starting", env={"APP_HEALTH": "204"})
    wait_for(status_is(http, lb, "starting", "INITIALIZING"), what="the worker initializing")
    answers: list[httpx.Response] = []
    request = threading.Thread(
        target=lambda: answers.append(
            httpx.get(f"{emu.url}/lb/{lb}/echo/held", headers=emu.headers(), timeout=10)
        )
    )
    request.start()
    request.join(0.5)
    assert request.is_alive()  # held, not refused
    starting.set_health(200)
    request.join(10)
    assert answers and answers[0].status_code == 200
    assert answers[0].headers["x-worker"] == "starting"


def test_vanished_worker_is_removed_and_its_requests_go_elsewhere(
    emu: Any, http: Any, lb: str, workers: Any
) -> None:
    a, _ = two_workers(workers, http, lb)
    a.kill9()
    # Requests right away never fail: a refused connection is tried on the other worker.
    assert served_by(emu, lb, 4) == {"b": 4}
    wait_for(status_is(http, lb, "a", None), what="the vanished worker removed")
    assert listing(http, lb) == {"b": "IDLE"}


def test_sigterm_leaves_the_pool_before_exiting(emu: Any, http: Any, lb: str, workers: Any) -> None:
    a = workers("a")
    wait_for(status_is(http, lb, "a", "IDLE"), what="the worker healthy")
    assert a.stop() == 0
    assert "a" not in listing(http, lb)  # said goodbye: no failed polls needed


def test_port_and_health_port_from_the_environment(
    emu: Any, http: Any, lb: str, workers: Any
) -> None:
    port, health_port = free_port(), free_port()
    worker = workers("ports", env={"PORT": str(port), "PORT_HEALTH": str(health_port)})
    assert worker.port == port
    assert f"health on port {health_port}" in worker.text()
    wait_for(status_is(http, lb, "ports", "IDLE"), what="the worker healthy")
    assert httpx.get(f"http://127.0.0.1:{health_port}/ping").status_code == 200
    answer = httpx.get(f"{emu.url}/lb/{lb}/echo/p", headers=emu.headers()).json()
    assert answer["port"] == str(port)  # the app reads the PORT it listens on


def test_wsgi_app_is_served(emu: Any, http: Any, lb: str, workers: Any) -> None:
    workers("wsgi", app=f"{WSGI_APP}:app")
    wait_for(status_is(http, lb, "wsgi", "IDLE"), what="the WSGI worker healthy")
    response = httpx.post(f"{emu.url}/lb/{lb}/any/path", content=b"hi", headers=emu.headers())
    assert response.status_code == 200
    assert response.headers["x-wsgi"] == "yes"
    assert response.json() == {"method": "POST", "path": "/any/path", "body": "hi"}


def test_app_without_ping_is_never_routed_and_says_why(
    emu: Any, http: Any, lb: str, workers: Any
) -> None:
    worker = workers("noping", app=f"{WSGI_APP}:no_ping")
    assert "GET /ping answered 404" in worker.text()
    assert "takes requests once /ping answers 200" in worker.text()
    assert listing(http, lb) == {"noping": "UNHEALTHY"}
    response = httpx.get(f"{emu.url}/lb/{lb}/anything", headers=emu.headers())
    assert response.status_code == 400
    assert "worker noping" in response.json()["error"]
    assert "GET /ping answered 404" in response.json()["error"]


def test_deleting_the_endpoint_empties_its_pool(emu: Any, http: Any, lb: str, workers: Any) -> None:
    workers("a")
    wait_for(status_is(http, lb, "a", "IDLE"), what="the worker healthy")
    assert http.delete(f"/v2/serverless/{lb}").status_code == 204
    assert httpx.get(f"{emu.url}/lb/{lb}/echo/x", headers=emu.headers()).status_code == 404


def test_concurrent_streams_are_spread_and_complete(
    emu: Any, http: Any, lb: str, workers: Any
) -> None:
    """40 streamed answers at once over two workers: every line of each arrives."""
    import asyncio

    two_workers(workers, http, lb)

    async def one(client: httpx.AsyncClient) -> tuple[str, list[str]]:
        async with client.stream("GET", "/stream", params={"n": 4, "delay": 0.1}) as answer:
            lines = [line.split()[0] async for line in answer.aiter_lines() if line]
            return answer.headers["x-worker"], lines

    async def many() -> list[tuple[str, list[str]]]:
        async with httpx.AsyncClient(
            base_url=f"{emu.url}/lb/{lb}", headers=emu.headers(), timeout=30
        ) as client:
            return await asyncio.gather(*(one(client) for _ in range(40)))

    answers = asyncio.run(many())
    assert all(lines == ["0", "1", "2", "3"] for _, lines in answers)
    spread = Counter(name for name, _ in answers)
    assert set(spread) == {"a", "b"} and min(spread.values()) >= 15, spread


def test_workers_come_back_after_an_emulator_restart(
    emu: Any, http: Any, lb: str, workers: Any
) -> None:
    """Registrations live in memory; each worker renews its own within 5 s of a restart."""
    workers("a")
    wait_for(status_is(http, lb, "a", "IDLE"), what="the worker healthy")
    emu.restart()
    with emu.http() as fresh:
        wait_for(lambda: listing(fresh, lb) == {"a": "IDLE"}, 10, what="the worker back")
        assert fresh.get(f"/lb/{lb}/echo/x").headers["x-worker"] == "a"
