"""The queue's numbers, in one place for the broker.

Sizes, waits, policy ranges and retention come from :mod:`podbook.api.queue` (one source for
the client and the emulator); the per-operation rate limits of the seed and
the broker's own timings (long-polls, worker liveness) live here.
"""

from __future__ import annotations

from dataclasses import dataclass

from podbook.api.queue import (  # noqa: F401  (re-exported for the broker)
    EXECUTION_TIMEOUT_DEFAULT_MS,
    EXECUTION_TIMEOUT_MAX_MS,
    EXECUTION_TIMEOUT_MIN_MS,
    RUN_MAX_BYTES,
    RUN_RETENTION_MS,
    RUNSYNC_MAX_BYTES,
    RUNSYNC_RETENTION_MAX_MS,
    RUNSYNC_RETENTION_MS,
    STREAM_CHUNK_MAX_BYTES,
    STREAM_WAIT_DEFAULT_MS,
    TTL_DEFAULT_MS,
    TTL_MAX_MS,
    TTL_MIN_MS,
    WAIT_DEFAULT_MS,
    WAIT_MAX_MS,
    WAIT_MIN_MS,
    WEBHOOK_RETRIES,
    WEBHOOK_RETRY_INTERVAL_S,
)
from podbook.api.queue import TERMINAL_JOB_STATUSES as TERMINAL  # noqa: F401

WEBHOOK_EXTRA_TRIES = WEBHOOK_RETRIES
WEBHOOK_RETRY_SECONDS = WEBHOOK_RETRY_INTERVAL_S


@dataclass(frozen=True)
class OperationLimit:
    """A per-account, per-endpoint limit: requests per 10 s window and at once."""

    rate: int
    concurrent: int | None


RATE_WINDOW_SECONDS = 10.0
OPERATION_LIMITS: dict[str, OperationLimit] = {
    "runsync": OperationLimit(2000, 400),
    "run": OperationLimit(1000, 200),
    "status": OperationLimit(2000, 400),
    "stream": OperationLimit(2000, 400),
    "cancel": OperationLimit(100, 20),
    "purge-queue": OperationLimit(2, None),
    "openai": OperationLimit(2000, 400),
    "requests": OperationLimit(10, 2),
}

# The seed: "the effective limit is the higher of the base limit and running_workers *
# requests_per_worker". It gives no per-worker figure; the emulator assumes a tenth of the base
# rate per connected worker, so an endpoint with more than ten workers gets more than the base.
# Concurrency limits do not scale.
PER_WORKER_RATE: dict[str, int] = {
    op: limit.rate // 10 for op, limit in OPERATION_LIMITS.items() if op != "purge-queue"
}
