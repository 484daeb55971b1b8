"""The queue service as the emulator holds it: broker, worker supervision, the load balancer,
webhooks, limits.

Kept in ``Emulator.extras["queue"]``; ``routes.queue.queue_service`` finds it from a request.
``start``/``stop`` run in the application's lifespan.
"""

from __future__ import annotations

import logging
from typing import Any

from podbook.emulator.broker.autoscaler import Autoscaler
from podbook.emulator.broker.config import BrokerSettings
from podbook.emulator.broker.core import Broker, now_ms
from podbook.emulator.broker.endpoints import absolute_handler, start_command
from podbook.emulator.broker.jobs import Job
from podbook.emulator.broker.persistence import BrokerTables
from podbook.emulator.broker.queues import EndpointQueue
from podbook.emulator.broker.ratelimit import QueueRateLimiter
from podbook.emulator.broker.supervisor import Supervisor
from podbook.emulator.broker.webhooks import WebhookSender
from podbook.emulator.broker.workerplace import WorkerPlace
from podbook.emulator.loadbalancer.balancer import LoadBalancer
from podbook.emulator.settings import DEFAULT_ACCOUNT_ID
from podbook.emulator.store import Store

log = logging.getLogger("podbook.emulator.broker")

EXTRAS_KEY = "queue"


class QueueService:
    """Everything the queue routes need."""

    def __init__(self, settings: BrokerSettings, store: Store, place: WorkerPlace) -> None:
        self.settings = settings
        self.broker = Broker(settings, BrokerTables(store))
        self.limiter = QueueRateLimiter(settings.rate_limits)
        self.supervisor = Supervisor()
        self.autoscaler = Autoscaler(self.broker, lambda: self.url, place)
        self.balancer = LoadBalancer(settings.load_balancer)
        self.webhooks = WebhookSender(settings.webhook_retry_seconds * settings.time_scale)
        self.url = ""
        self.broker.on_job_ended = self._job_ended
        self.broker.on_demand = self._ensure_worker
        self._declare_endpoints()

    def _declare_endpoints(self) -> None:
        """``--endpoint NAME[=handler]``: define them for the default account (an existing
        one keeps its jobs; its handler follows the command line)."""
        for declared in self.settings.endpoints:
            handler = absolute_handler(declared.handler) if declared.handler else None
            queue = self.broker.endpoint(DEFAULT_ACCOUNT_ID, declared.name)
            if queue is None:
                self.broker.create_endpoint(DEFAULT_ACCOUNT_ID, declared.name, handler, {})
            elif not queue.record.get("builtin") and queue.record.get("handler") != handler:
                self.broker.update_endpoint(queue, handler=handler)

    def start(self, url: str) -> None:
        """On the running loop: restore jobs; start the workers of declared handler endpoints
        and of every handler endpoint whose restored queue holds jobs (built-ins too)."""
        self.url = url
        self.broker.start()
        self.autoscaler.start()
        for declared in self.settings.endpoints:
            queue = self.broker.endpoint(DEFAULT_ACCOUNT_ID, declared.name)
            if queue is not None and declared.handler:
                self._ensure_worker(queue)
        for queue in list(self.broker.queues.values()):
            if queue.queued:  # low-priority jobs alone never start a worker
                self._ensure_worker(queue)

    async def closing(self) -> None:
        """The server begins to shut down: release long-polls, stop supervised workers
        (before connections are drained, so they do not retry against a closing server)."""
        self.broker.release_polls()
        await self.supervisor.stop_all()
        await self.autoscaler.stop()
        await self.balancer.close()

    async def stop(self) -> None:
        """Stop supervised and scaled workers, webhooks and timers."""
        await self.supervisor.stop_all()
        await self.autoscaler.stop()
        await self.balancer.close()
        await self.webhooks.close()
        await self.broker.stop()

    def _ensure_worker(self, queue: EndpointQueue) -> None:
        if start_command(queue.record) is not None:  # scaled from its definition, at once
            self.autoscaler.scale(queue)
            return
        spec = queue.record.get("handler")
        if not spec or not self.url:
            return
        if queue.record.get("builtin"):
            concurrency = self.settings.worker_concurrency
        else:
            concurrency = max(1, int(queue.record.get("workers", {}).get("max") or 1))
        self.supervisor.ensure(
            queue.key,
            spec,
            self.url,
            concurrency,
            lambda: self.broker.mint_worker_key(queue, persist=False),
        )

    def _job_ended(self, job: Job) -> None:
        if job.webhook:
            body: dict[str, Any] = job.status_record(now_ms())
            body["input"] = job.input
            body["webhook"] = job.webhook
            self.webhooks.send(job.webhook, body)
