"""Joining and leaving a load-balancing endpoint's pool on the local emulator.

``POST {queue_url}/v2/{endpoint}/lb-worker/{worker_id}`` with the worker key names the
loopback ports and health route; the emulator polls the health route once and answers what
it found. The worker renews its registration every ``renewSeconds`` (an emulator restart
forgets registrations: a renewal brings the worker back) and ``DELETE``\\s it when it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from podbook.errors import ConfigError

__all__ = ["Registration", "RegistrationRefused", "Registered"]

logger = logging.getLogger("podbook.worker")

TIMEOUT_SECONDS = 10.0
_REFUSALS = (400, 401, 403, 404)


class RegistrationRefused(ConfigError):
    """The emulator refused the registration (wrong endpoint type, bad key, gone)."""


@dataclass(frozen=True)
class Registered:
    """What the emulator found when the worker registered."""

    state: str
    detail: str
    renew_seconds: float = 5.0

    @property
    def healthy(self) -> bool:
        """Whether the worker takes requests now."""
        return self.state == "HEALTHY"


@dataclass
class Registration:
    """One worker's registration with one endpoint."""

    queue_url: str
    endpoint_id: str
    worker_key: str = field(repr=False)
    worker_id: str
    ports: dict[str, Any] = field(default_factory=dict)
    """``{"port": N, "healthPort": M, "healthPath": "/ping"}``."""

    @property
    def url(self) -> str:
        """The registration route."""
        endpoint = quote(self.endpoint_id, safe="")
        worker = quote(self.worker_id, safe="")
        return f"{self.queue_url.rstrip('/')}/v2/{endpoint}/lb-worker/{worker}"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.worker_key}"}

    async def register(self, client: httpx.AsyncClient) -> Registered:
        """Register (or renew); ``RegistrationRefused`` or ``ConfigError`` when that fails."""
        try:
            response = await client.post(
                self.url, json=self.ports, headers=self._headers(), timeout=TIMEOUT_SECONDS
            )
        except httpx.HTTPError as exc:
            raise ConfigError(
                f"cannot reach the emulator at {self.queue_url} ({type(exc).__name__}); "
                "is it running?"
            ) from None
        if response.status_code in _REFUSALS:
            raise RegistrationRefused(_error_text(response))
        if response.status_code != 200:
            raise ConfigError(
                f"registering answered {response.status_code}: {_error_text(response)}"
            )
        body = response.json()
        return Registered(
            state=str(body.get("state", "")),
            detail=str(body.get("detail", "")),
            renew_seconds=float(body.get("renewSeconds") or 5.0),
        )

    async def renew_forever(self, client: httpx.AsyncClient, every: float) -> None:
        """Renew until cancelled; a refusal ends the loop (raised), an unreachable emulator
        is tried again at the next turn."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.register(client)
            except RegistrationRefused:
                raise
            except ConfigError as exc:
                logger.warning("worker %s: renewing failed: %s", self.worker_id, exc)

    async def deregister(self, client: httpx.AsyncClient) -> None:
        """Leave the pool (best effort: the emulator also notices a worker that is gone)."""
        with contextlib.suppress(httpx.HTTPError):
            await client.delete(self.url, headers=self._headers(), timeout=2.0)


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or f"HTTP {response.status_code}"
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"]
    return str(body)[:200]
