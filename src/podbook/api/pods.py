"""Pods: the pod record, its create/update/action requests and the list wrapper."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import Field, model_validator

from .base import Omittable, RequestModel, ResponseModel, response_record
from .clusters import PodCluster
from .container import ContainerFields, Mounts, PodMounts
from .types import Cloud, CudaVersion, MinCudaVersion, PodAction, PodStatus, PowerOfTwo

__all__ = [
    "GpuConfig",
    "CreateGpuConfig",
    "CpuConfig",
    "CreateCpuConfig",
    "PodSshEndpoint",
    "PodSsh",
    "PodGlobalNetworking",
    "Utilization",
    "PodGpuUtilization",
    "PodRuntimePort",
    "PodRuntime",
    "Pod",
    "CreatePodRequest",
    "UpdatePodRequest",
    "PodActionRequest",
    "ListPodsResponse",
    "CUDA_FIELDS",
]

CUDA_FIELDS: tuple[str, str] = ("allowedCudaVersions", "minCudaVersion")
"""Wire names of the CUDA host constraints (GPU pods only)."""

_CREATE_ONLY_HINT = "a create-time flag; it is never returned and cannot be changed by PATCH"


# --- compute -------------------------------------------------------------------------------


@response_record
class GpuConfig:
    """The GPU shape of a pod record."""

    id: str
    count: int = 1


class CreateGpuConfig(RequestModel):
    """The ``gpu`` of a create request, with the CUDA host constraints."""

    id: str = Field(description="GPU type id, e.g. 'NVIDIA GeForce RTX 4090'.")
    count: int = Field(default=1, ge=1)
    allowed_cuda_versions: Omittable[list[CudaVersion]] = Field(
        default=None, description="Exact CUDA versions accepted; [] means no constraint."
    )
    min_cuda_version: Omittable[MinCudaVersion] = Field(
        default=None, description="Numeric floor; a bare major means any release of it."
    )

    def has_cuda_constraint(self) -> bool:
        """Whether either CUDA field was sent (an explicit ``[]`` counts as sent)."""
        return self.allowed_cuda_versions is not None or self.min_cuda_version is not None


@response_record
class CpuConfig:
    """The CPU shape of a pod record; ``memory`` (GB) is derived from the flavor."""

    id: str
    vcpu_count: int
    memory: int


class CreateCpuConfig(RequestModel):
    """The ``cpu`` of a create request: flavor and a power-of-two vCPU count, nothing else."""

    id: str = Field(min_length=1, description="CPU flavor id from GET /v2/catalog/cpus.")
    vcpu_count: PowerOfTwo = Field(ge=2)


# --- ssh, networking, runtime --------------------------------------------------------------


@response_record
class PodSshEndpoint:
    """One way to reach the pod over SSH, with a ready-to-run ``command``."""

    host: str
    port: int
    username: str
    command: str


@response_record
class PodSsh:
    """``proxy`` once the pod has a machine; ``direct`` while RUNNING with ``22/tcp``."""

    proxy: PodSshEndpoint | None
    direct: PodSshEndpoint | None
    unavailable: str | None = None
    """Why no command is shown although the pod may run (podbook's emulator: no SSH server
    serves this pod, so a command would reach something else)."""


@response_record
class PodGlobalNetworking:
    """Global networking; ``ip`` and ``internal_dns`` only when enabled."""

    enabled: bool
    ip: str | None = None
    internal_dns: str | None = None


@response_record
class Utilization:
    """A utilization percentage 0..100."""

    util: int | None = None


@response_record
class PodGpuUtilization:
    """Per-GPU utilization percentages."""

    util: int | None = None
    memory_util: int | None = None


@response_record
class PodRuntimePort:
    """A live port mapping: container ``private`` port → host ``public`` port on ``ip``."""

    private: int | None = None
    public: int | None = None
    type: str | None = None
    ip: str | None = None


@response_record
class PodRuntime:
    """Live metrics of a RUNNING pod (every field optional)."""

    uptime: int | None = None
    gpus: list[PodGpuUtilization] | None = None
    cpu: Utilization | None = None
    memory: Utilization | None = None
    ports: list[PodRuntimePort] | None = None


# --- the pod record ------------------------------------------------------------------------


class Pod(ResponseModel):
    """A pod as every pod read returns it."""

    id: str
    name: str
    status: PodStatus
    actions: list[PodAction]
    image: str
    args: str
    disk: int
    mounts: PodMounts
    ports: list[str]
    env: dict[str, str]
    registry: str | None
    cloud: Cloud
    data_center_id: str | None
    ssh: PodSsh
    template: str | None
    cost: float
    locked: bool
    global_networking: PodGlobalNetworking
    runtime: PodRuntime | None
    created_at: datetime
    started_at: datetime | None
    gpu: GpuConfig | None = Field(default=None, description="GPU pods only.")
    cpu: CpuConfig | None = Field(default=None, description="CPU pods only.")
    cuda_version: str | None = Field(default=None, description="Reported by the host.")
    cluster: PodCluster | None = Field(default=None, description="Cluster members only.")


class ListPodsResponse(ResponseModel):
    """``{"pods": [...]}``."""

    pods: list[Pod]


# --- requests ------------------------------------------------------------------------------


class CreatePodRequest(ContainerFields):
    """Body of ``POST /v2/pods``.

    Exactly one of ``gpu``/``cpu``; ``image`` unless ``template_id``. The CUDA constraints
    belong in ``gpu`` (as the service's schema has them); the seed's top-level
    ``allowedCudaVersions``/``minCudaVersion`` are accepted too and moved into ``gpu``.
    """

    name: str = Field(min_length=1)
    template_id: Omittable[str] = Field(default=None, min_length=1)
    registry: str | None = Field(default=None, description="Registry credential id.")
    mounts: Omittable[Mounts] = None
    gpu: Omittable[CreateGpuConfig] = None
    cpu: Omittable[CreateCpuConfig] = None
    cloud: Cloud = "SECURE"
    data_center_ids: Omittable[list[str]] = None
    allowed_cuda_versions: Omittable[list[CudaVersion]] = Field(
        default=None, description="Seed form; prefer gpu.allowed_cuda_versions."
    )
    min_cuda_version: Omittable[MinCudaVersion] = Field(
        default=None, description="Seed form; prefer gpu.min_cuda_version."
    )
    global_networking: bool = False
    start_ssh: bool = False
    start_jupyter: bool = False

    @model_validator(mode="after")
    def _move_cuda_into_gpu(self) -> CreatePodRequest:
        """Move the seed's top-level CUDA fields into ``gpu`` when that is unambiguous.

        Ambiguous cases (a CPU pod, or constraints in both places) are left for
        :meth:`rule_violations` to refuse.
        """
        update: dict[str, Any] = {}
        if self.allowed_cuda_versions is not None:
            update["allowed_cuda_versions"] = self.allowed_cuda_versions
        if self.min_cuda_version is not None:
            update["min_cuda_version"] = self.min_cuda_version
        gpu = self.gpu
        if not update or gpu is None or self.cpu is not None or gpu.has_cuda_constraint():
            return self
        self.gpu = gpu.model_copy(update=update)
        self.allowed_cuda_versions = None
        self.min_cuda_version = None
        self.model_fields_set.difference_update({"allowed_cuda_versions", "min_cuda_version"})
        return self

    @classmethod
    def schema_violations(cls, body: dict[str, Any]) -> list[str]:
        """``image`` is required unless ``templateId`` is set."""
        if "image" not in body and "templateId" not in body:
            return ["$.image: is required unless templateId is set"]
        return []

    @classmethod
    def misplaced_properties(cls, body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """CUDA constraints inside ``cpu`` are a rule violation (400), not an unknown property."""
        cpu = body.get("cpu")
        if not isinstance(cpu, dict) or not any(name in cpu for name in CUDA_FIELDS):
            return body, []
        errors = [
            f"$.cpu.{name}: CUDA constraints apply to GPU pods only; remove it for a CPU pod"
            for name in CUDA_FIELDS
            if name in cpu
        ]
        cleaned = {key: value for key, value in cpu.items() if key not in CUDA_FIELDS}
        return {**body, "cpu": cleaned}, errors

    def rule_violations(self) -> list[str]:
        """The seed's cross-field rules (each → 400)."""
        errors: list[str] = []
        if self.gpu is not None and self.cpu is not None:
            errors.append("$: gpu and cpu are mutually exclusive; send exactly one of them")
        elif self.gpu is None and self.cpu is None:
            errors.append(
                '$: one of gpu or cpu is required (e.g. "gpu": {"id": "NVIDIA GeForce RTX 4090"}'
                ' or "cpu": {"id": "cpu3c", "vcpuCount": 2})'
            )
        top_level = [
            wire
            for wire, value in zip(
                CUDA_FIELDS, (self.allowed_cuda_versions, self.min_cuda_version), strict=True
            )
            if value is not None
        ]
        if self.cpu is not None:
            errors.extend(
                f"$.{wire}: CUDA constraints apply to GPU pods only; remove it for a CPU pod"
                for wire in top_level
            )
        elif top_level and self.gpu is not None:
            errors.extend(
                f"$.{wire}: CUDA constraints are sent both at the top level and in gpu;"
                " send them in gpu only"
                for wire in top_level
            )
        if self.gpu is not None and self.gpu.allowed_cuda_versions and self.gpu.min_cuda_version:
            errors.append(
                "$.gpu: allowedCudaVersions and minCudaVersion are mutually exclusive; send one"
                " (an empty allowedCudaVersions may accompany minCudaVersion)"
            )
        if self.mounts is not None:
            if self.mounts.persistent is not None and self.mounts.network:
                errors.append(
                    "$.mounts: persistent and network mounts are mutually exclusive; send only one"
                )
            if self.mounts.persistent is not None and self.cpu is not None:
                errors.append(
                    "$.mounts.persistent: not available on CPU pods; use a network volume"
                    " (mounts.network) instead"
                )
        return errors


class UpdatePodRequest(ContainerFields):
    """Body of ``PATCH /v2/pods/{id}`` (merge patch; omitted properties are unchanged).

    ``startSsh``/``startJupyter`` are create-time flags and are refused here. The mount rules
    that need the existing pod are in :func:`podbook.api.validation.check_patch_mounts`.
    """

    property_hints: ClassVar[dict[str, str]] = {
        "startSsh": _CREATE_ONLY_HINT,
        "startJupyter": _CREATE_ONLY_HINT,
    }

    name: Omittable[str] = Field(default=None, min_length=1)
    registry: str | None = Field(default=None, description="Registry credential id.")
    locked: Omittable[bool] = None
    global_networking: Omittable[bool] = None
    mounts: Omittable[Mounts] = None
    template_id: Omittable[str] = None

    def rule_violations(self) -> list[str]:
        """PATCH mount rules that need no existing pod (each → 400)."""
        errors: list[str] = []
        if self.mounts is not None:
            if self.mounts.persistent is not None and self.mounts.network:
                errors.append(
                    "$.mounts: persistent and network mounts are mutually exclusive; send only one"
                )
            if self.mounts.network is not None and not self.mounts.network:
                errors.append(
                    "$.mounts.network: an empty list cannot clear the mount (clearing mounts is"
                    " unsupported); omit mounts to keep the current one"
                )
        return errors


class PodActionRequest(RequestModel):
    """Body of ``POST /v2/pods/{id}/action``: ``{"action": "stop"}``."""

    action: PodAction
