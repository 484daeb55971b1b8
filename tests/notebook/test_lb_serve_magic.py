"""``%endpoint serve APP --lb --name ID`` in a real IPython shell: a FastAPI app defined in a
cell becomes a load-balancing worker, reached through ``client.endpoint(ID).lb_url`` (plain
and streamed answers), stopped by ``.stop()`` and by unloading the extension; mistakes are
one line each."""

from __future__ import annotations

import secrets
import time
from typing import Any

import httpx
from nbhelpers import assert_one_line_error, run_cell

APP_CELL = """
import asyncio
from fastapi import FastAPI
from fastapi.responses import StreamingResponse

nbtest_app = FastAPI()

@nbtest_app.get("/ping")
def nbtest_ping():
    return {"status": "healthy"}

@nbtest_app.post("/add")
def nbtest_add(numbers: list[int]):
    return {"sum": sum(numbers)}

@nbtest_app.get("/count")
async def nbtest_count(n: int = 3):
    async def lines():
        for i in range(n):
            yield f"{i}\\n"
            await asyncio.sleep(0.2)
    return StreamingResponse(lines(), media_type="text/plain")
"""


def serve(ip: Any, name: str) -> Any:
    """Define the app in a cell and serve it; the handle."""
    assert run_cell(ip, APP_CELL).success
    run = run_cell(ip, f"nbtest_served = %endpoint serve nbtest_app --lb --name {name}")
    assert run.success, run.text
    assert f"load-balancing endpoint {name}" in run.stdout
    return ip.user_ns["nbtest_served"], run


def test_serve_an_app_from_a_cell_and_call_it(ip: Any, nb_env: Any, client: Any) -> None:
    name = "nbtest-lb-" + secrets.token_hex(3)
    served, run = serve(ip, name)
    try:
        url = client.endpoint(name).lb_url
        assert url == f"{nb_env.url}/lb/{name}" == served.lb_url
        assert url in run.stdout
        assert nb_env.api_key not in run.text + repr(served)
        assert client.endpoints.get(name).type == "LOAD_BALANCER"  # created by the magic
        headers = {"Authorization": f"Bearer {nb_env.api_key}"}
        added = httpx.post(f"{url}/add", json=[1, 2, 3], headers=headers, timeout=10)
        assert added.status_code == 200 and added.json() == {"sum": 6}
        arrivals = []
        with httpx.stream("GET", f"{url}/count", params={"n": 3}, headers=headers) as answer:
            for line in answer.iter_lines():
                arrivals.append((line, time.monotonic()))
        assert [line for line, _ in arrivals] == ["0", "1", "2"]
        assert arrivals[-1][1] - arrivals[0][1] > 0.3  # streamed as the cell's app wrote it
    finally:
        served.stop()
    assert not served.running
    gone = httpx.get(f"{url}/ping", headers=headers, timeout=10)
    assert gone.status_code == 400 and "no worker ready" in gone.json()["error"]


def test_unloading_the_extension_stops_the_app(
    shell: Any, ip: Any, nb_env: Any, client: Any
) -> None:
    name = "nbtest-lb-" + secrets.token_hex(3)
    served, _ = serve(ip, name)
    shell.run_line_magic("unload_ext", "podbook")
    try:
        assert not served.running
    finally:
        shell.run_line_magic("load_ext", "podbook")


def test_serving_again_replaces_the_app(ip: Any, nb_env: Any, client: Any) -> None:
    name = "nbtest-lb-" + secrets.token_hex(3)
    first, _ = serve(ip, name)
    second, _ = serve(ip, name)
    try:
        assert not first.running and second.running
        workers = client.endpoints.workers(name).workers
        assert [w.id for w in workers] == [second.worker_id]
    finally:
        second.stop()


def test_lb_mistakes_are_one_line(ip: Any, nb_env: Any) -> None:
    run = run_cell(ip, "%endpoint serve nbtest_nothing --lb --name x")
    assert_one_line_error(run, "no variable named 'nbtest_nothing'")
    ip.user_ns["nbtest_number"] = 3
    assert_one_line_error(
        run_cell(ip, "%endpoint serve nbtest_number --lb --name x"),
        "nbtest_number is of type int, not an ASGI or WSGI app",
    )
    run_cell(ip, "def nbtest_fn(job):\n    return job\n")
    assert_one_line_error(
        run_cell(ip, "%endpoint serve nbtest_fn --lb --name x"), "not an ASGI or WSGI app"
    )
    assert run_cell(ip, APP_CELL).success
    assert_one_line_error(
        run_cell(ip, "%endpoint serve nbtest_app --lb --name echo"),
        "endpoint 'echo' is a QUEUE endpoint",
        "choose another name",
    )
    assert_one_line_error(
        run_cell(ip, "%endpoint serve nbtest_app --lb --openai --name x"), "--openai applies to"
    )
    assert_one_line_error(
        run_cell(ip, "%endpoint serve nbtest_app --lb --concurrency 2 --name x"),
        "--concurrency applies to",
    )


def test_app_without_ping_is_refused_with_the_fix(ip: Any, nb_env: Any, client: Any) -> None:
    assert run_cell(ip, "from fastapi import FastAPI\nnbtest_bare = FastAPI()\n").success
    name = "nbtest-lb-" + secrets.token_hex(3)
    run = run_cell(ip, f"%endpoint serve nbtest_bare --lb --name {name}")
    assert_one_line_error(run, "GET /ping answered 404", "@app.get('/ping')")
    assert client.endpoints.workers(name).workers == []  # stopped, left the pool


def test_queue_handler_on_a_load_balancing_endpoint_is_refused(ip: Any, nb_env: Any) -> None:
    name = "nbtest-lb-" + secrets.token_hex(3)
    served, _ = serve(ip, name)
    try:
        run_cell(ip, "def nbtest_handler(job):\n    return 1\n")
        run = run_cell(ip, f"%endpoint serve nbtest_handler --name {name}")
        assert_one_line_error(run, f"endpoint '{name}' is a LOAD_BALANCER endpoint")
    finally:
        served.stop()
