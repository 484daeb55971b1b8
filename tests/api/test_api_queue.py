"""The queue wire contract: submission rules, limits, and tolerant job/stream/health records."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podbook.api.queue import (
    EXECUTION_TIMEOUT_MAX_MS,
    EXECUTION_TIMEOUT_MIN_MS,
    JOB_STATUSES,
    RUN_MAX_BYTES,
    RUNSYNC_MAX_BYTES,
    STREAM_METRIC_FIELDS,
    TERMINAL_JOB_STATUSES,
    TTL_MAX_MS,
    TTL_MIN_MS,
    WAIT_DEFAULT_MS,
    WAIT_MAX_MS,
    WAIT_MIN_MS,
    HealthResponse,
    JobPolicy,
    JobRecord,
    JobSubmission,
    PurgeResponse,
    StreamMetrics,
    StreamResponse,
    check_execution_timeout,
    check_payload_size,
    check_ttl,
    check_wait,
    encode_json,
    error_text,
    parse_job_error,
    parse_ms_query,
    queue_error_body,
    validate_submission,
)
from podbook.api.validation import RequestRejected


def rejection(fn, *args):
    with pytest.raises(RequestRejected) as info:
        fn(*args)
    return info.value


# --- limits as the seed states them ---------------------------------------------------------


def test_limits_are_the_seeds():
    assert RUN_MAX_BYTES == 10_000_000 and RUNSYNC_MAX_BYTES == 20_000_000
    assert (WAIT_MIN_MS, WAIT_MAX_MS, WAIT_DEFAULT_MS) == (1000, 300_000, 90_000)
    assert (EXECUTION_TIMEOUT_MIN_MS, EXECUTION_TIMEOUT_MAX_MS) == (5000, 7 * 86_400_000)
    assert (TTL_MIN_MS, TTL_MAX_MS) == (10_000, 7 * 86_400_000)
    assert set(JOB_STATUSES) == {
        "IN_QUEUE",
        "IN_PROGRESS",
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMED_OUT",
    }
    assert {"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"} == TERMINAL_JOB_STATUSES


@pytest.mark.parametrize(
    ("check", "low", "high"),
    [
        (check_wait, WAIT_MIN_MS, WAIT_MAX_MS),
        (check_ttl, TTL_MIN_MS, TTL_MAX_MS),
        (check_execution_timeout, EXECUTION_TIMEOUT_MIN_MS, EXECUTION_TIMEOUT_MAX_MS),
    ],
)
def test_range_checks_accept_the_bounds_and_refuse_beyond(check, low, high):
    assert check(low) == low and check(high) == high
    for bad in (low - 1, high + 1, 0, -5, True, "2000", 1500.0, None):
        err = rejection(check, bad)
        assert err.status == 400
        assert f"between {low} and {high} milliseconds" in err.detail
        assert "\n" not in err.detail


def test_wait_message_names_the_parameter_and_value():
    err = rejection(check_wait, 500)
    assert err.detail.startswith("wait is invalid; must be between 1000 and 300000")
    assert "got 500" in err.detail


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_wait_check_agrees_with_the_range(value):
    if WAIT_MIN_MS <= value <= WAIT_MAX_MS:
        assert check_wait(value) == value
    else:
        with pytest.raises(RequestRejected):
            check_wait(value)


def test_parse_ms_query():
    assert parse_ms_query("wait", None, default=WAIT_DEFAULT_MS) == WAIT_DEFAULT_MS
    assert parse_ms_query("wait", " 2000 ") == 2000
    assert parse_ms_query("ttl", "60000") == 60000
    for name, raw in (("wait", "abc"), ("wait", "-1"), ("wait", "1.5"), ("ttl", "9999")):
        err = rejection(parse_ms_query, name, raw)
        assert err.status == 400 and err.detail.startswith(f"{name} is invalid")
    with pytest.raises(ValueError, match="unknown millisecond parameter"):
        parse_ms_query("timeout", "5")


# --- submission ---------------------------------------------------------------------------


def test_submission_minimal_and_full():
    sub = validate_submission({"input": {"prompt": "hi", "max_tokens": 5}}, "run")
    assert sub.input == {"prompt": "hi", "max_tokens": 5}
    full = {
        "input": {"a": [1, 2]},
        "webhook": "https://example.com/hook",
        "policy": {"executionTimeout": 5000, "lowPriority": True, "ttl": 10_000},
        "s3Config": {
            "accessId": "AKIA",
            "accessSecret": "s3-secret-value",
            "bucketName": "bucket",
            "endpointUrl": "https://s3.example.com",
        },
    }
    sub = validate_submission(json.dumps(full).encode(), "runsync")
    assert sub.policy == JobPolicy(execution_timeout=5000, low_priority=True, ttl=10_000)
    assert "s3-secret-value" not in repr(sub)
    assert sub.model_dump(by_alias=True, exclude_unset=True)["s3Config"]["accessSecret"] == (
        "s3-secret-value"
    )


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ({}, "$.input: is required"),
        ({"input": "text"}, "$.input: must be an object"),
        ({"input": [1]}, "$.input: must be an object"),
        ({"input": {}, "bogus": 1}, "$: additional property 'bogus' not allowed"),
        ({"input": {}, "s3_config": {}}, "$: additional property 's3_config' not allowed"),
        ({"input": {}, "webhook": "ftp://x"}, "$.webhook: must be an http:// or https:// URL"),
        ({"input": {}, "webhook": None}, "$.webhook: must not be null"),
        ({"input": {}, "policy": {"ttl": 9999}}, "$.policy.ttl: must be between 10000 and"),
        (
            {"input": {}, "policy": {"executionTimeout": 4999}},
            "$.policy.executionTimeout: must be between 5000 and",
        ),
        (
            {"input": {}, "policy": {"executionTimeout": EXECUTION_TIMEOUT_MAX_MS + 1}},
            "$.policy.executionTimeout: must be between 5000 and 604800000",
        ),
        ({"input": {}, "policy": {"ttl": "60000"}}, "$.policy.ttl: must be an integer"),
        ({"input": {}, "policy": {"lowPriority": "yes"}}, "$.policy.lowPriority: must be a"),
        ({"input": {}, "policy": {"retries": 3}}, "$.policy: additional property 'retries'"),
        ({"input": {}, "s3Config": {"accessId": "a"}}, "$.s3Config.bucketName: is required"),
    ],
)
def test_submission_refused_with_a_json_path(body, line):
    err = rejection(validate_submission, body, "run")
    assert err.status == 400
    assert any(e.startswith(line) for e in err.errors), err.errors


def test_submission_lists_every_failure_and_never_echoes_values():
    body = {"input": {}, "policy": {"ttl": 1, "executionTimeout": 1}, "extra": "TOPSECRET"}
    err = rejection(validate_submission, body, "run")
    assert len(err.errors) == 3
    assert "TOPSECRET" not in str(err) and "TOPSECRET" not in error_text(err)


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1]", "\ufeff{", b"\xff"])
def test_submission_body_that_is_not_an_object(raw):
    assert rejection(validate_submission, raw, "run").status == 400


# --- payload size, measured on the encoded JSON ---------------------------------------------


def _body_of_size(size: int, char: str = "x") -> dict:
    """A submission whose encoded JSON is exactly ``size`` bytes."""
    overhead = len(encode_json({"input": {"d": ""}}))
    per_char = len(char.encode())
    count, rest = divmod(size - overhead, per_char)
    body = {"input": {"d": char * count + "y" * rest}}
    assert len(encode_json(body)) == size
    return body


@pytest.mark.parametrize(
    ("operation", "limit"), [("run", RUN_MAX_BYTES), ("runsync", RUNSYNC_MAX_BYTES)]
)
def test_payload_limit_is_inclusive_and_on_encoded_bytes(operation, limit):
    validate_submission(_body_of_size(limit), operation)
    err = rejection(validate_submission, _body_of_size(limit + 1), operation)
    assert err.status == 400
    assert f"/{operation}" in err.detail and f"{limit:,} bytes" in err.detail
    raw = encode_json(_body_of_size(limit + 1))
    assert rejection(validate_submission, raw, operation).status == 400


def test_payload_size_counts_utf8_bytes_not_characters():
    # 4-byte characters: 2.5 M characters are 10 MB of UTF-8.
    body = _body_of_size(RUN_MAX_BYTES + 2, "😀")
    chars = len(json.dumps(body, ensure_ascii=False))
    assert chars < RUN_MAX_BYTES
    assert "too large" in rejection(validate_submission, body, "run").detail
    validate_submission(body, "runsync")


def test_check_payload_size_message_says_how_to_fix():
    err = rejection(check_payload_size, RUN_MAX_BYTES + 1, "run")
    assert "use runsync" in err.detail
    err = rejection(check_payload_size, RUNSYNC_MAX_BYTES + 1, "runsync")
    assert "by reference" in err.detail


def test_unencodable_input_is_refused():
    err = rejection(validate_submission, {"input": {"x": float("nan")}}, "run")
    assert "cannot be sent as JSON" in err.detail


# --- queue error bodies -------------------------------------------------------------------


def test_queue_error_body_is_one_line():
    err = rejection(validate_submission, {"input": 1, "x": 2}, "run")
    body = queue_error_body(err)
    assert set(body) == {"error"} and "\n" not in body["error"]
    assert "$.input" in body["error"] and "'x'" in body["error"]
    assert queue_error_body("job not found") == {"error": "job not found"}


# --- records --------------------------------------------------------------------------------


def test_job_record_tolerates_unknown_fields_and_statuses():
    record = JobRecord.model_validate(
        {"id": "j1", "status": "IN_QUEUE", "delayTime": 12, "newField": {"x": 1}}
    )
    assert record.delay_time == 12 and not record.is_terminal and not record.has_output
    assert record.model_extra == {"newField": {"x": 1}}
    assert JobRecord.model_validate({"id": "j", "status": "THROTTLED"}).status == "THROTTLED"
    done = JobRecord.model_validate({"id": "j", "status": "COMPLETED", "output": None})
    assert done.is_terminal and done.has_output and done.output is None


def test_job_error_from_the_runpod_sdk_form():
    sdk = json.dumps(
        {
            "error_type": "<class 'ValueError'>",
            "error_message": "bad prompt",
            "error_traceback": 'Traceback (most recent call last):\n  File "h.py"',
            "hostname": "w1",
            "worker_id": "w1",
            "runpod_version": "1.12.0",
        }
    )
    record = JobRecord.model_validate({"id": "j", "status": "FAILED", "error": sdk})
    error = record.job_error
    assert error is not None
    assert error.message == "bad prompt" and error.traceback.startswith("Traceback")
    assert error.one_line() == "<class 'ValueError'>: bad prompt"


@pytest.mark.parametrize(
    ("value", "message", "kind"),
    [
        ("plain words", "plain words", None),
        ({"type": "KeyError", "message": "'k'", "traceback": "tb"}, "'k'", "KeyError"),
        ({"error_message": "m", "error_type": "E"}, "m", "E"),
        ('"a json string"', '"a json string"', None),
        ({"error": "nested"}, "nested", None),
    ],
)
def test_job_error_other_forms(value, message, kind):
    error = parse_job_error(value)
    assert error.message == message and error.type == kind


def test_no_job_error():
    assert parse_job_error(None) is None and parse_job_error("") is None


def test_stream_response_and_metrics():
    body = {
        "status": "IN_PROGRESS",
        "stream": [
            {
                "output": {"input_tokens": 3, "output_tokens": 1, "text": ["Hel"]},
                "metrics": {"avg_gen_throughput": 12.5, "stream_index": 0, "scenario": "x"},
            },
            {"output": "plain"},
        ],
    }
    response = StreamResponse.model_validate(body)
    assert [c.output for c in response.stream] == [body["stream"][0]["output"], "plain"]
    assert not response.is_terminal
    metrics = StreamMetrics.model_validate(response.stream[0].metrics)
    assert metrics.avg_gen_throughput == 12.5 and metrics.stream_index == 0
    assert StreamResponse.model_validate({"status": "CANCELLED"}).stream == []
    assert STREAM_METRIC_FIELDS[0] == "avg_gen_throughput" and "scenario" in STREAM_METRIC_FIELDS


def test_health_and_purge():
    health = HealthResponse.model_validate(
        {
            "jobs": {"completed": 1, "failed": 2, "inProgress": 3, "inQueue": 4, "retried": 5},
            "workers": {"idle": 6, "running": 7, "throttled": 0},
        }
    )
    assert (health.jobs.in_progress, health.jobs.in_queue, health.workers.running) == (3, 4, 7)
    assert health.workers.model_extra == {"throttled": 0}
    assert PurgeResponse.model_validate({"removed": 2, "status": "completed"}).removed == 2


def test_submission_model_built_in_python_dumps_wire_keys():
    sub = JobSubmission(input={"max_tokens": 1}, policy=JobPolicy(low_priority=True))
    assert sub.model_dump(by_alias=True, exclude_unset=True) == {
        "input": {"max_tokens": 1},
        "policy": {"lowPriority": True},
    }
