"""``serve(fn, endpoint=..., concurrency=...)``: a handler served from a background thread."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time

import pytest

from podbook import Client
from podbook.errors import ConfigError
from podbook.worker import serve

from .conftest import Queue


@pytest.fixture
def user_client(broker):
    with Client(api_key=broker.api_key, url=broker.url) as client:
        yield client


def fresh_name() -> str:
    return "nb-" + secrets.token_hex(4)


def test_serve_creates_the_endpoint_and_runs_jobs_off_the_main_thread(broker, user_client):
    import podbook

    assert podbook.serve is serve

    def handler(job):
        return {"doubled": job["input"]["x"] * 2, "thread": threading.current_thread().name}

    worker = serve(handler, endpoint=fresh_name(), client=user_client)
    try:
        assert worker.running
        queue = Queue(broker.http(), worker.endpoint_id)
        record = queue.runsync({"x": 21})
        assert record["status"] == "COMPLETED"
        assert record["output"]["doubled"] == 42
        assert record["output"]["thread"] != threading.main_thread().name
        assert "running" in repr(worker) and broker.api_key not in repr(worker)
    finally:
        worker.stop()
    assert not worker.running


def test_served_async_generator_streams_and_stops_on_cancel(broker, user_client):
    closed = threading.Event()

    async def handler(job):
        try:
            for i in range(1000):
                await asyncio.sleep(0.02)
                yield i
        finally:
            closed.set()

    with serve(handler, endpoint=fresh_name(), client=user_client, concurrency=2) as worker:
        queue = Queue(broker.http(), worker.endpoint_id)
        job_id = queue.run({})
        seen = []
        while len(seen) < 3:
            seen += queue.http.get(f"/v2/{queue.id}/stream/{job_id}").json()["stream"]
        assert [item["output"] for item in seen[:3]] == [0, 1, 2]
        assert queue.cancel(job_id)["status"] == "CANCELLED"
        assert closed.wait(3)
        assert queue.status(job_id)["status"] == "CANCELLED"


def test_serving_an_endpoint_again_replaces_the_earlier_worker(broker, user_client):
    name = fresh_name()
    first = serve(lambda job: "first", endpoint=name, client=user_client)
    second = serve(lambda job: "second", endpoint=name, client=user_client)
    try:
        assert not first.running
        queue = Queue(broker.http(), second.endpoint_id)
        assert queue.runsync({})["output"] == "second"
    finally:
        second.stop()


def test_stop_waits_for_the_running_job(broker, user_client):
    worker = serve(lambda job: time.sleep(0.5) or "done", endpoint=fresh_name(), client=user_client)
    queue = Queue(broker.http(), worker.endpoint_id)
    job_id = queue.run({})
    queue.wait_status(job_id, "IN_PROGRESS")
    worker.stop()
    assert queue.status(job_id)["status"] == "COMPLETED"


def test_serve_refuses_the_real_cloud_in_one_line():
    with Client(api_key="rk_not_used") as cloud, pytest.raises(ConfigError) as info:
        serve(lambda job: None, endpoint="demo", client=cloud)
    message = str(info.value)
    assert "local emulator only" in message and "\n" not in message
    assert "rk_not_used" not in message


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"endpoint": ""}, ValueError),
        ({"endpoint": "x", "concurrency": 0}, ValueError),
    ],
)
def test_serve_checks_its_arguments_before_anything_else(kwargs, error):
    with pytest.raises(error):
        serve(lambda job: None, **kwargs)


def test_handlers_run_in_the_context_of_the_serving_cell(broker, user_client):
    """ipykernel routes a thread's output by a context variable (the cell's parent header):
    a served handler sees the context of the cell that called ``serve``."""
    import contextvars

    cell = contextvars.ContextVar("cell", default="none")
    cell.set("cell-7")
    with serve(lambda job: cell.get(), endpoint=fresh_name(), client=user_client) as worker:
        queue = Queue(broker.http(), worker.endpoint_id)
        assert queue.runsync({})["output"] == "cell-7"
