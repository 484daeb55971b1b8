"""Load-balancing endpoints, what passes through: a real FastAPI app served by a
``podbook worker --lb`` process behind ``{emulator}/lb/{endpoint_id}/...``.

Every method, the path and query, headers both ways (hop-by-hop and the caller's key
dropped), status codes, a response streamed chunk by chunk as the app writes it, and a
request body streamed to the app as the caller sends it; then the errors of the route.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from lb_helpers import LB_FLAGS, AppWorker, create_lb_endpoint


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """An emulator with quick health polls and a 2 s request timeout."""
    return start_emulator(extra_args=LB_FLAGS)


@pytest.fixture(scope="module")
def lb(emu: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A load-balancing endpoint served by one worker process; its id."""
    with emu.http() as http:
        endpoint_id = create_lb_endpoint(http)
    worker = AppWorker(emu, endpoint_id, tmp_path_factory.mktemp("lb-workers"), name="solo")
    worker.wait_registered()
    yield endpoint_id
    worker.stop()


@pytest.fixture
def caller(emu: Any, lb: str) -> Iterator[httpx.Client]:
    """A raw client whose base URL is the endpoint's load-balancer URL (with the API key)."""
    with httpx.Client(base_url=f"{emu.url}/lb/{lb}", headers=emu.headers(), timeout=20) as client:
        yield client


def test_get_passes_path_query_and_headers_both_ways(emu: Any, caller: httpx.Client) -> None:
    request = caller.build_request(
        "GET", "/echo/a/b%20c", params={"q": "1", "r": "x y"}, headers={"X-Custom": "v1"}
    )
    del request.headers["accept-encoding"]  # so that one added on the way would show
    response = caller.send(request)
    assert response.status_code == 200
    assert response.headers["x-app"] == "echo"
    assert response.headers["x-worker"] == "solo"
    assert response.headers["set-cookie"] == "a=1"
    seen = response.json()
    assert seen["method"] == "GET"
    assert seen["raw_path"] == "/echo/a/b%20c"  # as sent, still encoded
    assert seen["path"] == "/echo/a/b c"
    assert seen["query"] == "q=1&r=x+y"
    headers = seen["headers"]
    assert headers["x-custom"] == "v1"
    assert "authorization" not in headers  # the caller's API key never reaches a worker
    assert headers["x-forwarded-host"] == emu.url.removeprefix("http://")
    assert headers["x-forwarded-proto"] == "http"
    assert headers["x-forwarded-for"] == "127.0.0.1"
    assert headers["host"].startswith("127.0.0.1:")  # the worker's own address
    assert "accept-encoding" not in headers  # nothing added on the way


def test_post_passes_body_and_status(caller: httpx.Client) -> None:
    response = caller.post("/echo/items", json={"name": "x"}, headers={"Connection": "close"})
    assert response.status_code == 201
    seen = response.json()
    assert seen["method"] == "POST"
    assert seen["body"] == '{"name":"x"}'
    assert seen["headers"]["content-type"] == "application/json"
    assert seen["headers"]["connection"] == "keep-alive"  # the caller's hop-by-hop one dropped


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "OPTIONS"])
def test_every_method_passes(caller: httpx.Client, method: str) -> None:
    response = caller.request(method, "/echo/m", content=b"payload")
    assert response.status_code == 200, response.text
    assert response.json()["method"] == method
    assert response.json()["body"] == "payload"


def test_head_keeps_headers_without_body(caller: httpx.Client) -> None:
    response = caller.head("/echo/h")
    assert response.status_code == 200
    assert response.headers["x-app"] == "head"
    assert response.content == b""


def test_app_status_codes_pass_unchanged(caller: httpx.Client) -> None:
    missing = caller.get("/no/such/route")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "Not Found"}  # the app's own 404, not the emulator's
    not_allowed = caller.post("/stream")
    assert not_allowed.status_code == 405


def test_compressed_answer_passes_byte_for_byte(caller: httpx.Client) -> None:
    """The app's own gzip body reaches the caller as sent (not decoded on the way)."""
    from lb_sample_app import GZIPPED_TEXT

    with caller.stream("GET", "/gzip") as response:
        raw = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == "gzip"
        assert int(response.headers["content-length"]) == len(raw)
    assert gzip.decompress(raw).decode() == GZIPPED_TEXT


def test_streamed_response_arrives_as_written(caller: httpx.Client) -> None:
    """Each line arrives when the app writes it (0.3 s apart), not all at the end."""
    arrivals: list[tuple[float, float]] = []
    with caller.stream("GET", "/stream", params={"n": 5, "delay": 0.3}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        for line in response.iter_lines():
            if line:
                written = float(line.split()[1])
                arrivals.append((written, time.time()))
    assert len(arrivals) == 5
    lags = [arrived - written for written, arrived in arrivals]
    assert max(lags) < 0.25, lags  # each line reached the caller right after it was written
    assert arrivals[-1][1] - arrivals[0][1] > 0.9  # spread over the app's own pace


def test_streamed_request_body_reaches_the_app_as_sent(caller: httpx.Client) -> None:
    """The app reads the first piece of a chunked upload before the caller sent the last."""
    sent: list[float] = []

    def pieces() -> Iterator[bytes]:
        for _ in range(4):
            sent.append(time.time())
            yield b"x" * 1000
            time.sleep(0.3)

    response = caller.post("/upload", content=pieces())
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["total"] == 4000
    first_seen = body["pieces"][0][1]
    assert first_seen < sent[-1], (first_seen, sent)  # streamed, not buffered whole


def test_large_body_is_not_limited_by_the_emulator(caller: httpx.Client) -> None:
    payload = b"y" * (3 * 1024 * 1024)  # over the emulator's own 1 MB REST limit
    response = caller.post("/upload", content=payload)
    assert response.status_code == 200
    assert response.json()["total"] == len(payload)


def test_endpoint_record_names_its_urls(emu: Any, lb: str, client: Any) -> None:
    with emu.http() as http:
        record = http.get(f"/v2/serverless/{lb}").json()
    assert record["type"] == "LOAD_BALANCER"
    assert record["requestUrls"] == {
        "base": f"{emu.url}/lb/{lb}",
        "health": f"{emu.url}/lb/{lb}/ping",
    }
    assert record["scaling"] == {"type": "REQUEST_COUNT", "requestCount": 4}


def test_client_lb_url_reaches_the_worker(emu: Any, lb: str) -> None:
    from podbook import Client

    with Client(api_key=emu.api_key, url=emu.url) as client:
        url = client.endpoint(lb).lb_url
    assert url == f"{emu.url}/lb/{lb}"
    response = httpx.get(f"{url}/ping", headers=emu.headers(), timeout=10)
    assert response.status_code == 200 and response.json() == {"status": "healthy"}


# -- errors of the route -----------------------------------------------------------------


def test_without_a_valid_key_401(emu: Any, lb: str) -> None:
    assert httpx.get(f"{emu.url}/lb/{lb}/ping").status_code == 401
    refused = httpx.get(f"{emu.url}/lb/{lb}/ping", headers={"Authorization": "Bearer nope"})
    assert refused.status_code == 401 and "error" in refused.json()


def test_read_only_key_may_only_read(emu: Any, lb: str) -> None:
    headers = emu.headers(emu.readonly_key)
    assert httpx.get(f"{emu.url}/lb/{lb}/ping", headers=headers).status_code == 200
    refused = httpx.post(f"{emu.url}/lb/{lb}/echo/x", headers=headers)
    assert refused.status_code == 403 and "read-only" in refused.json()["error"]


def test_unknown_endpoint_404_also_for_another_account(emu: Any, lb: str) -> None:
    assert httpx.get(f"{emu.url}/lb/no-such-ep/ping", headers=emu.headers()).status_code == 404
    other = httpx.get(f"{emu.url}/lb/{lb}/ping", headers=emu.headers(emu.other_key))
    assert other.status_code == 404


def test_queue_endpoint_is_refused_clearly(emu: Any) -> None:
    response = httpx.post(f"{emu.url}/lb/echo/anything", headers=emu.headers())
    assert response.status_code == 400
    assert "QUEUE endpoint" in response.json()["error"]
    assert "/v2/echo/run" in response.json()["error"]


def test_no_worker_ready_is_400(emu: Any) -> None:
    with emu.http() as http:
        endpoint_id = create_lb_endpoint(http, "idle")
    started = time.monotonic()
    response = httpx.get(f"{emu.url}/lb/{endpoint_id}/ping", headers=emu.headers())
    assert response.status_code == 400
    assert "no worker ready (no worker is registered)" in response.json()["error"]
    assert f"podbook worker --lb app.py:app --endpoint {endpoint_id}" in response.json()["error"]
    assert time.monotonic() - started < 1.0  # nothing to wait for: answered at once


def test_request_past_the_timeout_is_524(caller: httpx.Client) -> None:
    response = caller.get("/slow", params={"seconds": 4})  # the emulator's timeout: 2 s
    assert response.status_code == 524
    assert "did not answer within 2 s" in response.json()["error"]


def test_timeout_does_not_cut_a_stream_that_has_begun(caller: httpx.Client) -> None:
    """Only the answer's head is timed: a stream that began goes on past the timeout."""
    with caller.stream("GET", "/busy", params={"seconds": 2.5}) as response:
        assert response.status_code == 200
        assert "".join(response.iter_text()) == "started\ndone\n"


@pytest.mark.parametrize(("method", "operation"), [("POST", "run"), ("GET", "health")])
def test_queue_operations_on_a_load_balancing_endpoint_400(
    emu: Any, lb: str, method: str, operation: str
) -> None:
    response = httpx.request(
        method, f"{emu.url}/v2/{lb}/{operation}", json={"input": {}}, headers=emu.headers()
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert "LOAD_BALANCER endpoint: it has no queue" in error
    assert f"{emu.url}/lb/{lb}/..." in error
