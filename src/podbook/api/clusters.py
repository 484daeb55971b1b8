"""Clusters: groups of identical pods in one data center, and a pod's membership in one."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from .base import Omittable, RequestModel, ResponseModel
from .container import ContainerFields, Mounts
from .types import ClusterType, PodClusterRole, PodStatus

__all__ = [
    "PodCluster",
    "ClusterCompute",
    "ClusterShape",
    "ClusterPodsSummary",
    "ClusterNetwork",
    "ClusterPrimary",
    "Cluster",
    "CreateClusterRequest",
    "UpdateClusterRequest",
    "ListClustersResponse",
]


class PodCluster(ResponseModel):
    """A pod's membership in a cluster (omitted for a standalone pod)."""

    id: str
    rank: int | None = Field(description="NODE_RANK; null until assigned. 0 is the primary.")
    role: PodClusterRole | None = Field(default=None, description="SLURM/RAY only.")
    ip: str | None = Field(default=None, description="Overlay address; omitted until assigned.")


class ClusterCompute(RequestModel):
    """Homogeneous shape: ``pod_count`` pods, each with ``gpu_count_per_pod`` GPUs of one type."""

    gpu_type_id: str = Field(min_length=1)
    gpu_count_per_pod: int = Field(ge=1)
    pod_count: int = Field(ge=2, le=250)


class ClusterShape(ResponseModel):
    """The ``compute`` of a cluster record: :class:`ClusterCompute` as the service returns it.

    Tolerant like every response model: the seed says ``compute`` has inner fields beyond
    the three named ones.
    """

    gpu_type_id: str
    gpu_count_per_pod: int
    pod_count: int


class ClusterPodsSummary(ResponseModel):
    """How many member pods exist, by status (statuses with no pods omitted)."""

    total: int
    by_status: dict[str, int]


class ClusterNetwork(ResponseModel):
    """The cluster's private overlay network."""

    cidr: str
    vxlan_id: int | None = None
    vxlan_port: int | None = None


class ClusterPrimary(ResponseModel):
    """The primary (rank 0) node; ``ssh_endpoint`` is ``host:port`` once RUNNING with SSH."""

    pod_id: str
    status: PodStatus
    ssh_endpoint: str | None = None


class Cluster(ResponseModel):
    """A cluster record (``GET /v2/clusters/{id}``)."""

    id: str
    name: str
    type: ClusterType
    compute: ClusterShape
    pods: ClusterPodsSummary
    created_at: datetime
    template: str | None = None
    data_center_id: str | None = None
    network: ClusterNetwork | None = None
    primary: ClusterPrimary | None = None


class CreateClusterRequest(ContainerFields):
    """Body of ``POST /v2/clusters``. There is no ``registry`` field for clusters."""

    name: str = Field(min_length=1)
    type: ClusterType
    compute: ClusterCompute
    data_center_ids: Omittable[list[str]] = None
    mounts: Omittable[Mounts] = None
    start_jupyter: bool = False
    start_ssh: bool = False

    def rule_violations(self) -> list[str]:
        """Cross-field rules the schema cannot express (each → 400)."""
        if self.mounts is not None and self.mounts.persistent is not None and self.mounts.network:
            return ["$.mounts: persistent and network mounts are mutually exclusive; send only one"]
        return []


class UpdateClusterRequest(RequestModel):
    """Body of ``PATCH /v2/clusters/{id}``: a rename; at least one property."""

    name: Omittable[str] = Field(default=None, min_length=1)

    @classmethod
    def schema_violations(cls, body: dict[str, Any]) -> list[str]:
        """An empty body is refused (``minProperties: 1``)."""
        return [] if body else ["$: at least one property is required (name)"]


class ListClustersResponse(ResponseModel):
    """``{"clusters": [...]}``."""

    clusters: list[Cluster]
