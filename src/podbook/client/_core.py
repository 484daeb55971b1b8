"""The I/O-free core shared by :class:`~podbook.client.Client` and ``AsyncClient``.

A resource method describes its request as a :class:`Call` (method, base, path, query,
JSON body, and how to turn the answer into models). :class:`ClientCore` turns a ``Call``
into an ``httpx.Request`` and an ``httpx.Response`` into the call's result or a typed
exception, :class:`RetryPolicy` decides whether and when to try again, and
:class:`Attempts` holds one call's tries. The sync and async faces only send requests and
sleep: their ``request`` and ``stream`` share one send loop each.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import httpx
from pydantic import ValidationError

from podbook import __version__
from podbook.api.ratelimit import parse_retry_after
from podbook.client.config import Settings
from podbook.errors import (
    APIError,
    ConnectionFailed,
    InvalidRequest,
    RateLimited,
    error_class_for_status,
)

if TYPE_CHECKING:
    from podbook.api.ratelimit import RateLimitState
    from podbook.api.validation import RequestRejected

__all__ = [
    "DEFAULT_TIMEOUT",
    "JSON_ACCEPT",
    "Attempts",
    "BodyParser",
    "Call",
    "ClientCore",
    "RetryPolicy",
    "call_result",
    "error_from_response",
]

T = TypeVar("T")
Base = Literal["rest", "queue", "v1"]

logger = logging.getLogger("podbook.client")

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"})
JSON_ACCEPT = "application/json, application/problem+json"
"""The default ``Accept``: answers are JSON, errors problem+json (a server that negotiates
strictly cannot send a documented error to a client that accepts only JSON)."""
_MAX_DETAIL = 300
_KEPT_HEADERS = frozenset(
    {"retry-after", "ratelimit", "ratelimit-policy", "content-type", "x-request-id"}
)
"""Headers of an error answer that its exception keeps (``x-request-id`` names the job of an
``/openai`` request on the local emulator)."""


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request to make and how to read its answer.

    ``parse`` turns the decoded JSON body into the result (``None`` for calls that answer
    204 or whose body does not matter). When it is a :class:`BodyParser`, the raw body bytes
    go to its ``from_json`` instead, skipping the intermediate dicts and lists.
    """

    method: str
    path: str
    base: Base = "rest"
    params: Mapping[str, str] | None = None
    json: Any = None
    parse: Callable[[Any], T] | None = None
    timeout: float | None = None
    """Read timeout (seconds) for a call that may be held longer than the client's default
    (``/runsync?wait=``, ``/stream`` long-polls); never shortens the client's timeout."""
    resendable: bool | None = None
    """Whether sending it twice has the same effect as once; None: decided by the method. A
    draining ``GET /stream`` is not (its reader retries it with what it knows)."""
    headers: Mapping[str, str] | None = None
    """Headers of this call over the client's (a stream's ``Accept``, ``Last-Event-ID``)."""
    read_timeout: float | None = None
    """Read timeout (seconds) in place of the client's, shorter or longer (a stream's idle
    bound); wins over :attr:`timeout`."""
    retry: RetryPolicy | None = None
    """This call's retry policy in place of the client's (a stream that resumes on its own
    tries once: ``RetryPolicy(max_attempts=1)``)."""

    @property
    def idempotent(self) -> bool:
        """Whether sending it twice has the same effect as once (safe to retry on 5xx)."""
        if self.resendable is not None:
            return self.resendable
        return self.method.upper() in IDEMPOTENT_METHODS


class BodyParser(Generic[T]):
    """A ``Call.parse`` that can also read the raw JSON bytes of a response.

    ``parser(body)`` takes decoded JSON (``None`` for an empty body); ``from_json(data)``
    takes the bytes and is what the client uses. Subclasses validate with pydantic-core's
    JSON parser; the default here decodes with :func:`json.loads` first.
    """

    def __call__(self, body: Any) -> T:
        """The result from decoded JSON."""
        raise NotImplementedError

    def from_json(self, data: bytes) -> T:
        """The result from the raw body; ``ValueError`` when it is not JSON."""
        return self(json.loads(data))


@dataclass(frozen=True)
class RetryPolicy:
    """When to try a request again.

    - 429: any method (the service did not act on it), after ``Retry-After``;
    - 5xx and dropped connections: idempotent methods only (never a POST whose fate is
      unknown); a POST is retried only when the connection was never established;
    - at most ``max_attempts`` tries in all and ``max_wait`` seconds of sleeping in all;
      a wait that would exceed the budget is not started: the error is raised at once.
    """

    max_attempts: int = 4
    max_wait: float = 30.0
    backoff: float = 0.25
    max_backoff: float = 4.0

    def backoff_delay(self, attempt: int) -> float:
        """Exponential backoff after the ``attempt``-th try (1-based)."""
        return min(self.max_backoff, self.backoff * 2 ** (attempt - 1))

    def _within_budget(self, attempt: int, waited: float, delay: float) -> float | None:
        if attempt >= self.max_attempts or waited + delay > self.max_wait:
            return None
        return max(0.0, delay)

    def delay_after_response(
        self, call: Call[Any], response: httpx.Response, attempt: int, waited: float
    ) -> float | None:
        """Seconds to wait before retrying after ``response``, or None to not retry."""
        status = response.status_code
        if not (status == 429 or status >= 500 and call.idempotent):
            return None
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        delay = retry_after if retry_after is not None else self.backoff_delay(attempt)
        return self._within_budget(attempt, waited, delay)

    def delay_after_error(
        self, call: Call[Any], error: httpx.TransportError, attempt: int, waited: float
    ) -> float | None:
        """Seconds to wait before retrying after a transport error, or None."""
        never_sent = isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
        if not (call.idempotent or never_sent):
            return None
        return self._within_budget(attempt, waited, self.backoff_delay(attempt))


def _scrub(text: str, secret: str | None) -> str:
    if secret and secret in text:
        return text.replace(secret, "**********")
    return text


def _compact(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_DETAIL else line[: _MAX_DETAIL - 1] + "…"


def _problem_fields(response: httpx.Response) -> tuple[str | None, str, list[str]]:
    """(title, detail, errors) from a problem+json, ``{"error": ...}`` or other body."""
    text = response.text
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        errors = body.get("errors")
        lines = [str(e) for e in errors] if isinstance(errors, list) else []
        title = body.get("title") if isinstance(body.get("title"), str) else None
        if "detail" in body or "title" in body:
            return title, str(body.get("detail") or ""), lines
        if "error" in body:
            error = body["error"]
            if isinstance(error, dict) and "message" in error:  # OpenAI's error shape
                from podbook.api.openai import openai_error_line

                kind, detail = openai_error_line(error)
                return title or kind, detail, lines
            detail = error if isinstance(error, str) else json.dumps(error)
            return title, detail, lines
        if "message" in body:
            return title, str(body["message"]), lines
    if not text.strip():
        return None, "the response had no body", []
    content_type = response.headers.get("Content-Type", "").split(";")[0].strip()
    if content_type == "text/html" or text.lstrip().startswith("<"):
        return None, f"the service answered with an HTML page ({len(text)} bytes)", []
    return None, _compact(text), []


def error_from_response(response: httpx.Response, secret: str | None = None) -> APIError:
    """The typed exception for an error ``response`` (problem+json or not).

    ``secret`` (the API key) is scrubbed from every text copied out of the response.
    """
    status = response.status_code
    title, detail, lines = _problem_fields(response)
    title = title or response.reason_phrase or "Error"
    cls = error_class_for_status(status)
    request = response.request
    kwargs: dict[str, Any] = {
        "method": request.method,
        "url": str(request.url),
        "headers": {k: v for k, v in response.headers.items() if k.lower() in _KEPT_HEADERS},
    }
    if cls is RateLimited:
        kwargs["retry_after"] = parse_retry_after(response.headers.get("Retry-After"))
    return cls(
        status,
        _scrub(title, secret),
        _scrub(detail, secret),
        [_scrub(line, secret) for line in lines],
        **kwargs,
    )


def _unexpected(response: httpx.Response, reason: str) -> APIError:
    request = response.request
    return APIError(
        response.status_code,
        "Unexpected response",
        f"{reason}; the service may be newer than this podbook, or not a RunPod-style API",
        method=request.method,
        url=str(request.url),
    )


def invalid_request_from(exc: RequestRejected) -> InvalidRequest:
    """Turn ``podbook.api``'s ``RequestRejected`` into the client's :class:`InvalidRequest`."""
    return InvalidRequest(exc.detail, exc.errors, status=exc.status, title=exc.title)


@dataclass
class ClientCore:
    """State and pure logic shared by both faces: settings, retry policy, latest quota.

    Per-request work is kept small (the client should add little over bare httpx): base
    URLs and headers are computed once, and the ``RateLimit`` headers are kept as received
    and parsed only when :attr:`rate_limit` is read.
    """

    settings: Settings
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    _rate_limit: RateLimitState | None = field(default=None, init=False, repr=False)
    _pending_rate_limit: tuple[str | None, str | None] | None = field(
        default=None, init=False, repr=False
    )
    _bases: dict[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._bases = {
            "rest": self.settings.rest_url,
            "queue": self.settings.queue_url,
            "v1": self.settings.v1_url,
        }

    @property
    def _secret(self) -> str | None:
        key = self.settings.api_key
        return key.get_secret_value() if key is not None else None

    @property
    def rate_limit(self) -> RateLimitState | None:
        """The quota announced by the latest response that carried ``RateLimit`` headers
        (readable ones; unreadable headers leave the previous quota), or None."""
        pending = self._pending_rate_limit
        if pending is not None:
            self._pending_rate_limit = None
            parsed = _parse_rate_limit(*pending)
            if parsed is not None:
                self._rate_limit = parsed
        return self._rate_limit

    @rate_limit.setter
    def rate_limit(self, value: RateLimitState | None) -> None:
        self._pending_rate_limit = None
        self._rate_limit = value

    def default_headers(self) -> dict[str, str]:
        """Headers sent with every request (the key travels only here)."""
        headers = {"Accept": JSON_ACCEPT, "User-Agent": f"podbook/{__version__}"}
        if self._secret:
            headers["Authorization"] = f"Bearer {self._secret}"
        return headers

    def base_url(self, base: Base) -> str:
        """The base URL of one of the three interfaces."""
        return self._bases[base]

    def build_request(
        self, http: httpx.Client | httpx.AsyncClient, call: Call[Any]
    ) -> httpx.Request:
        """The ``httpx.Request`` for ``call`` (auth and user agent come from ``http``)."""
        extra: dict[str, Any] = {}
        read = call.read_timeout
        if read is None and call.timeout is not None and http.timeout.read is not None:
            read = max(http.timeout.read, call.timeout)
        if read is not None:
            base = http.timeout
            extra["timeout"] = httpx.Timeout(
                base.connect, read=read, write=base.write, pool=base.pool
            )
        if call.headers:
            extra["headers"] = call.headers
        return http.build_request(
            call.method,
            self._bases[call.base] + call.path,
            params=dict(call.params) if call.params else None,
            json=call.json,
            **extra,
        )

    def attempts(self, http: httpx.Client | httpx.AsyncClient, call: Call[Any]) -> Attempts:
        """The tries of ``call`` over ``http``, under its retry policy (else the client's)."""
        return Attempts(self, http, call, call.retry or self.retry)

    def record_rate_limit(self, response: httpx.Response) -> None:
        """Keep ``response``'s ``RateLimit`` headers, if any, for :attr:`rate_limit`.

        Only the raw values are kept here (parsing them costs about 20 µs, which every
        response would pay); :attr:`rate_limit` parses the latest on demand.
        """
        ratelimit = policy = None
        for name, value in response.headers.raw:
            if len(name) >= 9 and name[:9].lower() == b"ratelimit":
                lowered = name.lower()
                if lowered == b"ratelimit":
                    ratelimit = value.decode("latin-1")
                elif lowered == b"ratelimit-policy":
                    policy = value.decode("latin-1")
        if ratelimit is not None or policy is not None:
            self._pending_rate_limit = (ratelimit, policy)

    def finish(self, call: Call[T], response: httpx.Response) -> T:
        """The result of ``call`` from its final ``response``, or raise its typed error."""
        status = response.status_code
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("%s %s -> %s", response.request.method, response.request.url, status)
        if status >= 400:
            raise error_from_response(response, self._secret)
        return call_result(call, response)

    @contextlib.contextmanager
    def reading(self, call: Call[Any]) -> Iterator[None]:
        """Around the reading of ``call``'s streamed answer: a transport or stream error
        raised inside is raised as the call's :class:`~podbook.errors.ConnectionFailed`
        (caused by it)."""
        try:
            yield
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise self.connection_failed(call, exc) from exc

    def connection_failed(
        self, call: Call[Any], exc: httpx.TransportError | httpx.StreamError
    ) -> ConnectionFailed:
        """The error for a request that never got an answer, or whose answer broke off."""
        reason = _scrub(str(exc) or type(exc).__name__, self._secret)
        if self.settings.local:
            hint = "the local emulator may have stopped; create a new Client() to start it again"
        elif isinstance(exc, httpx.TimeoutException):
            hint = "the service is slow or unreachable; retry, or raise the client's timeout="
        else:
            hint = "check the URL (PODBOOK_* variables) and your network"
        if call.base == "queue" and not call.idempotent and not isinstance(exc, httpx.ConnectError):
            check = "check (e.g. the job's status) before repeating it"
            if call.path.endswith(("/run", "/runsync")):  # the job's id was in the lost answer
                check = "see the endpoint's health() job counts before submitting it again"
            hint = (
                f"the request may have been carried out, so it was not sent again: {check}; {hint}"
            )
        return ConnectionFailed(call.method, self.base_url(call.base) + call.path, reason, hint)


@dataclass(slots=True, eq=False, repr=False)
class Attempts:
    """The tries of one call, without I/O: the request of each, and after each outcome
    whether (and how long) to wait before the next. The one send loop of each face::

        tries = core.attempts(http, call)
        while True:
            try:
                response = send(tries.request())
            except httpx.TransportError as exc:
                delay = tries.after_error(exc)  # raises ConnectionFailed when it is over
            else:
                delay = tries.after_response(response)
                if delay is None:
                    return response  # the final answer, whatever its status
                close(response)
            sleep(delay)
    """

    core: ClientCore
    http: httpx.Client | httpx.AsyncClient
    call: Call[Any]
    policy: RetryPolicy
    attempt: int = field(default=0, init=False)
    waited: float = field(default=0.0, init=False)

    def request(self) -> httpx.Request:
        """The request of the next try."""
        self.attempt += 1
        return self.core.build_request(self.http, self.call)

    def after_error(self, exc: httpx.TransportError) -> float:
        """Seconds to wait before the next try after ``exc``; raises the call's
        :class:`~podbook.errors.ConnectionFailed` (caused by ``exc``) when it may not retry."""
        delay = self.policy.delay_after_error(self.call, exc, self.attempt, self.waited)
        if delay is None:
            raise self.core.connection_failed(self.call, exc) from exc
        self.waited += delay
        return delay

    def after_response(self, response: httpx.Response) -> float | None:
        """Seconds to wait before the next try after ``response`` (a 429, a 5xx worth
        another try), or None when it is the call's answer."""
        self.core.record_rate_limit(response)
        delay = self.policy.delay_after_response(self.call, response, self.attempt, self.waited)
        if delay is not None:
            self.waited += delay
        return delay


def call_result(call: Call[T], response: httpx.Response) -> T:
    """The result of ``call`` from a successful ``response`` (its body read), through
    ``call.parse``; an unreadable body raises an "Unexpected response" :class:`APIError`."""
    status = response.status_code
    parse = call.parse
    if parse is None:
        return None  # type: ignore[return-value]
    content = response.content
    try:
        if status == 204 or not content:
            return parse(None)
        if isinstance(parse, BodyParser):
            return parse.from_json(content)
        try:
            body = response.json()
        except (ValueError, UnicodeDecodeError):
            raise _unexpected(response, "the body is not JSON") from None
        return parse(body)
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors()):
            raise _unexpected(response, "the body is not JSON") from None
        raise _unexpected(response, f"cannot read the answer ({_first_line(exc)})") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise _unexpected(response, "the body is not JSON") from None
    except (KeyError, TypeError) as exc:
        raise _unexpected(response, f"cannot read the answer ({_first_line(exc)})") from None


def _first_line(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def parse_rate_limit_headers(headers: httpx.Headers | Mapping[str, str]) -> RateLimitState | None:
    """The quota in ``RateLimit`` / ``RateLimit-Policy``, or None when absent or unreadable."""
    if not isinstance(headers, httpx.Headers):  # a plain mapping may hold non-ASCII text
        lowered = {str(name).lower(): value for name, value in headers.items()}
        return _parse_rate_limit(lowered.get("ratelimit"), lowered.get("ratelimit-policy"))
    return _parse_rate_limit(headers.get("RateLimit"), headers.get("RateLimit-Policy"))


def _parse_rate_limit(ratelimit: str | None, policy: str | None) -> RateLimitState | None:
    if ratelimit is None and policy is None:
        return None
    from podbook.api.ratelimit import parse_rate_limit_headers as parse

    try:
        return parse(ratelimit, policy)
    except ValueError:
        logger.debug("ignoring unreadable RateLimit headers")
        return None
