"""Webhook delivery: when a job ends, POST its status record (plus ``input`` and
``webhook``) to the job's URL; anything but 200 is tried up to 2 more times, 10 s apart
(``BrokerSettings.webhook_retry_seconds`` × ``time_scale``)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx

from podbook.emulator.broker.limits import WEBHOOK_EXTRA_TRIES

log = logging.getLogger("podbook.emulator.broker")


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
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=10.0, follow_redirects=False)
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

    async def close(self) -> None:
        """Stop pending deliveries and close the HTTP client."""
        for task in list(self._tasks):
            task.cancel()
        if self._client is not None:
            await self._client.aclose()
