"""Error texts users see: one readable line plus the listed errors, never the key.

These build responses the way the service answers them (problem+json, the queue's
``{"error": ...}``, HTML from a proxy) and check what ``error_from_response`` makes of them;
the same paths are exercised against the real emulator in ``test_live_errors.py``.
"""

from __future__ import annotations

import pickle

import httpx
import pytest

from podbook.api.ratelimit import parse_retry_after
from podbook.client._core import error_from_response
from podbook.errors import (
    APIError,
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    RateLimited,
    ServerError,
    Unauthorized,
    ValidationFailed,
    WaitTimeout,
)

URL = "http://127.0.0.1:8765/v2/pods"
SECRET = "pbk_supersecretvalue_123"


def answer(status: int, body: bytes | str = b"", content_type: str = "", **headers: str):
    request = httpx.Request("POST", URL, headers={"Authorization": f"Bearer {SECRET}"})
    all_headers = {**headers}
    if content_type:
        all_headers["Content-Type"] = content_type
    content = body.encode() if isinstance(body, str) else body
    return httpx.Response(status, content=content, headers=all_headers, request=request)


PROBLEM = "application/problem+json"


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequest),
        (401, Unauthorized),
        (403, Forbidden),
        (404, NotFound),
        (409, Conflict),
        (422, ValidationFailed),
        (429, RateLimited),
        (500, ServerError),
        (503, ServerError),
    ],
)
def test_status_maps_to_class(status: int, cls: type[APIError]) -> None:
    body = f'{{"title": "T", "status": {status}, "detail": "D"}}'
    err = error_from_response(answer(status, body, PROBLEM), SECRET)
    assert type(err) is cls
    assert err.status == status
    assert str(err) == f"{status} T: D"
    assert (err.method, err.url) == ("POST", URL)


def test_problem_with_errors_lists_each_line() -> None:
    body = (
        '{"title": "Unprocessable Entity", "status": 422, "detail": "2 problems",'
        ' "errors": ["$.gpu.count: must be >= 1", "$.bogus: unknown property"]}'
    )
    err = error_from_response(answer(422, body, PROBLEM), SECRET)
    assert isinstance(err, ValidationFailed)
    assert err.errors == ["$.gpu.count: must be >= 1", "$.bogus: unknown property"]
    assert str(err) == (
        "422 Unprocessable Entity: 2 problems\n"
        "  - $.gpu.count: must be >= 1\n"
        "  - $.bogus: unknown property"
    )


def test_rate_limited_carries_retry_after() -> None:
    body = '{"title": "Too Many Requests", "status": 429, "detail": "minute window exhausted"}'
    err = error_from_response(answer(429, body, PROBLEM, **{"Retry-After": "12"}), SECRET)
    assert isinstance(err, RateLimited)
    assert err.retry_after == 12
    assert str(err) == "429 Too Many Requests: minute window exhausted (retry after 12 s)"


def test_queue_error_body() -> None:
    body = '{"error": "wait is invalid; must be between 1000 and 300000"}'
    err = error_from_response(answer(400, body, "application/json"), SECRET)
    assert isinstance(err, BadRequest)
    assert str(err) == "400 Bad Request: wait is invalid; must be between 1000 and 300000"


def test_html_body_from_a_proxy() -> None:
    err = error_from_response(answer(502, "<html><body>Bad gateway</body></html>", "text/html"))
    assert isinstance(err, ServerError) and err.status == 502
    assert str(err).startswith("502 Bad Gateway: the service answered with an HTML page")


def test_plain_text_and_empty_bodies() -> None:
    text = error_from_response(answer(404, "no such thing\n", "text/plain"))
    assert str(text) == "404 Not Found: no such thing"
    empty = error_from_response(answer(403))
    assert str(empty) == "403 Forbidden: the response had no body"


def test_key_echoed_by_a_server_is_scrubbed() -> None:
    body = f'{{"title": "Unauthorized", "status": 401, "detail": "unknown key {SECRET}"}}'
    err = error_from_response(answer(401, body, PROBLEM), SECRET)
    for text in (str(err), repr(err), err.detail):
        assert SECRET not in text
    assert "**********" in str(err)


def test_errors_survive_pickling() -> None:
    body = '{"title": "Too Many Requests", "status": 429, "detail": "d", "errors": ["x"]}'
    err = error_from_response(answer(429, body, PROBLEM, **{"Retry-After": "3"}))
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is RateLimited
    assert (copy.status, copy.errors, copy.retry_after, str(copy)) == (
        429,
        ["x"],
        3,
        str(err),
    )


def test_retry_after_forms() -> None:
    assert parse_retry_after("7") == 7
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0


def test_wait_timeout_names_the_last_status() -> None:
    err = WaitTimeout("pod abc", "RUNNING", "STARTING", 5)
    assert isinstance(err, TimeoutError)
    assert str(err) == (
        "pod abc did not reach RUNNING within 5 s (last status STARTING); "
        "wait longer with timeout=..."
    )
