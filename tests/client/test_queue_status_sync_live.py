"""Held status reads against a real emulator: ``endpoint.status(job_id, wait=ms)`` and every
wait built on it (``job.wait()``, ``job.output()``, ``runsync`` past its ``wait``) hold one
``/status-sync`` read open until the job ends, and fall back to ``/status`` polls against a
service that lacks that route.
"""

from __future__ import annotations

import time

import httpx
import pytest

from podbook import AsyncClient, Client
from podbook.errors import NotFound, WaitTimeout

from .test_queue_live import in_thread
from .test_queue_support import ManualWorker, RecordingTransport, create_endpoint

pytestmark = pytest.mark.timeout(120)


class WithoutStatusSync(httpx.HTTPTransport):
    """The emulator as a service without ``/status-sync`` would answer (404 problem+json, as
    an older podbook emulator does); records ``"METHOD /path STATUS"`` of every request."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """404 for ``/status-sync/``; anything else goes to the emulator."""
        if "/status-sync/" in request.url.path:
            response = no_route(request)
        else:
            response = super().handle_request(request)
        self.sent.append(f"{request.method} {request.url.path} {response.status_code}")
        return response


class AsyncWithoutStatusSync(httpx.AsyncHTTPTransport):
    """:class:`WithoutStatusSync` for the async client."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """404 for ``/status-sync/``; anything else goes to the emulator."""
        if "/status-sync/" in request.url.path:
            response = no_route(request)
        else:
            response = await super().handle_async_request(request)
        self.sent.append(f"{request.method} {request.url.path} {response.status_code}")
        return response


def no_route(request: httpx.Request) -> httpx.Response:
    """The 404 of a server that has no such route."""
    detail = f"no route {request.url.path}; check the URL and the API base"
    return httpx.Response(
        404,
        json={"type": "about:blank", "title": "Not Found", "status": 404, "detail": detail},
        headers={"Content-Type": "application/problem+json"},
    )


@pytest.fixture
def manual(emulator):
    """A fresh endpoint with no handler, and a worker the test drives."""
    worker = ManualWorker(emulator, create_endpoint(emulator, "held"))
    yield worker
    worker.close()


def finish_later(manual: ManualWorker, seconds: float, output: object):
    """Take the next job, work ``seconds`` on it, then post ``output``; the thread."""

    def work():
        job = manual.take()
        time.sleep(seconds)
        manual.finish(job["id"], output)

    return in_thread(work)


def test_status_with_wait_holds_until_the_job_ends(emulator, manual):
    transport = RecordingTransport()
    with Client(api_key=emulator.api_key, url=emulator.url, transport=transport) as client:
        endpoint = client.endpoint(manual.endpoint_id)
        job = endpoint.run({"x": 1})
        worker = finish_later(manual, 0.4, {"done": 1})
        started = time.monotonic()
        record = endpoint.status(job.id, wait=60_000)
        elapsed = time.monotonic() - started
        worker.join()
    assert record.status == "COMPLETED" and record.output == {"done": 1}
    assert 0.3 < elapsed < 5  # woken by the result, not by the 60 s wait
    assert transport.sent[-1] == f"GET /v2/{manual.endpoint_id}/status-sync/{job.id}"


def test_status_with_wait_answers_the_record_when_the_wait_passes(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = endpoint.run({"x": 1})
    manual.take()
    manual.progress(job.id, {"pct": 10})
    started = time.monotonic()
    record = job.status(wait=1000)
    assert 0.9 < time.monotonic() - started < 3
    assert record.status == "IN_PROGRESS" and record.output == {"pct": 10}
    assert job.record is record and not job.done


def test_output_is_one_held_read_not_a_poll_loop(emulator, manual):
    transport = RecordingTransport()
    with Client(api_key=emulator.api_key, url=emulator.url, transport=transport) as client:
        job = client.endpoint(manual.endpoint_id).run({"x": 1})
        worker = finish_later(manual, 1.5, "late")
        assert job.output(timeout=30) == "late"
        worker.join()
    reads = [line for line in transport.sent if f"/{job.id}" in line]
    assert reads == [f"GET /v2/{manual.endpoint_id}/status-sync/{job.id}"]


def test_wait_timeout_still_raises_in_time_and_names_the_status(client, manual):
    job = client.endpoint(manual.endpoint_id).run({"x": 1})
    started = time.monotonic()
    with pytest.raises(WaitTimeout) as info:
        job.wait(timeout=1.5)
    assert 1.4 < time.monotonic() - started < 3.5
    assert "IN_QUEUE" in str(info.value) and "\n" not in str(info.value)


def test_a_service_without_status_sync_is_polled_and_remembered(emulator, manual):
    transport = WithoutStatusSync()
    with Client(api_key=emulator.api_key, url=emulator.url, transport=transport) as client:
        endpoint = client.endpoint(manual.endpoint_id)
        worker = finish_later(manual, 1.6, {"late": True})
        job = endpoint.runsync({"x": 1}, wait=1000)
        worker.join()
        assert job.output() == {"late": True}
        base = f"/v2/{manual.endpoint_id}"
        assert transport.sent[:3] == [
            f"POST {base}/runsync 200",
            f"GET {base}/status-sync/{job.id} 404",
            f"GET {base}/status/{job.id} 200",
        ]
        assert transport.sent[-1] == f"GET {base}/status/{job.id} 200"
        # The client remembers: the next wait polls /status at once.
        transport.sent.clear()
        second = endpoint.run({"y": 2})
        worker = finish_later(manual, 0.3, "again")
        assert second.output(timeout=30) == "again"
        worker.join()
        assert not any("/status-sync/" in line for line in transport.sent)


def test_an_unknown_job_is_not_found_and_status_sync_is_not_given_up(emulator, manual):
    transport = RecordingTransport()
    with Client(api_key=emulator.api_key, url=emulator.url, transport=transport) as client:
        endpoint = client.endpoint(manual.endpoint_id)
        with pytest.raises(NotFound) as info:
            endpoint.status("no-such-job", wait=5_000)
        assert "no-such-job" in str(info.value) and "\n" not in str(info.value)
        base = f"/v2/{manual.endpoint_id}"
        assert transport.sent == [
            f"GET {base}/status-sync/no-such-job",
            f"GET {base}/status/no-such-job",
        ]
        job = endpoint.run({"x": 1})
        manual.take()
        manual.finish(job.id, 3)
        assert job.output(timeout=30) == 3
        assert transport.sent[-1] == f"GET {base}/status-sync/{job.id}"


@pytest.mark.anyio
async def test_async_held_read_and_fallback(emulator, manual):
    async with AsyncClient(api_key=emulator.api_key, url=emulator.url) as client:
        endpoint = client.endpoint(manual.endpoint_id)
        job = await endpoint.run({"x": 1})
        worker = finish_later(manual, 0.3, "held")
        started = time.monotonic()
        record = await job.status(wait=60_000)
        worker.join()
        assert record.status == "COMPLETED" and record.output == "held"
        assert time.monotonic() - started < 5
    transport = AsyncWithoutStatusSync()
    async with AsyncClient(api_key=emulator.api_key, url=emulator.url, transport=transport) as c:
        job = await c.endpoint(manual.endpoint_id).run({"x": 2})
        worker = finish_later(manual, 0.3, "polled")
        assert await job.output(timeout=30) == "polled"
        worker.join()
    reads = [line.rsplit(" ", 1)[0].split("/")[-2] for line in transport.sent[1:]]
    assert reads[0] == "status-sync" and set(reads[1:]) == {"status"}
