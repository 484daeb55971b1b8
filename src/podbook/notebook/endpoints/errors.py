"""The job magics' failures as one line each, with the fix for a queue endpoint.

Builds on :mod:`podbook.notebook.errors` (``UsageError`` for mistakes, ``ServiceError`` for
what the service or the network reported), adding what a 404 means for endpoints and jobs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from podbook.notebook.errors import describe_failure, user_facing_errors

UNKNOWN_ENDPOINT = (
    "check the endpoint ID (built-in: echo, stream-demo; serve your own with "
    "`%endpoint serve FUNC --name ID`)"
)
UNKNOWN_JOB = (
    "check the job ID and --endpoint; finished jobs are kept 30 min after /run and "
    "1 min after /runsync"
)


def describe_job_failure(err: BaseException, magic: str) -> str:
    """One readable line ending in the fix (``magic`` is e.g. ``"runjob"``, ``"job cancel"``)."""
    from podbook import errors

    if isinstance(err, errors.NotFound):
        head = str(err).splitlines()[0] if str(err) else "404 Not Found"
        fix = UNKNOWN_JOB if magic.startswith("job") else UNKNOWN_ENDPOINT
        return f"{head} → {fix}"
    if isinstance(err, errors.InvalidRequest):
        head = str(err).splitlines()[0]
        return f"{head} → fix the flags or the cell (see `%{magic} --help`)"
    if isinstance(err, errors.Conflict):
        head = str(err).splitlines()[0]
        return f"{head} → see the job's status with `%job status ID --endpoint EP`"
    return describe_failure(err, magic)


@contextmanager
def job_errors(magic: str) -> Iterator[None]:
    """Re-raise podbook's errors as one-line :class:`UsageError` / :class:`ServiceError`."""
    with user_facing_errors(magic, describe_job_failure):
        yield
