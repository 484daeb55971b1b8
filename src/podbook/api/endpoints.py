"""Serverless endpoints (``/v2/serverless``): the endpoint, its workers and its releases.

Requests are strict (unknown properties refused, nothing coerced); responses keep fields
they do not know. ``handler`` is the local emulator's extra (``path/to/handler.py[:fn]`` or
``package.module:fn``): the emulator starts and supervises a podbook worker running it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field

from .base import Omittable, RequestModel, ResponseModel
from .container import ContainerArgs, ContainerEnv, ContainerPorts, ProcessLimits

__all__ = [
    "DEFAULT_SCALING",
    "HANDLER_CODE_ENV",
    "LB_HEALTH_PATH",
    "LB_PATH_PREFIX",
    "RELEASE_FIELDS",
    "CreateEndpointRequest",
    "Endpoint",
    "EndpointWorkersRequest",
    "ListEndpointReleasesResponse",
    "ListEndpointWorkersResponse",
    "ListEndpointsResponse",
    "Release",
    "ReleaseDiffEntry",
    "RolloutSummary",
    "UpdateEndpointRequest",
    "Worker",
    "WorkerSummary",
    "load_balancer_url",
]

FlashBoot = Literal["OFF", "FLASHBOOT", "PRIORITY_FLASHBOOT"]
WorkerStatus = Literal["RUNNING", "IDLE", "INITIALIZING", "THROTTLED", "UNHEALTHY"]

HANDLER_CODE_ENV = "PODBOOK_HANDLER_CODE"
"""The ``env`` value a hot reload of ``%endpoint serve`` records its release with (the
served handler's name and a digest of its code; ``podbook.worker._reload``)."""
RELEASE_FIELDS = ("image", "args", "disk", "env", "ports", "registry", "gpu", "cpu", "handler")
"""The container and handler configuration: a change of any of them is a new release."""


class EndpointWorkersRequest(RequestModel):
    """``workers``: how many workers (``min`` ≤ ``max``) and their idle timeout in seconds."""

    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)
    idle_timeout: int | None = Field(default=None, ge=1, le=3600)

    def rule_violations(self) -> list[str]:
        """``min`` may not exceed ``max``."""
        if self.min is not None and self.max is not None and self.min > self.max:
            return [f"$.workers: min ({self.min}) is more than max ({self.max})"]
        return []


class QueueDelayScaling(RequestModel):
    """Scale on how long jobs wait (seconds)."""

    type: Literal["QUEUE_DELAY"]
    queue_delay: float = Field(ge=0.5)


class RequestCountScaling(RequestModel):
    """Scale on the number of requests per worker."""

    type: Literal["REQUEST_COUNT"]
    request_count: int = Field(ge=1)


Scaling = Annotated[QueueDelayScaling | RequestCountScaling, Field(discriminator="type")]

DEFAULT_SCALING: dict[str, dict[str, Any]] = {
    "QUEUE": {"type": "QUEUE_DELAY", "queueDelay": 4},
    "LOAD_BALANCER": {"type": "REQUEST_COUNT", "requestCount": 4},
}
"""The scaler an endpoint of each ``type`` gets when a create gives none (the reference
requires ``scaling`` on create; the values are those of its examples)."""


LB_PATH_PREFIX = "/lb"
"""Where a local emulator takes a load-balancing endpoint's requests:
``{emulator_url}/lb/{endpoint_id}/{path}`` (the service: ``https://{endpoint_id}.api.runpod.ai``)."""
LB_HEALTH_PATH = "/ping"
"""The health route a load-balancing worker serves (``HEALTH_CHECK_PATH`` changes it)."""
_SERVICE_QUEUE_HOST = "api.runpod.ai"


def load_balancer_url(queue_url: str, endpoint_id: str) -> str:
    """The base URL of load-balancing endpoint ``endpoint_id``: the service's own form
    (``https://{endpoint_id}.api.runpod.ai``) when ``queue_url`` is the service's queue host,
    else the emulator's path form (``{queue_url}/lb/{endpoint_id}``)."""
    base = queue_url.rstrip("/")
    parts = urlsplit(base)
    if parts.hostname == _SERVICE_QUEUE_HOST and parts.path in ("", "/"):
        return f"{parts.scheme}://{endpoint_id}.{parts.netloc}"
    return f"{base}{LB_PATH_PREFIX}/{endpoint_id}"


class _EndpointFields(ProcessLimits):
    """What create and update share (all optional; ``null`` is refused: omit instead).

    ``args``, ``env`` and ``ports`` have the limits of every container
    (:mod:`podbook.api.container`).
    """

    image: Omittable[str] = Field(default=None, min_length=1)
    args: Omittable[ContainerArgs] = None
    disk: Omittable[int] = Field(default=None, ge=1)
    env: Omittable[ContainerEnv] = None
    ports: Omittable[ContainerPorts] = None
    registry: str | None = None
    gpu: Omittable[dict[str, Any]] = None
    cpu: Omittable[list[dict[str, Any]]] = Field(default=None, min_length=1)
    workers: Omittable[EndpointWorkersRequest] = None
    scaling: Omittable[Scaling] = None
    data_center_ids: Omittable[list[str]] = None
    network_volumes: Omittable[list[str]] = None
    timeout: Omittable[int] = Field(default=None, ge=1)
    flashboot: Omittable[FlashBoot] = None
    template_id: Omittable[str] = Field(default=None, min_length=1)
    handler: Omittable[str] = Field(default=None, min_length=1)

    def rule_violations(self) -> list[str]:
        """Cross-field rules: workers' min/max; gpu and cpu are exclusive."""
        errors = self.workers.rule_violations() if self.workers is not None else []
        if self.gpu is not None and self.cpu is not None:
            errors.append("$.cpu: give either gpu or cpu, not both")
        return errors


class CreateEndpointRequest(_EndpointFields):
    """Body of ``POST /v2/serverless``."""

    name: str = Field(min_length=1)
    type: Omittable[Literal["QUEUE", "LOAD_BALANCER"]] = None


class UpdateEndpointRequest(_EndpointFields):
    """Body of ``PATCH /v2/serverless/{id}``: only the given fields change."""

    name: Omittable[str] = Field(default=None, min_length=1)


class Endpoint(ResponseModel):
    """A serverless endpoint."""

    id: str
    name: str
    type: str | None = None
    image: str | None = None
    args: str | None = None
    disk: int | None = None
    ports: list[str] | None = None
    registry: str | None = None
    workers: dict[str, Any] = Field(default_factory=dict)
    scaling: dict[str, Any] | None = None
    data_center_ids: list[str] = Field(default_factory=list)
    network_volumes: list[str] = Field(default_factory=list)
    timeout: int | None = None
    flashboot: str | None = None
    created_at: str | None = None
    request_urls: dict[str, str] | None = None
    """Where the service takes requests for this endpoint (``run``, ``status``, ... for a
    QUEUE endpoint; ``base`` and ``health`` for a load balancer). Read as given: the
    reference's own examples hold templates such as ``.../status/{job_id}``."""
    gpu: dict[str, Any] | None = None
    cpu: list[dict[str, Any]] | None = None
    env: dict[str, str] | None = None
    version: int | None = None


class ListEndpointsResponse(ResponseModel):
    """``{"endpoints": [...]}``."""

    endpoints: list[Endpoint]


class Worker(ResponseModel):
    """A worker serving an endpoint, and whether it runs the latest release."""

    id: str
    status: WorkerStatus | str
    is_stale: bool = False
    version: int | None = None
    gpu_count: int = 0
    image: str | None = None
    uptime_seconds: int | None = None
    started_at: str | None = None
    gpu_type_id: str | None = None
    """The GPU type the worker is placed on (None until it is placed)."""
    data_center_id: str | None = None
    """The data center the worker is placed in (None until it is placed)."""


class WorkerSummary(ResponseModel):
    """How many workers are in each state."""

    running: int = 0
    idle: int = 0
    initializing: int = 0
    throttled: int = 0
    unhealthy: int = 0
    total: int = 0


class ListEndpointWorkersResponse(ResponseModel):
    """``GET /v2/serverless/{id}/workers``."""

    workers: list[Worker]
    summary: WorkerSummary
    endpoint_version: int | None = None


class ReleaseDiffEntry(ResponseModel):
    """One changed field of a release (``field`` is a dotted path, e.g. ``env.MODEL``)."""

    field: str
    old: Any = None
    new: Any = None


class Release(ResponseModel):
    """One configuration version of an endpoint."""

    id: str
    version: int | None = None
    source: str = "MANUAL"
    worker_count: int = 0
    created_at: str
    diff: list[ReleaseDiffEntry] = Field(default_factory=list)
    build_id: str | None = None
    """The build that produced the release (``source`` ``GIT_BUILD``), else None."""
    created_by_user_id: str | None = None
    """The user who created the release, when known."""


class RolloutSummary(ResponseModel):
    """How far the latest release has reached the workers."""

    in_progress: bool = False
    workers_on_latest: int = 0
    workers_total: int = 0
    percent_on_latest: int = 100


class ListEndpointReleasesResponse(ResponseModel):
    """``GET /v2/serverless/{id}/releases``: newest first."""

    endpoint_version: int | None = None
    rollout: RolloutSummary
    releases: list[Release]
