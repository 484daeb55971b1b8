"""The public catalog: GPU types (with availability), CPU flavors, data centers, templates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from podbook.client.core import Call
from podbook.client.resources.base import AsyncResource, SyncResource, list_parser
from podbook.errors import InvalidRequest

if TYPE_CHECKING:
    from podbook.api.catalog import CpuType, DataCenter, GpuType, Template

__all__ = ["AsyncCatalog", "Catalog", "catalog_calls"]


def _csv(values: str | Iterable[Any] | None) -> str | None:
    if values is None:
        return None
    if isinstance(values, str):
        return values
    return ",".join(str(v) for v in values)


def _query(**params: Any) -> dict[str, str]:
    query: dict[str, str] = {}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            query[name] = "true" if value else "false"
        else:
            query[name] = str(value)
    return query


class catalog_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the catalog calls (no I/O)."""

    @staticmethod
    def gpus(
        availability: bool = False,
        *,
        product: str | Iterable[str] | None = None,
        count: int | None = None,
        cloud: str | None = None,
        country_codes: str | Iterable[str] | None = None,
        cuda_versions: str | Iterable[str] | None = None,
        min_cuda_version: str | None = None,
    ) -> Call[list[GpuType]]:
        """``GET /v2/catalog/gpus``; any availability filter implies ``include=AVAILABILITY``.

        With availability the product context defaults to ``POD``.
        """
        from podbook.api.catalog import GpuType

        filters = (product, count, cloud, country_codes, cuda_versions, min_cuda_version)
        if any(f is not None for f in filters):
            availability = True
        if cuda_versions is not None and min_cuda_version is not None:
            raise InvalidRequest("pass cuda_versions or min_cuda_version, not both", status=400)
        params = (
            _query(
                include="AVAILABILITY",
                product=_csv(product) or "POD",
                count=count,
                cloud=cloud,
                countryCodes=_csv(country_codes),
                cudaVersions=_csv(cuda_versions),
                minCudaVersion=min_cuda_version,
            )
            if availability
            else None
        )
        return Call("GET", "/v2/catalog/gpus", params=params, parse=list_parser(GpuType, "gpus"))

    @staticmethod
    def cpus(
        availability: bool = False,
        *,
        product: str | Iterable[str] | None = None,
        vcpu_count: int | None = None,
    ) -> Call[list[CpuType]]:
        """``GET /v2/catalog/cpus``; a filter implies ``include=AVAILABILITY``."""
        from podbook.api.catalog import CpuType

        if product is not None or vcpu_count is not None:
            availability = True
        params = (
            _query(include="AVAILABILITY", product=_csv(product) or "POD", vcpuCount=vcpu_count)
            if availability
            else None
        )
        return Call("GET", "/v2/catalog/cpus", params=params, parse=list_parser(CpuType, "cpus"))

    @staticmethod
    def datacenters(
        *,
        global_network: bool | None = None,
        regions: str | Iterable[str] | None = None,
        include: str | Iterable[str] | None = None,
    ) -> Call[list[DataCenter]]:
        """``GET /v2/catalog/datacenters`` (filter by ``globalNetwork``, ``regions``)."""
        from podbook.api.catalog import DataCenter

        params = _query(globalNetwork=global_network, regions=_csv(regions), include=_csv(include))
        return Call(
            "GET",
            "/v2/catalog/datacenters",
            params=params or None,
            parse=list_parser(DataCenter, "dataCenters"),
        )

    @staticmethod
    def templates(source: str | None = None) -> Call[list[Template]]:
        """``GET /v2/catalog/templates`` (``source``: official, verified or community)."""
        from podbook.api.catalog import Template

        params = _query(source=source) or None
        return Call(
            "GET",
            "/v2/catalog/templates",
            params=params,
            parse=list_parser(Template, "templates"),
        )


class Catalog(SyncResource):
    """``client.catalog``: what can be rented, and where."""

    def gpus(self, availability: bool = False, **filters: Any) -> list[GpuType]:
        """GPU types; with ``availability=True`` (or any filter: ``product``, ``count``,
        ``cloud``, ``country_codes``, ``cuda_versions``, ``min_cuda_version``) each carries
        its availability and ``cudaVersions``."""
        return self._request(catalog_calls.gpus(availability, **filters))

    def cpus(self, availability: bool = False, **filters: Any) -> list[CpuType]:
        """CPU flavors (``product``, ``vcpu_count`` imply availability)."""
        return self._request(catalog_calls.cpus(availability, **filters))

    def datacenters(self, **filters: Any) -> list[DataCenter]:
        """Data centers, each with its ``globalNetwork`` indicator."""
        return self._request(catalog_calls.datacenters(**filters))

    def templates(self, source: str | None = None) -> list[Template]:
        """Public catalog templates."""
        return self._request(catalog_calls.templates(source))


class AsyncCatalog(AsyncResource):
    """``client.catalog`` of the :class:`AsyncClient`."""

    async def gpus(self, availability: bool = False, **filters: Any) -> list[GpuType]:
        """GPU types (see :meth:`Catalog.gpus`)."""
        return await self._request(catalog_calls.gpus(availability, **filters))

    async def cpus(self, availability: bool = False, **filters: Any) -> list[CpuType]:
        """CPU flavors."""
        return await self._request(catalog_calls.cpus(availability, **filters))

    async def datacenters(self, **filters: Any) -> list[DataCenter]:
        """Data centers."""
        return await self._request(catalog_calls.datacenters(**filters))

    async def templates(self, source: str | None = None) -> list[Template]:
        """Public catalog templates."""
        return await self._request(catalog_calls.templates(source))
