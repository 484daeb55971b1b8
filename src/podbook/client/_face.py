"""What :class:`~podbook.client.Client` and :class:`~podbook.client.AsyncClient` share:
how they are built (the target resolved, one :class:`~podbook.client._core.ClientCore`, one
httpx client, the resources) and what they tell about themselves. Each face adds only its
httpx client class, its resources and its way to send and sleep."""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

import httpx

from podbook.client._core import DEFAULT_TIMEOUT, ClientCore, RetryPolicy
from podbook.client.config import SecretLike, Settings, resolve_settings

if TYPE_CHECKING:
    from podbook.api.ratelimit import RateLimitState

__all__ = ["ClientFace"]

HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)
TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)


class ClientFace(Generic[HttpT, TransportT]):
    """The part of a client face that does not send: its target, retry policy, latest quota.

    A face names its httpx client class (``_http_class``) and opens its resources in
    ``_open_resources``.
    """

    _http_class: type[HttpT]

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
        transport: TransportT | None = None,
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
        self._http: HttpT = self._http_class(
            headers=self._core.default_headers(),
            timeout=timeout,
            transport=transport,  # type: ignore[arg-type]  # the face's own transport class
            follow_redirects=False,
        )
        self._open_resources()

    def _open_resources(self) -> None:
        """Set the face's resources (``self.pods = Pods(self)``, ...)."""
        raise NotImplementedError

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

    @property
    def retry(self) -> RetryPolicy:
        """When calls are tried again (a call's own ``Call.retry`` wins)."""
        return self._core.retry

    def __repr__(self) -> str:
        return f"<podbook.{type(self).__name__}: {self.target}>"
