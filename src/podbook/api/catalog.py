"""The public catalog: GPU types, CPU flavors, data centers and templates."""

from __future__ import annotations

from pydantic import Field

from .base import ResponseModel
from .container import PodMounts
from .types import (
    AvailabilityLevel,
    Compliance,
    DataCenterRegion,
    GpuManufacturer,
    TemplateCategory,
    VolumeType,
)

__all__ = [
    "GpuPrice",
    "GpuMaxCount",
    "DataCenterAvailability",
    "CudaVersionAvailability",
    "GpuType",
    "ListGpuTypesResponse",
    "VcpuRange",
    "CpuPrice",
    "CpuType",
    "ListCpuTypesResponse",
    "CatalogResourceAvailability",
    "DataCenter",
    "ListDataCentersResponse",
    "Template",
    "ListTemplatesResponse",
]


class GpuPrice(ResponseModel):
    """USD per hour for one GPU, per cloud (``serverless`` when in a pool)."""

    secure: float
    community: float
    serverless: float | None = None


class GpuMaxCount(ResponseModel):
    """Most GPUs of this type on one pod, per cloud (a ceiling, not stock)."""

    secure: int
    community: int


class DataCenterAvailability(ResponseModel):
    """Stock of something in one data center."""

    id: str
    name: str
    availability: AvailabilityLevel


class CudaVersionAvailability(ResponseModel):
    """A CUDA version hosts of a GPU type report, and whether one of them has room now."""

    version: str
    available: bool


class GpuType(ResponseModel):
    """A GPU type; availability fields only with ``include=AVAILABILITY``."""

    id: str = Field(description="Use for pod creation, e.g. 'NVIDIA GeForce RTX 4090'.")
    name: str
    pool: str | None
    manufacturer: GpuManufacturer
    memory: int = Field(description="VRAM in GB.")
    secure: bool
    community: bool
    price: GpuPrice
    max_count: GpuMaxCount
    availability: AvailabilityLevel | None = None
    data_centers: list[DataCenterAvailability] | None = None
    cuda_versions: list[CudaVersionAvailability] | None = None


class ListGpuTypesResponse(ResponseModel):
    """``{"gpus": [...]}``."""

    gpus: list[GpuType]


class VcpuRange(ResponseModel):
    """Allowed vCPU counts of a flavor (powers of two within ``min``..``max``)."""

    min: int
    max: int


class CpuPrice(ResponseModel):
    """USD per hour per vCPU."""

    secure_per_vcpu: float
    serverless_per_vcpu: float


class CpuType(ResponseModel):
    """A CPU flavor (``cpu3c``, ``cpu5g``, ...)."""

    id: str
    name: str
    group: str
    vcpu: VcpuRange
    ram_gb_per_vcpu: float
    price: CpuPrice
    availability: AvailabilityLevel | None = None
    data_centers: list[DataCenterAvailability] | None = None


class ListCpuTypesResponse(ResponseModel):
    """``{"cpus": [...]}``."""

    cpus: list[CpuType]


class CatalogResourceAvailability(ResponseModel):
    """Stock of one GPU type or CPU flavor in a data center."""

    id: str
    name: str
    availability: AvailabilityLevel


class DataCenter(ResponseModel):
    """A data center; per-resource availability only when included."""

    id: str
    name: str
    region: DataCenterRegion
    global_network: bool
    network_volume_types: list[VolumeType]
    compliance: list[Compliance]
    gpu_availability: list[CatalogResourceAvailability] | None = None
    cpu_availability: list[CatalogResourceAvailability] | None = None


class ListDataCentersResponse(ResponseModel):
    """``{"dataCenters": [...]}``."""

    data_centers: list[DataCenter]


class Template(ResponseModel):
    """A pod or serverless template (own or public catalog)."""

    id: str
    name: str
    image: str
    args: str
    disk: int
    mounts: PodMounts
    ports: list[str]
    env: dict[str, str]
    registry: str | None
    serverless: bool
    public: bool
    category: TemplateCategory
    start_ssh: bool
    start_jupyter: bool
    allowed_cuda_versions: list[str]


class ListTemplatesResponse(ResponseModel):
    """``{"templates": [...]}``."""

    templates: list[Template]
