"""The queue API's wire contract: job submission, job records, stream, health, purge, limits.

One source of truth for the client (which refuses a bad request before sending it) and the
emulator's broker (which answers it). Queue errors are not problem+json: the service
answers ``{"error": "<one line>"}`` (see :func:`queue_error_body`).

Sizes: **1 MB = 1,000,000 bytes** (decimal). The service documents "10 MB" and "20 MB"
without saying which megabyte; the decimal reading is the stricter one, so a payload the
client lets through is never one the service refuses for its size. A payload's size is the
length of its encoded JSON body exactly as sent (:func:`encode_json`, compact UTF-8, the
encoding httpx uses), not of the Python object.

Times on the wire are integer milliseconds (``wait``, ``ttl``, ``executionTimeout``,
``delayTime``, ``executionTime``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from .base import Omittable, RequestModel, ResponseModel
from .types import WireSecret
from .validation import RequestRejected, validate_request

__all__ = [
    "ACTIVE_JOB_STATUSES",
    "EXECUTION_TIMEOUT_DEFAULT_MS",
    "EXECUTION_TIMEOUT_MAX_MS",
    "EXECUTION_TIMEOUT_MIN_MS",
    "JOB_STATUSES",
    "MB",
    "RETRYABLE_JOB_STATUSES",
    "RUNSYNC_MAX_BYTES",
    "RUNSYNC_RETENTION_MAX_MS",
    "RUNSYNC_RETENTION_MS",
    "RUN_MAX_BYTES",
    "RUN_RETENTION_MS",
    "STREAM_CHUNK_MAX_BYTES",
    "STREAM_CURSOR_MAX",
    "STREAM_METRIC_FIELDS",
    "STREAM_WAIT_DEFAULT_MS",
    "TERMINAL_JOB_STATUSES",
    "TTL_DEFAULT_MS",
    "TTL_MAX_MS",
    "TTL_MIN_MS",
    "WAIT_DEFAULT_MS",
    "WAIT_MAX_MS",
    "WAIT_MIN_MS",
    "WEBHOOK_RETRIES",
    "WEBHOOK_RETRY_INTERVAL_S",
    "HealthJobs",
    "HealthResponse",
    "HealthWorkers",
    "JobError",
    "JobPolicy",
    "JobRecord",
    "JobStatus",
    "JobSubmission",
    "PurgeResponse",
    "QueueOperation",
    "QueueError",
    "REQUESTS_MAX_ITEMS",
    "RequestRecord",
    "RequestsResponse",
    "S3Config",
    "StreamChunk",
    "StreamMetrics",
    "StreamResponse",
    "TextChunkOutput",
    "check_execution_timeout",
    "check_payload_size",
    "check_ttl",
    "check_wait",
    "encode_json",
    "error_text",
    "max_payload_bytes",
    "parse_job_error",
    "parse_ms_query",
    "queue_error_body",
    "validate_submission",
]

# --- limits --------------------------------------------------------------------------------

MB = 1_000_000
"""One megabyte as the limits below count it (decimal; see the module docstring)."""

RUN_MAX_BYTES = 10 * MB
"""Largest encoded JSON body ``POST /run`` accepts."""
RUNSYNC_MAX_BYTES = 20 * MB
"""Largest encoded JSON body ``POST /runsync`` accepts."""
STREAM_CHUNK_MAX_BYTES = 1 * MB
"""Largest streamed chunk; a larger output is split over several chunks."""

WAIT_MIN_MS = 1_000
WAIT_MAX_MS = 300_000
WAIT_DEFAULT_MS = 90_000
"""``/runsync?wait=``: how long the request waits for the result (not how long it is kept)."""

STREAM_WAIT_DEFAULT_MS = 10_000
"""How long one ``/stream/{id}`` call holds while there is no chunk and no end (long-poll);
``?wait=`` (``WAIT_MIN_MS``..``WAIT_MAX_MS``) changes it."""
STREAM_CURSOR_MAX = 10**18 - 1
"""Largest ``/stream/{id}?cursor=`` the emulator reads (at most 18 decimal digits)."""

_DAY_MS = 86_400_000
EXECUTION_TIMEOUT_MIN_MS = 5_000
EXECUTION_TIMEOUT_MAX_MS = 7 * _DAY_MS
EXECUTION_TIMEOUT_DEFAULT_MS = 600_000
"""``policy.executionTimeout``: longest active run once a worker took the job → TIMED_OUT."""

TTL_MIN_MS = 10_000
TTL_MAX_MS = 7 * _DAY_MS
TTL_DEFAULT_MS = _DAY_MS
"""``policy.ttl`` / ``/status?ttl=``: total lifespan from submission; then the job is deleted."""

RUNSYNC_RETENTION_MS = 60_000
RUNSYNC_RETENTION_MAX_MS = 300_000
RUN_RETENTION_MS = 1_800_000
"""How long a finished job's result stays readable (``/runsync``: 1 min, up to 5; ``/run``: 30)."""

WEBHOOK_RETRIES = 2
WEBHOOK_RETRY_INTERVAL_S = 10.0
"""A webhook answered with anything but 200 is tried up to 2 more times, 10 s apart."""

QueueOperation = Literal["run", "runsync"]

# --- statuses ------------------------------------------------------------------------------

JobStatus = Literal["IN_QUEUE", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"]
JOB_STATUSES: tuple[str, ...] = get_args(JobStatus)
TERMINAL_JOB_STATUSES: frozenset[str] = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"})
"""A job in one of these will not move again by itself (retry moves FAILED/TIMED_OUT back)."""
ACTIVE_JOB_STATUSES: frozenset[str] = frozenset({"IN_QUEUE", "IN_PROGRESS"})
"""The statuses ``/cancel`` acts on."""
RETRYABLE_JOB_STATUSES: frozenset[str] = frozenset({"FAILED", "TIMED_OUT"})
"""The statuses ``/retry`` acts on (before the result expires)."""


# --- range checks (one message for client and emulator) ------------------------------------


def _duration(ms: int) -> str:
    for unit, size in (("days", _DAY_MS), ("min", 60_000), ("s", 1_000)):
        if ms >= size and ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"


def _range_message(low: int, high: int) -> str:
    return f"must be between {low} and {high} milliseconds ({_duration(low)} to {_duration(high)})"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_range(name: str, value: Any, low: int, high: int) -> int:
    if not _is_int(value) or not low <= value <= high:
        got = f", got {value!r}" if _is_int(value) else f", got {type(value).__name__}"
        raise RequestRejected(
            400, "Bad Request", f"{name} is invalid; {_range_message(low, high)}{got}"
        )
    return value


def check_wait(wait_ms: Any) -> int:
    """``wait`` (ms) of ``/runsync`` or ``/stream``; raises :class:`RequestRejected` (400)."""
    return _check_range("wait", wait_ms, WAIT_MIN_MS, WAIT_MAX_MS)


def check_ttl(ttl_ms: Any) -> int:
    """A job's ``ttl`` (ms), in a policy or ``/status?ttl=``; raises (400) when out of range."""
    return _check_range("ttl", ttl_ms, TTL_MIN_MS, TTL_MAX_MS)


def check_execution_timeout(timeout_ms: Any) -> int:
    """``policy.executionTimeout`` (ms); raises :class:`RequestRejected` (400) when out of range."""
    return _check_range(
        "executionTimeout", timeout_ms, EXECUTION_TIMEOUT_MIN_MS, EXECUTION_TIMEOUT_MAX_MS
    )


def parse_ms_query(name: str, raw: str | None, *, default: int | None = None) -> int | None:
    """A millisecond query parameter (``wait``, ``ttl``) from its raw string.

    ``None`` (absent) gives ``default``; anything else must be a decimal integer within the
    parameter's range (``wait``: ``WAIT_MIN_MS``..``WAIT_MAX_MS``, ``ttl``:
    ``TTL_MIN_MS``..``TTL_MAX_MS``). Raises :class:`RequestRejected` (400) otherwise.
    """
    checks = {"wait": check_wait, "ttl": check_ttl}
    if name not in checks:
        raise ValueError(f"unknown millisecond parameter {name!r}; expected one of {list(checks)}")
    if raw is None:
        return default
    text = raw.strip()
    if not text.isdigit():
        low, high = (WAIT_MIN_MS, WAIT_MAX_MS) if name == "wait" else (TTL_MIN_MS, TTL_MAX_MS)
        raise RequestRejected(
            400,
            "Bad Request",
            f"{name} is invalid; {_range_message(low, high)}, got {raw[:40]!r}",
        )
    return checks[name](int(text))


def _policy_range(name: str, low: int, high: int) -> Any:
    """Integer ms within ``low``..``high``: refused with the one range message, documented
    as ``minimum``/``maximum`` in the JSON schema."""

    def check(value: int) -> int:
        if not low <= value <= high:
            raise PydanticCustomError("ms_range", _range_message(low, high))
        return value

    check.__name__ = f"check_{name}"
    documented = {"type": "integer", "minimum": low, "maximum": high}
    return Annotated[int, AfterValidator(check), WithJsonSchema(documented)]


# What the JSON schema documents without the model checking it (responses stay tolerant).
_NonNegative = Annotated[int, WithJsonSchema({"type": "integer", "minimum": 0})]
_Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
_Status = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "enum": list(JOB_STATUSES),
            "description": "The job's status (a client keeps one it does not know as given).",
        }
    ),
]


# --- request models ------------------------------------------------------------------------


class JobPolicy(RequestModel):
    """``policy`` of a submission: ``executionTimeout`` and ``ttl`` in ms, ``lowPriority``.

    Omitted fields take the service's defaults (``EXECUTION_TIMEOUT_DEFAULT_MS``,
    ``TTL_DEFAULT_MS``, ``False``).
    """

    execution_timeout: Omittable[
        _policy_range("executionTimeout", EXECUTION_TIMEOUT_MIN_MS, EXECUTION_TIMEOUT_MAX_MS)
    ] = None
    low_priority: Omittable[bool] = None
    ttl: Omittable[_policy_range("ttl", TTL_MIN_MS, TTL_MAX_MS)] = None


class S3Config(RequestModel):
    """``s3Config`` of a submission: where the worker may put large results.

    The worker itself uses them (any S3-compatible store). ``accessSecret`` is hidden
    from ``repr`` and revealed only on the wire.
    """

    access_id: str = Field(min_length=1)
    access_secret: WireSecret
    bucket_name: str = Field(min_length=1)
    endpoint_url: str = Field(min_length=1)


_URL_TEXT = re.compile(r"[\x21-\x7e]+")
_HOST = re.compile(r"[A-Za-z0-9.\-]+|[0-9A-Fa-f:.]+")


def _check_webhook(value: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise PydanticCustomError("webhook_url", "must be an http:// or https:// URL with a host")
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if not _URL_TEXT.fullmatch(value) or not _HOST.fullmatch(parts.hostname or "") or not port_ok:
        raise PydanticCustomError(
            "webhook_url",
            "must be a URL of printable ASCII with a valid host and port "
            "(percent-encode other characters)",
        )
    return value


_WebhookUrl = Annotated[
    str,
    AfterValidator(_check_webhook),
    WithJsonSchema({"type": "string", "format": "uri", "pattern": "^https?://[^/?#]+"}),
]


class JobSubmission(RequestModel):
    """Body of ``POST /run`` and ``POST /runsync``: ``{input, webhook?, policy?, s3Config?}``.

    ``input`` is the handler's parameters (a JSON object). Strict: unknown properties are
    refused (422), ``null`` for an optional property too.
    """

    model_config = ConfigDict(json_schema_extra={"examples": [{"input": {"prompt": "hello"}}]})

    input: dict[str, Any] = Field(
        description="The handler's parameters.", examples=[{"prompt": "hello"}]
    )
    webhook: Omittable[_WebhookUrl] = Field(
        default=None, description="Called with the job's record once it has ended."
    )
    policy: Omittable[JobPolicy] = None
    s3_config: Omittable[S3Config] = None


# --- response models -----------------------------------------------------------------------


def _always_sent(*names: str) -> ConfigDict:
    """Document ``names`` as required in the JSON schema: the service always sends them,
    while the model still reads an answer without them."""
    return ConfigDict(json_schema_extra={"required": list(names)})


class _SnakeCaseResponse(ResponseModel):
    """A response whose wire keys are snake_case already (worker-produced objects)."""

    model_config = ConfigDict(alias_generator=None, extra="allow")


class JobError(_SnakeCaseResponse):
    """A handler's error as a worker reports it (``error_type``, ``error_message``, ...).

    Built by :func:`parse_job_error` from whatever the ``error`` field holds.
    """

    error_type: str | None = None
    error_message: str = ""
    error_traceback: str | None = None
    hostname: str | None = None
    worker_id: str | None = None
    runpod_version: str | None = None

    @property
    def type(self) -> str | None:
        """The exception's class name, when the worker reported one."""
        return self.error_type

    @property
    def message(self) -> str:
        """The error message."""
        return self.error_message

    @property
    def traceback(self) -> str | None:
        """The handler's traceback, when the worker reported one."""
        return self.error_traceback

    def one_line(self) -> str:
        """``"ValueError: bad input"`` (or just the message)."""
        message = " ".join(self.error_message.split()) or "(no message)"
        return f"{self.error_type}: {message}" if self.error_type else message


def parse_job_error(value: Any) -> JobError | None:
    """The :class:`JobError` in a record's ``error`` field, or None when there is none.

    Accepts the forms workers produce: a JSON string with ``error_type``,
    ``error_message``, ``error_traceback`` (the ``runpod`` SDK), such an object, or a plain
    message string.
    """
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return JobError(error_message=value)
        if not isinstance(decoded, dict):
            return JobError(error_message=value)
        value = decoded
    if isinstance(value, Mapping):
        data = dict(value)
        if "error_message" not in data:
            message = data.get("message", data.get("error"))
            data["error_message"] = message if isinstance(message, str) else json.dumps(value)
        if "error_type" not in data and isinstance(data.get("type"), str):
            data["error_type"] = data["type"]
        if "error_traceback" not in data and isinstance(data.get("traceback"), str):
            data["error_traceback"] = data["traceback"]
        for key in JobError.model_fields:
            if data.get(key) is not None and not isinstance(data[key], str):
                data[key] = str(data[key])
        return JobError.model_validate(data)
    return JobError(error_message=json.dumps(value) if not isinstance(value, str) else value)


class JobRecord(ResponseModel):
    """A job as ``/run``, ``/runsync``, ``/status``, ``/cancel``, ``/retry`` answer it.

    ``status`` is one of :data:`JOB_STATUSES` (an unknown status is kept as given).
    ``output`` is the result once COMPLETED and the latest progress update while
    IN_PROGRESS; ``error`` is the handler's error (see :attr:`job_error`). Times are ms.
    """

    id: str
    status: _Status
    delay_time: _NonNegative | None = Field(default=None, description="ms spent in the queue.")
    execution_time: _NonNegative | None = Field(default=None, description="ms of execution.")
    output: Any = None
    error: Any = None
    worker_id: str | None = None

    @property
    def is_terminal(self) -> bool:
        """Whether the job has ended (COMPLETED, FAILED, CANCELLED or TIMED_OUT)."""
        return self.status in TERMINAL_JOB_STATUSES

    @property
    def has_output(self) -> bool:
        """Whether the record carried an ``output`` property (even ``null``)."""
        return "output" in self.model_fields_set

    @property
    def job_error(self) -> JobError | None:
        """The handler's error, parsed (None when the record has none)."""
        return parse_job_error(self.error)


class StreamMetrics(_SnakeCaseResponse):
    """The ``metrics`` of a streamed chunk, with the seed's sample fields (all optional)."""

    avg_gen_throughput: float | None = None
    avg_prompt_throughput: float | None = None
    cpu_kv_cache_usage: float | None = None
    gpu_kv_cache_usage: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    pending: int | None = None
    running: int | None = None
    stream_index: int | None = None
    swapped: int | None = None
    scenario: str | None = None


STREAM_METRIC_FIELDS: tuple[str, ...] = tuple(StreamMetrics.model_fields)
"""The seed's sample metric names, in its order."""


class TextChunkOutput(_SnakeCaseResponse):
    """The seed's sample chunk ``output``: ``input_tokens``, ``output_tokens``, ``text``."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    text: list[str] = Field(default_factory=list)


class StreamChunk(ResponseModel):
    """One streamed item: ``{"output": <chunk>, "metrics"?: {...}}``."""

    model_config = _always_sent("output")

    output: Any = None
    metrics: dict[str, Any] | None = None


class StreamResponse(ResponseModel):
    """``GET /stream/{id}``: the job's status and the chunks drained since the last call.

    A reader loops until ``status`` is terminal and ``stream`` came back empty.
    ``cursor`` and ``next`` are set only by a server that offers the resumable cursor (an
    emulator extension, asked for with ``?cursor=N``): the index of the first chunk here and
    the index to ask for next.
    """

    model_config = _always_sent("status", "stream")

    status: _Status
    stream: list[StreamChunk] = Field(default_factory=list)
    id: str | None = None
    cursor: _NonNegative | None = Field(
        default=None,
        description="With ?cursor=N (emulator extension): the index of the first chunk here.",
    )
    next: _NonNegative | None = Field(
        default=None,
        description="With ?cursor=N (emulator extension): the cursor to ask for next.",
    )

    @property
    def is_terminal(self) -> bool:
        """Whether the job has ended (more chunks may still be drained)."""
        return self.status in TERMINAL_JOB_STATUSES


class HealthJobs(ResponseModel):
    """Job counts of ``/health``."""

    model_config = _always_sent("completed", "failed", "inProgress", "inQueue", "retried")

    completed: _NonNegative = 0
    failed: _NonNegative = 0
    in_progress: _NonNegative = 0
    in_queue: _NonNegative = 0
    retried: _NonNegative = 0


class HealthWorkers(ResponseModel):
    """Worker counts of ``/health`` (the service may add ``initializing``, ``ready``, ...)."""

    model_config = _always_sent("idle", "running")

    idle: _NonNegative = 0
    running: _NonNegative = 0


class HealthResponse(ResponseModel):
    """``GET /health``: ``{"jobs": {...}, "workers": {...}}``."""

    model_config = _always_sent("jobs", "workers")

    jobs: HealthJobs = Field(default_factory=HealthJobs)
    workers: HealthWorkers = Field(default_factory=HealthWorkers)


class PurgeResponse(ResponseModel):
    """``POST /purge-queue``: ``{"removed": N, "status": "completed"}``."""

    model_config = _always_sent("removed", "status")

    removed: _NonNegative
    status: str = "completed"


class QueueError(ResponseModel):
    """A queue error body: ``{"error": "<one line>"}`` (not problem+json)."""

    error: str = Field(json_schema_extra={"minLength": 1})


REQUESTS_MAX_ITEMS = 100
"""Requests ``GET /requests`` lists at most (the newest)."""


class RequestRecord(ResponseModel):
    """One of an endpoint's recent requests (jobs), as ``GET /requests`` lists it.

    An emulator-defined shape (no public page documents the service's). ``created_at``,
    ``started_at`` and ``completed_at`` are RFC 3339 times; ``delay_time`` and
    ``execution_time`` are ms, once the job started; ``route`` is the OpenAI path
    (``/v1/chat/completions``) of a request that came through ``/openai``.
    """

    id: str
    status: _Status
    created_at: _Timestamp | None = None
    started_at: _Timestamp | None = None
    completed_at: _Timestamp | None = None
    delay_time: _NonNegative | None = None
    execution_time: _NonNegative | None = None
    route: str | None = None

    @property
    def is_terminal(self) -> bool:
        """Whether the request's job has ended."""
        return self.status in TERMINAL_JOB_STATUSES


class RequestsResponse(ResponseModel):
    """``GET /requests``: ``{"requests": [...]}``, newest first."""

    model_config = _always_sent("requests")

    requests: list[RequestRecord] = Field(
        default_factory=list, json_schema_extra={"maxItems": REQUESTS_MAX_ITEMS}
    )


# --- submission and payload size -----------------------------------------------------------


def encode_json(body: Any) -> bytes:
    """``body`` as the exact bytes sent on the wire (compact UTF-8 JSON, as httpx sends it).

    Raises ``ValueError`` (``TypeError`` for non-JSON objects) like ``json.dumps``.
    """
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )


def max_payload_bytes(operation: QueueOperation) -> int:
    """The largest body ``/run`` or ``/runsync`` accepts."""
    return RUNSYNC_MAX_BYTES if operation == "runsync" else RUN_MAX_BYTES


def _megabytes(size: int) -> str:
    return f"{size / MB:.1f} MB" if size % MB else f"{size // MB} MB"


def check_payload_size(size: int, operation: QueueOperation) -> None:
    """Raise :class:`RequestRejected` (400) when a ``/run``/``/runsync`` body is too large."""
    limit = max_payload_bytes(operation)
    if size <= limit:
        return
    hint = (
        "pass large data by reference (a URL, or storage the worker reads)"
        if operation == "runsync"
        else "use runsync (up to 20 MB), or pass large data by reference (a URL)"
    )
    raise RequestRejected(
        400,
        "Bad Request",
        f"payload is too large for /{operation}: {size:,} bytes of JSON, the limit is "
        f"{_megabytes(limit)} ({limit:,} bytes); {hint}",
    )


def validate_submission(
    body: bytes | str | Mapping[str, Any], operation: QueueOperation
) -> JobSubmission:
    """Check a ``/run`` or ``/runsync`` body: size first, then the schema.

    ``body`` is the raw request body (bytes or str, measured as is) or a decoded JSON object
    (measured as :func:`encode_json` encodes it). Raises :class:`RequestRejected` (400,
    the queue API's one status for a bad body) listing every failure: too large, not a
    JSON object, schema (``"$.policy.ttl: must be between ..."``).
    """
    if isinstance(body, (bytes, bytearray, memoryview)):
        size = len(bytes(body))
        data: Any = bytes(body)
    elif isinstance(body, str):
        size = len(body.encode("utf-8"))
        data = body
    else:
        data = dict(body)
        try:
            size = len(encode_json(data))
        except (TypeError, ValueError) as exc:
            raise RequestRejected(
                400, "Bad Request", f"the job input cannot be sent as JSON: {exc}"
            ) from None
    check_payload_size(size, operation)
    try:
        return validate_request(JobSubmission, data)
    except RequestRejected as exc:
        if exc.status == 400:
            raise
        # The queue API knows one status for a bad body: 400 (its error table has no 422).
        raise RequestRejected.from_errors(400, exc.errors or [exc.detail]) from None


def error_text(rejected: RequestRejected) -> str:
    """One line for a queue error body: every error line joined by ``; `` (or the detail)."""
    return "; ".join(rejected.errors) if rejected.errors else rejected.detail


def queue_error_body(message: str | RequestRejected) -> dict[str, str]:
    """The JSON body of a queue error: ``{"error": message}``."""
    if isinstance(message, RequestRejected):
        message = error_text(message)
    return {"error": message}
