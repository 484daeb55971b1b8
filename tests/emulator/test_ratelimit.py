"""Rate-limit headers on every authenticated answer, and the 429 path with a tiny quota."""

from __future__ import annotations

import httpx
from emu_helpers import problem

from podbook.api.ratelimit import parse_rate_limit_headers


def _state(response: httpx.Response):
    return parse_rate_limit_headers(
        response.headers["RateLimit"], response.headers["RateLimit-Policy"]
    )


def test_headers_on_every_authenticated_response(emulator):
    with emulator.http() as http:
        for response in (
            http.get("/v2/pods"),
            http.get("/v2/pods/missing-pod"),
            http.post("/v2/pods", json={"bogus": 1}),
        ):
            assert "RateLimit" in response.headers and "RateLimit-Policy" in response.headers
            state = _state(response)
            names = {w.name for w in state.windows}
            assert names == {"minute", "hour", "day"}
            minute = state.get("minute")
            assert minute.window == 60 and minute.quota >= minute.remaining >= 0
            assert 1 <= minute.reset <= 60
    assert "RateLimit" not in httpx.get(f"{emulator.url}/healthz").headers


def test_headers_on_unknown_routes_and_methods_for_a_known_key(emulator):
    with emulator.http(emulator.other_key) as http:
        before = _state(http.get("/v2/pods")).get("hour").remaining
        for response in (http.get("/v2/no-such-thing"), http.put("/v2/pods")):
            assert response.status_code in (404, 405)
            assert _state(response).get("hour").remaining == before  # shown, not counted
    anonymous = httpx.get(f"{emulator.url}/v2/no-such-thing")
    assert anonymous.status_code == 404 and "RateLimit" not in anonymous.headers


def test_remaining_counts_down(emulator):
    with emulator.http(emulator.other_key) as http:
        first = _state(http.get("/v2/pods")).get("hour").remaining
        second = _state(http.get("/v2/pods")).get("hour").remaining
    assert second == first - 1


def test_429_with_retry_after_and_window_named(start_emulator):
    emu = start_emulator(extra_args=("--rate-limit", "minute=3", "--rate-limit", "hour=100"))
    with emu.http() as http:
        statuses = [http.get("/v2/pods").status_code for _ in range(3)]
        assert statuses == [200, 200, 200]
        limited = http.get("/v2/pods")
        body = problem(limited, 429)
        assert "minute" in body["detail"]
        retry_after = int(limited.headers["Retry-After"])
        assert 1 <= retry_after <= 60
        state = _state(limited)
        assert state.get("minute").remaining == 0 and state.get("minute").quota == 3
        assert state.get("hour").quota == 100
    # another account has its own quota
    with emu.http(emu.other_key) as other:
        assert other.get("/v2/pods").status_code == 200
    emu.stop()
