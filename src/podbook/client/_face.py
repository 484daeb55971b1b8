"""What :class:`~podbook.client.Client` and :class:`~podbook.client.AsyncClient` share: how
they are built (the target resolved, one :class:`~podbook.client._core.ClientCore`, one httpx
client, the resources) and what they tell about themselves. Each face adds only its httpx
client class and its way to send and sleep."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import httpx

from podbook.client._core import DEFAULT_TIMEOUT, ClientCore, RetryPolicy
from podbook.client.config import SecretLike, Settings, resolve_settings
from podbook.client.resources import (
    Account,
    AsyncAccount,
    AsyncCatalog,
    AsyncClusters,
    AsyncNetworkVolumes,
    AsyncPods,
    AsyncRegistries,
    AsyncTemplates,
    Catalog,
    Clusters,
    NetworkVolumes,
    Pods,
    Registries,
    Templates,
)
from podbook.client.resources.billing import AsyncBilling, Billing
from podbook.client.resources.endpoints import AsyncEndpoints, Endpoints

if TYPE_CHECKING:
    from podbook.api.ratelimit import RateLimitState
    from podbook.client._async import AsyncClient
    from podbook.client._sync import Client

__all__ = ["Area", "ClientFace"]

S = TypeVar("S")
A = TypeVar("A")
HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)
TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)


class Area(Generic[S, A]):
    """A resource area of both faces, declared once: ``client.pods`` is a ``Pods`` on a
    :class:`~podbook.client.Client`, an ``AsyncPods`` on an
    :class:`~podbook.client.AsyncClient`. Each client builds its own when it is built."""

    def __init__(self, sync: type[S], asynchronous: type[A]) -> None:
        self.sync = sync
        self.asynchronous = asynchronous
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def build(self, client: ClientFace[Any, Any]) -> S | A:
        """The area's resource of ``client``'s face."""
        face = self.asynchronous if client._http_class is httpx.AsyncClient else self.sync
        return face(client)  # type: ignore[call-arg]

    @overload
    def __get__(self, client: None, owner: type) -> Area[S, A]: ...

    @overload
    def __get__(self, client: AsyncClient, owner: type) -> A: ...

    @overload
    def __get__(self, client: Client, owner: type) -> S: ...

    def __get__(self, client: Any, owner: type) -> Any:
        """On a client, its resource (built with the client); on the class, the area."""
        if client is None:
            return self
        return vars(client)[self.name]


class ClientFace(Generic[HttpT, TransportT]):
    """The part of a client face that does not send: how it is built, its resources, its
    target, retry policy and latest quota. A face names its httpx client class
    (``_http_class``)."""

    _http_class: type[HttpT]

    pods = Area(Pods, AsyncPods)
    billing = Area(Billing, AsyncBilling)
    clusters = Area(Clusters, AsyncClusters)
    catalog = Area(Catalog, AsyncCatalog)
    account = Area(Account, AsyncAccount)
    registries = Area(Registries, AsyncRegistries)
    templates = Area(Templates, AsyncTemplates)
    network_volumes = Area(NetworkVolumes, AsyncNetworkVolumes)
    endpoints = Area(Endpoints, AsyncEndpoints)

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
        for name, area in vars(ClientFace).items():
            if isinstance(area, Area):
                vars(self)[name] = area.build(self)

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
