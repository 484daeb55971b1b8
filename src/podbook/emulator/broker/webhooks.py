"""Webhook delivery: when a job ends, POST its status record (plus ``input`` and
``webhook``) to the job's URL; anything but 200 is tried up to 2 more times, 10 s apart
(``BrokerSettings.webhook_retry_seconds`` × ``time_scale``): 3 attempts at most, the pause
counted from the end of the failed one. An attempt that gets no answer within the retry
interval (at least 2 s, at most 10 s) counts as failed: a receiver that is down, slow or
answers 500 gets exactly 3 calls."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from podbook.emulator.broker.limits import WEBHOOK_EXTRA_TRIES

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("podbook.emulator.broker")

TIMEOUT_BOUNDS = (2.0, 10.0)
"""Seconds an attempt may take (the retry interval, clamped to these bounds)."""


def attempt_timeout(retry_seconds: float) -> float:
    """How long one webhook call may take before it counts as failed."""
    low, high = TIMEOUT_BOUNDS
    return min(high, max(low, retry_seconds))


class WebhookSender:
    """Sends webhooks in background tasks, each with its retries."""

    def __init__(self, retry_seconds: float) -> None:
        self.retry_seconds = retry_seconds
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def send(self, url: str, body: dict[str, Any]) -> None:
        """Deliver ``body`` to ``url`` in the background."""
        task = asyncio.get_running_loop().create_task(self._deliver(url, body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, url: str, body: dict[str, Any]) -> None:
        import httpx  # on first use: the emulator starts without it

        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=attempt_timeout(self.retry_seconds),
                follow_redirects=False,
                # A fresh connection per attempt: a kept-alive one the receiver closed
                # meanwhile would fail an attempt that never reached it.
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        for attempt in range(1 + WEBHOOK_EXTRA_TRIES):
            if attempt:
                await asyncio.sleep(self.retry_seconds)
            try:
                response = await self._client.post(url, json=body)
                if response.status_code == 200:
                    return
                outcome = f"answered {response.status_code}"
            except httpx.HTTPError as exc:
                outcome = f"failed ({type(exc).__name__})"
            log.info(
                "webhook for job %s %s (try %d of %d)",
                body.get("id"),
                outcome,
                attempt + 1,
                1 + WEBHOOK_EXTRA_TRIES,
            )
        log.warning(
            "webhook for job %s not delivered after %d tries; given up",
            body.get("id"),
            1 + WEBHOOK_EXTRA_TRIES,
        )

    async def close(self) -> None:
        """Stop pending deliveries and close the HTTP client."""
        for task in list(self._tasks):
            task.cancel()
        if self._client is not None:
            await self._client.aclose()
