"""The public catalog: GPU types (with availability), CPU flavors, data centers, templates;
lists and single entries (``gpu(id)``, ``cpu(id)``, ``datacenter(id)``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from podbook.client._core import Call
from podbook.client.resources.base import (
    AsyncResource,
    SyncResource,
    list_parser,
    model_parser,
    path_id,
)
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
    def gpu(gpu: Any, availability: bool = False, **filters: Any) -> Call[GpuType]:
        """``GET /v2/catalog/gpus/{id}`` (the filters of :meth:`gpus`)."""
        from podbook.api.catalog import GpuType

        params = catalog_calls.gpus(availability, **filters).params
        path = f"/v2/catalog/gpus/{path_id(gpu, 'GPU type id')}"
        return Call("GET", path, params=params, parse=model_parser(GpuType))

    @staticmethod
    def cpu(cpu: Any, availability: bool = False, **filters: Any) -> Call[CpuType]:
        """``GET /v2/catalog/cpus/{id}`` (the filters of :meth:`cpus`)."""
        from podbook.api.catalog import CpuType

        params = catalog_calls.cpus(availability, **filters).params
        path = f"/v2/catalog/cpus/{path_id(cpu, 'CPU flavor id')}"
        return Call("GET", path, params=params, parse=model_parser(CpuType))

    @staticmethod
    def datacenter(
        data_center: Any, *, include: str | Iterable[str] | None = None
    ) -> Call[DataCenter]:
        """``GET /v2/catalog/datacenters/{id}`` (``include``: GPU_AVAILABILITY, CPU_AVAILABILITY)."""
        from podbook.api.catalog import DataCenter

        path = f"/v2/catalog/datacenters/{path_id(data_center, 'data center id')}"
        params = _query(include=_csv(include)) or None
        return Call("GET", path, params=params, parse=model_parser(DataCenter))

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

    def gpu(self, gpu: GpuType | str, availability: bool = False, **filters: Any) -> GpuType:
        """One GPU type (the filters of :meth:`gpus`)."""
        return self._request(catalog_calls.gpu(gpu, availability, **filters))

    def cpu(self, cpu: CpuType | str, availability: bool = False, **filters: Any) -> CpuType:
        """One CPU flavor (the filters of :meth:`cpus`)."""
        return self._request(catalog_calls.cpu(cpu, availability, **filters))

    def datacenter(self, data_center: DataCenter | str, **filters: Any) -> DataCenter:
        """One data center (``include=`` for availability)."""
        return self._request(catalog_calls.datacenter(data_center, **filters))


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

    async def gpu(self, gpu: GpuType | str, availability: bool = False, **filters: Any) -> GpuType:
        """One GPU type."""
        return await self._request(catalog_calls.gpu(gpu, availability, **filters))

    async def cpu(self, cpu: CpuType | str, availability: bool = False, **filters: Any) -> CpuType:
        """One CPU flavor."""
        return await self._request(catalog_calls.cpu(cpu, availability, **filters))

    async def datacenter(self, data_center: DataCenter | str, **filters: Any) -> DataCenter:
        """One data center."""
        return await self._request(catalog_calls.datacenter(data_center, **filters))
