"""Per-operation queue limits (per account, per endpoint): a rate per 10 s and a number of
requests at once; beyond either, 429 ``{"error"}`` with ``Retry-After``. The emulator runs
with small limits (``--queue-rate-limit run=3``, ``runsync=100/1``, ``status=100/1``)."""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

import pytest
from test_queue_helpers import RawWorker, create_endpoint, queue_emulator, worker_key


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """An emulator with tiny limits on /run and /runsync."""
    return queue_emulator(
        start_emulator,
        *("--queue-rate-limit", "run=3", "--queue-rate-limit", "runsync=100/1"),
        *("--queue-rate-limit", "status=100/1"),
    )


def test_rate_per_10_seconds(emu: Any) -> None:
    with emu.http() as http:
        endpoint = create_endpoint(http, "rl-" + secrets.token_hex(3))
        for _ in range(3):
            assert http.post(f"/v2/{endpoint}/run", json={"input": {}}).status_code == 200
        refused = http.post(f"/v2/{endpoint}/run", json={"input": {}})
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["Retry-After"]) <= 10
        assert (
            "/run" in refused.json()["error"] and "3 requests per 10 s" in refused.json()["error"]
        )
        # Other operations and other endpoints have their own counters; so has account B.
        assert http.get(f"/v2/{endpoint}/health").status_code == 200
        other = create_endpoint(http, "rl-" + secrets.token_hex(3))
        assert http.post(f"/v2/{other}/run", json={"input": {}}).status_code == 200
    with emu.http(emu.other_key) as http_b:
        create_endpoint(http_b, endpoint)
        assert http_b.post(f"/v2/{endpoint}/run", json={"input": {}}).status_code == 200


def test_concurrent_requests(emu: Any) -> None:
    with emu.http() as http:
        endpoint = create_endpoint(http, "rl-" + secrets.token_hex(3))
        held: dict[str, Any] = {}
        # No worker: this runsync holds for its whole wait (1 s).
        thread = threading.Thread(
            target=lambda: held.update(
                r=http.post(f"/v2/{endpoint}/runsync?wait=1000", json={"input": {}})
            )
        )
        thread.start()
        time.sleep(0.3)
        with emu.http() as second:
            refused = second.post(f"/v2/{endpoint}/runsync?wait=1000", json={"input": {}})
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
        assert "at once" in refused.json()["error"]
        thread.join()
        assert held["r"].status_code == 200
        # The slot is free again once the first request has answered.
        assert http.post(f"/v2/{endpoint}/runsync?wait=1000", json={"input": {}}).status_code == 200


def test_rate_scales_with_connected_workers(emu: Any) -> None:
    # The seed: the effective limit is the higher of the base (here 3 /run per 10 s) and
    # running workers x the per-worker rate (a tenth of the seed's base: 100 for /run).
    with emu.http() as http:
        endpoint = create_endpoint(http, "rl-" + secrets.token_hex(3))
        worker = RawWorker(emu.url, endpoint, worker_key(http, endpoint))
        try:
            assert worker.ping().status_code == 200
            codes = [
                http.post(f"/v2/{endpoint}/run", json={"input": {}}).status_code for _ in range(6)
            ]
        finally:
            worker.close()
    assert codes == [200] * 6


def test_status_sync_is_counted_with_status(emu: Any) -> None:
    # The seed's table names no status-sync: it shares /status's limits (here 1 at once).
    with emu.http() as http:
        endpoint = create_endpoint(http, "rl-" + secrets.token_hex(3))
        job_id = http.post(f"/v2/{endpoint}/run", json={"input": {}}).json()["id"]
        held: dict[str, Any] = {}
        # No worker: this read holds for its whole wait (1 s).
        path = f"/v2/{endpoint}/status-sync/{job_id}?wait=1000"
        thread = threading.Thread(target=lambda: held.update(r=http.get(path)))
        thread.start()
        time.sleep(0.3)
        with emu.http() as second:
            refused = second.get(f"/v2/{endpoint}/status/{job_id}")
            refused_sync = second.get(path)
        for response in (refused, refused_sync):
            assert response.status_code == 429 and response.headers["Retry-After"] == "1"
            assert "/status" in response.json()["error"]
        thread.join()
        assert held["r"].status_code == 200 and held["r"].json()["status"] == "IN_QUEUE"
        assert http.get(f"/v2/{endpoint}/status/{job_id}").status_code == 200
