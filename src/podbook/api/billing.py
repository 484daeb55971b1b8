"""Billing: time-bucketed spend, in aggregate and per resource kind (``/v2/billing/...``).

Every record is a half-open bucket ``[startTime, endTime)`` with amounts in USD. The query
takes ``startTime``/``endTime`` or ``lastN`` (never both) and a ``bucketSize``; the resolved,
bucket-aligned window is echoed in ``metadata.query``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from .base import ResponseModel

__all__ = [
    "BILLING_KINDS",
    "BUCKET_SIZES",
    "BillingKind",
    "BucketSize",
    "BillingAmounts",
    "BillingRecord",
    "BillingQuery",
    "BillingMetadata",
    "ListBillingResponse",
    "PodBillingAmounts",
    "PodBillingRecord",
    "PodBillingMetadata",
    "ListPodBillingResponse",
    "ServerlessBillingAmounts",
    "ServerlessBillingRecord",
    "ServerlessBillingMetadata",
    "ListServerlessBillingResponse",
    "EndpointBillingAmounts",
    "EndpointBillingRecord",
    "EndpointBillingMetadata",
    "ListEndpointBillingResponse",
    "NetworkVolumeBillingAmounts",
    "NetworkVolumeBillingRecord",
    "NetworkVolumeBillingMetadata",
    "ListNetworkVolumeBillingResponse",
    "ClusterBillingAmounts",
    "ClusterBillingRecord",
    "ClusterBillingMetadata",
    "ListClusterBillingResponse",
]

BucketSize = Literal["hour", "day", "week", "month", "year"]
BUCKET_SIZES: tuple[str, ...] = ("hour", "day", "week", "month", "year")

BillingKind = Literal["pods", "serverless", "endpoints", "network-volumes", "clusters"]
BILLING_KINDS: tuple[str, ...] = ("pods", "serverless", "endpoints", "network-volumes", "clusters")


class _TimeRange(ResponseModel):
    start_time: datetime
    end_time: datetime


class BillingQuery(_TimeRange):
    """The resolved, bucket-aligned window and bucket size (plus the filter, if any)."""

    bucket_size: BucketSize
    pod_id: str | None = None
    serverless_id: str | None = None
    network_volume_id: str | None = None
    cluster_id: str | None = None


class BillingAmounts(ResponseModel):
    """Spend across every billable resource, each component broken out."""

    total_amount: float
    pod_gpu_amount: float
    pod_cpu_amount: float
    pod_disk_amount: float
    serverless_gpu_amount: float
    serverless_cpu_amount: float
    serverless_disk_amount: float
    serverless_fee_amount: float
    storage_standard_amount: float
    storage_high_performance_amount: float
    endpoint_amount: float
    cluster_gpu_amount: float
    cluster_disk_amount: float
    cluster_networking_amount: float


class BillingRecord(_TimeRange, BillingAmounts):
    """One bucket of ``GET /v2/billing``."""


class BillingMetadata(ResponseModel):
    """The resolved query, record count and totals over the records."""

    query: BillingQuery
    record_count: int
    totals: BillingAmounts


class ListBillingResponse(ResponseModel):
    """``GET /v2/billing``."""

    records: list[BillingRecord]
    metadata: BillingMetadata


class PodBillingAmounts(ResponseModel):
    """Pod cost components (GPU and CPU pods)."""

    total_amount: float
    gpu_amount: float
    cpu_amount: float
    disk_amount: float


class PodBillingRecord(_TimeRange, PodBillingAmounts):
    """One pod in one bucket."""

    pod_id: str


class PodBillingMetadata(BillingMetadata):
    """Metadata of ``GET /v2/billing/pods``."""

    totals: PodBillingAmounts  # type: ignore[assignment]
    unique_pod_count: int


class ListPodBillingResponse(ResponseModel):
    """``GET /v2/billing/pods``."""

    records: list[PodBillingRecord]
    metadata: PodBillingMetadata


class ServerlessBillingAmounts(ResponseModel):
    """Serverless cost components."""

    total_amount: float
    gpu_amount: float
    cpu_amount: float
    disk_amount: float
    fee_amount: float


class ServerlessBillingRecord(_TimeRange, ServerlessBillingAmounts):
    """One serverless endpoint in one bucket."""

    serverless_id: str


class ServerlessBillingMetadata(BillingMetadata):
    """Metadata of ``GET /v2/billing/serverless``."""

    totals: ServerlessBillingAmounts  # type: ignore[assignment]
    unique_serverless_count: int


class ListServerlessBillingResponse(ResponseModel):
    """``GET /v2/billing/serverless``."""

    records: list[ServerlessBillingRecord]
    metadata: ServerlessBillingMetadata


class EndpointBillingAmounts(ResponseModel):
    """Public endpoint cost."""

    total_amount: float


class EndpointBillingRecord(_TimeRange, EndpointBillingAmounts):
    """One bucket of public endpoint spend."""


class EndpointBillingMetadata(BillingMetadata):
    """Metadata of ``GET /v2/billing/endpoints``."""

    totals: EndpointBillingAmounts  # type: ignore[assignment]


class ListEndpointBillingResponse(ResponseModel):
    """``GET /v2/billing/endpoints``."""

    records: list[EndpointBillingRecord]
    metadata: EndpointBillingMetadata


class NetworkVolumeBillingAmounts(ResponseModel):
    """Network volume storage cost."""

    total_amount: float
    standard_amount: float
    high_performance_amount: float


class NetworkVolumeBillingRecord(_TimeRange, NetworkVolumeBillingAmounts):
    """One network volume in one bucket."""

    network_volume_id: str


class NetworkVolumeBillingMetadata(BillingMetadata):
    """Metadata of ``GET /v2/billing/network-volumes``."""

    totals: NetworkVolumeBillingAmounts  # type: ignore[assignment]
    unique_network_volume_count: int


class ListNetworkVolumeBillingResponse(ResponseModel):
    """``GET /v2/billing/network-volumes``."""

    records: list[NetworkVolumeBillingRecord]
    metadata: NetworkVolumeBillingMetadata


class ClusterBillingAmounts(ResponseModel):
    """Cluster cost components (GPU only)."""

    total_amount: float
    gpu_amount: float
    disk_amount: float
    networking_amount: float


class ClusterBillingRecord(_TimeRange, ClusterBillingAmounts):
    """One cluster in one bucket."""

    cluster_id: str


class ClusterBillingMetadata(BillingMetadata):
    """Metadata of ``GET /v2/billing/clusters``."""

    totals: ClusterBillingAmounts  # type: ignore[assignment]
    unique_cluster_count: int


class ListClusterBillingResponse(ResponseModel):
    """``GET /v2/billing/clusters``."""

    records: list[ClusterBillingRecord]
    metadata: ClusterBillingMetadata
