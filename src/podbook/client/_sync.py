"""The synchronous face: :class:`Client`."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

import httpx

from podbook.client.config import SecretLike, Settings, resolve_settings
from podbook.client.core import DEFAULT_TIMEOUT, Call, ClientCore, RetryPolicy
from podbook.client.resources import (
    Account,
    Catalog,
    Clusters,
    NetworkVolumes,
    Pods,
    Registries,
    Templates,
)
from podbook.client.resources.billing import Billing
from podbook.client.resources.endpoints import Endpoints
from podbook.client.resources.queue import EndpointClient

if TYPE_CHECKING:
    from podbook.api.ratelimit import RateLimitState

__all__ = ["Client"]

T = TypeVar("T")


class Client:
    """A typed client of the pod cloud (the real service or the local emulator).

    ``Client()`` resolves its target from the environment (starting the local emulator when
    nothing is configured); ``Client(url=..., api_key=...)`` points at one service.
    Resources: ``pods``, ``clusters``, ``catalog``, ``account.ssh_keys``, ``registries``,
    ``templates``, ``network_volumes``.
    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        *,
        api_key: str | SecretLike | None = None,
        url: str | None = None,
        rest_url: str | None = None,
        queue_url: str | None = None,
        v1_url: str | None = None,
        local: bool | None = None,
        settings: Settings | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if settings is None:
            settings = resolve_settings(
                api_key=api_key,
                url=url,
                rest_url=rest_url,
                queue_url=queue_url,
                v1_url=v1_url,
                local=local,
            )
        self._core = ClientCore(settings, retry or RetryPolicy())
        self._http = httpx.Client(
            headers=self._core.default_headers(),
            timeout=timeout,
            transport=transport,
            follow_redirects=False,
        )
        self.pods = Pods(self)
        self.billing = Billing(self)
        self.clusters = Clusters(self)
        self.catalog = Catalog(self)
        self.account = Account(self)
        self.registries = Registries(self)
        self.templates = Templates(self)
        self.network_volumes = NetworkVolumes(self)
        self.endpoints = Endpoints(self)

    @property
    def settings(self) -> Settings:
        """The resolved target (URLs, where the key came from; the key stays hidden)."""
        return self._core.settings

    @property
    def target(self) -> str:
        """One line naming where this client points, e.g. ``"RunPod cloud (key from ...)"``."""
        return self._core.settings.describe()

    @property
    def rate_limit(self) -> RateLimitState | None:
        """The quota announced by the latest response (``RateLimit`` headers), or None."""
        return self._core.rate_limit

    def endpoint(self, endpoint_id: str) -> EndpointClient:
        """One serverless queue endpoint: ``client.endpoint("echo").run({...})``."""
        return EndpointClient(self, endpoint_id)

    def request(self, call: Call[T]) -> T:
        """Send ``call`` (retrying as the retry policy allows) and return its result."""
        attempt = 0
        waited = 0.0
        while True:
            attempt += 1
            request = self._core.build_request(self._http, call)
            try:
                response = self._http.send(request)
            except httpx.TransportError as exc:
                delay = self._core.retry.delay_after_error(call, exc, attempt, waited)
                if delay is None:
                    raise self._core.connection_failed(call, exc) from exc
            else:
                self._core.record_rate_limit(response)
                delay = self._core.retry.delay_after_response(call, response, attempt, waited)
                if delay is None:
                    return self._core.finish(call, response)
                response.close()
            time.sleep(delay)
            waited += delay

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<podbook.Client: {self.target}>"
