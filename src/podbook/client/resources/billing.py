"""Billing: time-bucketed spend, in aggregate (``list``) and per resource kind.

Each method takes a window as ``start_time``/``end_time`` (datetimes or RFC 3339 strings) or
``last_n`` buckets (the service refuses both with a 400), and a ``bucket_size`` (``hour``,
``day``, ``week``, ``month``, ``year``; the service's default is ``day``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from podbook.client._core import Call
from podbook.client.resources.base import AsyncResource, SyncResource, model_parser
from podbook.errors import InvalidRequest

if TYPE_CHECKING:
    from podbook.api import billing as wire

__all__ = ["AsyncBilling", "Billing", "billing_calls"]

# kind → (path suffix, response model name, id filter query name)
_KINDS: dict[str, tuple[str, str, str | None]] = {
    "all": ("", "ListBillingResponse", None),
    "pods": ("/pods", "ListPodBillingResponse", "podId"),
    "serverless": ("/serverless", "ListServerlessBillingResponse", "serverlessId"),
    "endpoints": ("/endpoints", "ListEndpointBillingResponse", None),
    "network-volumes": ("/network-volumes", "ListNetworkVolumeBillingResponse", "networkVolumeId"),
    "clusters": ("/clusters", "ListClusterBillingResponse", "clusterId"),
}


def _time(value: datetime | str) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise InvalidRequest(
                "start_time/end_time need a timezone, e.g. datetime(..., tzinfo=timezone.utc)",
                status=400,
            )
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return value


class billing_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the billing calls (no I/O)."""

    @staticmethod
    def query(
        kind: str = "all",
        *,
        start_time: datetime | str | None = None,
        end_time: datetime | str | None = None,
        last_n: int | None = None,
        bucket_size: str | None = None,
        resource_id: str | None = None,
    ) -> Call[Any]:
        """``GET /v2/billing[/{kind}]`` with the window, bucket size and id filter."""
        from podbook.api import billing as wire

        if kind not in _KINDS:
            raise InvalidRequest(
                f"unknown billing kind {kind!r}; use one of {', '.join(_KINDS)}", status=400
            )
        suffix, model_name, filter_name = _KINDS[kind]
        params: dict[str, str] = {}
        if start_time is not None:
            params["startTime"] = _time(start_time)
        if end_time is not None:
            params["endTime"] = _time(end_time)
        if last_n is not None:
            params["lastN"] = str(last_n)
        if bucket_size is not None:
            params["bucketSize"] = bucket_size
        if resource_id is not None:
            if filter_name is None:
                raise InvalidRequest(f"billing kind {kind!r} takes no id filter", status=400)
            params[filter_name] = resource_id
        model = getattr(wire, model_name)
        return Call("GET", "/v2/billing" + suffix, params=params, parse=model_parser(model))


class Billing(SyncResource):
    """``client.billing``: spend over time, all resources or one kind."""

    def list(self, **window: Any) -> wire.ListBillingResponse:
        """``GET /v2/billing``: every bucket with each cost component."""
        return self._request(billing_calls.query("all", **window))

    def kind(self, kind: str, *, resource_id: str | None = None, **window: Any) -> Any:
        """One kind's records (``pods``, ``serverless``, ``endpoints``, ...)."""
        return self._request(billing_calls.query(kind, resource_id=resource_id, **window))

    def pods(self, *, pod_id: str | None = None, **window: Any) -> wire.ListPodBillingResponse:
        """``GET /v2/billing/pods``: per pod per bucket."""
        return self.kind("pods", resource_id=pod_id, **window)

    def serverless(
        self, *, serverless_id: str | None = None, **window: Any
    ) -> wire.ListServerlessBillingResponse:
        """``GET /v2/billing/serverless``: per endpoint per bucket."""
        return self.kind("serverless", resource_id=serverless_id, **window)

    def endpoints(self, **window: Any) -> wire.ListEndpointBillingResponse:
        """``GET /v2/billing/endpoints``: public endpoint spend per bucket."""
        return self.kind("endpoints", **window)

    def network_volumes(
        self, *, network_volume_id: str | None = None, **window: Any
    ) -> wire.ListNetworkVolumeBillingResponse:
        """``GET /v2/billing/network-volumes``: per volume per bucket."""
        return self.kind("network-volumes", resource_id=network_volume_id, **window)

    def clusters(
        self, *, cluster_id: str | None = None, **window: Any
    ) -> wire.ListClusterBillingResponse:
        """``GET /v2/billing/clusters``: per cluster per bucket."""
        return self.kind("clusters", resource_id=cluster_id, **window)


class AsyncBilling(AsyncResource):
    """``client.billing`` of the :class:`AsyncClient`."""

    async def list(self, **window: Any) -> wire.ListBillingResponse:
        """``GET /v2/billing``: every bucket with each cost component."""
        return await self._request(billing_calls.query("all", **window))

    async def kind(self, kind: str, *, resource_id: str | None = None, **window: Any) -> Any:
        """One kind's records (``pods``, ``serverless``, ``endpoints``, ...)."""
        return await self._request(billing_calls.query(kind, resource_id=resource_id, **window))

    async def pods(
        self, *, pod_id: str | None = None, **window: Any
    ) -> wire.ListPodBillingResponse:
        """``GET /v2/billing/pods``: per pod per bucket."""
        return await self.kind("pods", resource_id=pod_id, **window)

    async def serverless(
        self, *, serverless_id: str | None = None, **window: Any
    ) -> wire.ListServerlessBillingResponse:
        """``GET /v2/billing/serverless``: per endpoint per bucket."""
        return await self.kind("serverless", resource_id=serverless_id, **window)

    async def endpoints(self, **window: Any) -> wire.ListEndpointBillingResponse:
        """``GET /v2/billing/endpoints``: public endpoint spend per bucket."""
        return await self.kind("endpoints", **window)

    async def network_volumes(
        self, *, network_volume_id: str | None = None, **window: Any
    ) -> wire.ListNetworkVolumeBillingResponse:
        """``GET /v2/billing/network-volumes``: per volume per bucket."""
        return await self.kind("network-volumes", resource_id=network_volume_id, **window)

    async def clusters(
        self, *, cluster_id: str | None = None, **window: Any
    ) -> wire.ListClusterBillingResponse:
        """``GET /v2/billing/clusters``: per cluster per bucket."""
        return await self.kind("clusters", resource_id=cluster_id, **window)
