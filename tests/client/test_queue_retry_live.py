"""A ``Job`` that already holds a final record follows the job again once it is retried:
through itself, through another handle of the same client (``%job retry``, a panel's Retry
button), or when the retry's answer is lost. Against a real emulator process."""

from __future__ import annotations

import httpx
import pytest

from podbook import AsyncClient, Client
from podbook.errors import JobFailed

from .test_queue_support import ManualWorker, create_endpoint

TRACEBACK = 'Traceback (most recent call last):\n  File "handler.py", line 3\nRuntimeError: x'


@pytest.fixture
def manual(emulator):
    worker = ManualWorker(emulator, create_endpoint(emulator, "retrylive"))
    yield worker
    worker.close()


def failed_job(endpoint, manual):
    """A job of ``endpoint`` that failed, with its FAILED record held by the handle."""
    job = endpoint.run({"attempt": "any"})
    manual.fail(manual.take()["id"], "RuntimeError", "flaky", TRACEBACK)
    with pytest.raises(JobFailed):
        job.output(timeout=10)
    assert job.record.status == "FAILED" and job.done
    return job


def test_output_follows_the_new_run_after_job_retry(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = failed_job(endpoint, manual)
    assert job.retry().status == "IN_QUEUE"
    assert not job.done and job.record.status == "IN_QUEUE"
    manual.finish(manual.take()["id"], "second time")
    assert job.output(timeout=10) == "second time"
    assert job.wait().status == "COMPLETED"


def test_a_retry_through_another_handle_drops_the_final_record_kept(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = failed_job(endpoint, manual)
    # `%job retry ID` and the panel's Retry button retry the job with a handle of their own.
    other = client.endpoint(manual.endpoint_id).job(job.id)
    assert other.retry().status == "IN_QUEUE"
    assert job.status().status == "IN_QUEUE"  # a non-terminal read replaces the record
    manual.finish(manual.take()["id"], {"answer": 42})
    assert job.output(timeout=10) == {"answer": 42}
    assert other.output(timeout=10) == {"answer": 42}


def test_output_after_another_handle_retried_asks_the_service_again(client, manual):
    endpoint = client.endpoint(manual.endpoint_id)
    job = failed_job(endpoint, manual)
    endpoint.job(job.id).retry()
    manual.finish(manual.take()["id"], "again")
    assert job.output(timeout=10) == "again"  # not the FAILED record it held


class LosesRetryAnswers(httpx.HTTPTransport):
    """Sends every request; the answer to ``/retry`` is lost on the way back."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if "/retry/" in request.url.path:
            response.read()
            response.close()
            raise httpx.ReadError("connection reset by peer", request=request)
        return response


def test_a_retry_whose_answer_is_lost_does_not_leave_the_old_result(emulator, manual):
    with Client(api_key=emulator.api_key, url=emulator.url, transport=LosesRetryAnswers()) as c:
        endpoint = c.endpoint(manual.endpoint_id)
        job = failed_job(endpoint, manual)
        with pytest.raises(Exception):  # noqa: B017 - the client's transport error
            job.retry()
        manual.finish(manual.take()["id"], "it did run again")
        assert job.output(timeout=10) == "it did run again"


@pytest.mark.anyio
async def test_async_handles_follow_a_retry_through_another_handle(emulator, manual):
    async with AsyncClient(api_key=emulator.api_key, url=emulator.url) as c:
        endpoint = c.endpoint(manual.endpoint_id)
        job = await endpoint.run({"attempt": "async"})
        manual.fail(manual.take()["id"], "RuntimeError", "flaky", TRACEBACK)
        assert (await job.wait(timeout=10)).status == "FAILED"
        await endpoint.job(job.id).retry()
        manual.finish(manual.take()["id"], "async again")
        assert await job.output(timeout=10) == "async again"
