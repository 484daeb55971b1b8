"""The recorded answers of the reference document, replayed through the client (respx).

Every example answer of ``reference/runpod-rest-v2.openapi.json`` (every operation, every
status, every named example; see ``reference_examples.py``) is served by respx to the client
call of its operation (``STEPS``), with the headers the document gives examples for:

- a 2xx example is read into the typed models, and every field of the example lands in a
  declared field of the model with the example's value (nothing is read only as an unknown
  extra, nothing is changed on the way);
- an SSE example (pod and worker logs) yields its log lines;
- an error example raises the exception of ``podbook.errors`` for its status, whose message
  is one line with the example's title and detail; a 429 carries its ``Retry-After``.

No process and no network: this runs on every test run in well under a second per answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
import pytest
import respx
from prism import mock_client
from reference_examples import RecordedAnswer, recorded_answers
from reference_steps import STEPS, StandInIds, reference_operations

from podbook.api.ratelimit import RateLimitState
from podbook.errors import RateLimited, error_class_for_status

OPERATIONS = reference_operations()
ANSWERS = recorded_answers()
BASE = "http://127.0.0.1:9"  # never contacted: respx answers every request


@dataclass
class Replay:
    """What the client made of one recorded answer."""

    result: Any
    error: BaseException | None
    sent: list[httpx.Request]
    rate_limit: RateLimitState | None


def replay(answer: RecordedAnswer) -> Replay:
    """Run the step of ``answer``'s operation with respx serving ``answer``."""
    method, template = OPERATIONS[answer.operation]
    pattern = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"
    router = respx.Router(base_url=BASE, assert_all_called=False)
    route = router.route(method=method, path__regex=pattern).mock(return_value=answer.response())
    result: Any = None
    error: BaseException | None = None
    with mock_client(BASE, httpx.MockTransport(router.handler)) as client:
        try:
            result = STEPS[answer.operation](client, StandInIds())
        except Exception as exc:  # noqa: BLE001 - the error examples are meant to raise
            error = exc
        return Replay(result, error, [call.request for call in route.calls], client.rate_limit)


def declared(value: Any) -> Any:
    """``value`` as wire JSON with only the fields its models declare (by alias; extras the
    model merely kept are left out, as are fields the answer did not set)."""
    if isinstance(value, list):
        return [declared(item) for item in value]
    if isinstance(value, dict):
        return {key: declared(item) for key, item in value.items()}
    fields = getattr(type(value), "__pydantic_fields__", None)
    if fields is None:
        return value
    set_fields = getattr(value, "model_fields_set", None)
    return {
        info.alias or name: declared(getattr(value, name))
        for name, info in fields.items()
        if set_fields is None or name in set_fields
    }


def differences(read: Any, recorded: Any, path: str = "$") -> list[str]:
    """Where what the client read differs from the recorded answer (empty: the same)."""
    if isinstance(recorded, dict) and isinstance(read, dict):
        lines = [
            f"{path}.{key}: not read into a declared field" for key in recorded if key not in read
        ]
        for key, value in recorded.items():
            if key in read:
                lines += differences(read[key], value, f"{path}.{key}")
        return lines
    if isinstance(recorded, list) and isinstance(read, list):
        if len(recorded) != len(read):
            return [f"{path}: {len(read)} items read, {len(recorded)} recorded"]
        return [
            line
            for i, (mine, theirs) in enumerate(zip(read, recorded, strict=True))
            for line in differences(mine, theirs, f"{path}[{i}]")
        ]
    if isinstance(read, datetime) and isinstance(recorded, str):
        recorded = datetime.fromisoformat(recorded.replace("Z", "+00:00"))
    return [] if read == recorded else [f"{path}: read {read!r}, recorded {recorded!r}"]


def recorded_body(answer: RecordedAnswer, result: Any) -> Any:
    """The part of the example the step's result stands for: a list call returns the list
    inside its wrapper (``{"pods": [...]}`` → the pods)."""
    if isinstance(result, list) and isinstance(answer.value, dict):
        lists = [value for value in answer.value.values() if isinstance(value, list)]
        assert len(lists) == 1, f"{answer.id}: which list does the call return?"
        return lists[0]
    return answer.value


def sse_lines(text: str) -> list[str]:
    """The ``line`` of each ``data:`` of an SSE example."""
    return [
        json.loads(row.removeprefix("data:").strip())["line"]
        for row in text.splitlines()
        if row.startswith("data:")
    ]


SUCCESS = [a for a in ANSWERS if a.is_success]
ERRORS = [a for a in ANSWERS if not a.is_success]


@pytest.mark.parametrize("answer", SUCCESS, ids=lambda a: a.id)
def test_recorded_success_is_read_into_the_typed_models(answer: RecordedAnswer) -> None:
    replayed = replay(answer)
    result, error = replayed.result, replayed.error
    assert replayed.sent, "the client did not send the operation"
    assert error is None, f"{type(error).__name__}: {error}"
    if "RateLimit" in answer.headers:
        assert replayed.rate_limit is not None and replayed.rate_limit.windows
    if answer.media_type == "text/event-stream":
        assert result == sse_lines(answer.value)
        return
    items = result if isinstance(result, list) else [result]
    assert all(hasattr(type(item), "__pydantic_fields__") for item in items), result
    problems = differences(declared(result), recorded_body(answer, result))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("answer", ERRORS, ids=lambda a: a.id)
def test_recorded_error_becomes_the_typed_exception(answer: RecordedAnswer) -> None:
    replayed = replay(answer)
    error = replayed.error
    assert replayed.sent, "the client did not send the operation"
    assert isinstance(error, error_class_for_status(answer.status)), repr(error)
    message = str(error)
    assert "\n" not in message
    assert answer.value["title"] in message and answer.value["detail"] in message
    assert error.status == answer.status
    if "RateLimit" in answer.headers:
        assert replayed.rate_limit is not None and replayed.rate_limit.windows
    if answer.status == 429:
        assert isinstance(error, RateLimited)
        assert error.retry_after == float(answer.headers["Retry-After"])
