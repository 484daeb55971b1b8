"""Templates (own CRUD) and network volume updates: the request bodies of this area.

The readable :class:`~podbook.api.catalog.Template` record is shared with the public catalog;
network volume records and creates live in :mod:`podbook.api.account`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from .base import Omittable, RequestModel
from .container import ContainerFields, TemplateMounts
from .types import CudaVersion, TemplateCategory

__all__ = ["CreateTemplateRequest", "UpdateTemplateRequest", "UpdateNetworkVolumeRequest"]


class CreateTemplateRequest(ContainerFields):
    """Body of ``POST /v2/templates``: ``name`` and ``image`` required.

    ``isServerless`` (the older name) is accepted for ``serverless``; ``startSsh`` and
    ``startJupyter`` default to true, as for console-created templates.
    """

    name: str = Field(min_length=1)
    image: str = Field(min_length=1)  # type: ignore[assignment]
    registry: str | None = Field(default=None, description="Registry credential id.")
    mounts: Omittable[TemplateMounts] = None
    allowed_cuda_versions: Omittable[list[CudaVersion]] = None
    category: TemplateCategory = "NVIDIA"
    public: bool = False
    serverless: Omittable[bool] = None
    is_serverless: Omittable[bool] = None
    start_ssh: bool = True
    start_jupyter: bool = True

    def rule_violations(self) -> list[str]:
        """``serverless`` and ``isServerless`` must agree when both are sent."""
        both = self.serverless is not None and self.is_serverless is not None
        if both and self.serverless != self.is_serverless:
            return ["$.isServerless: disagrees with serverless; send only one of them"]
        return []


class UpdateTemplateRequest(ContainerFields):
    """Body of ``PATCH /v2/templates/{id}``: only the fields sent change."""

    name: Omittable[str] = Field(default=None, min_length=1)
    image: Omittable[str] = Field(default=None, min_length=1)
    registry: str | None = Field(default=None, description="Registry credential id (null clears).")
    mounts: Omittable[TemplateMounts] = None
    allowed_cuda_versions: Omittable[list[CudaVersion]] = None
    category: Omittable[TemplateCategory] = None
    public: Omittable[bool] = None
    serverless: Omittable[bool] = None
    is_serverless: Omittable[bool] = None
    start_ssh: Omittable[bool] = None
    start_jupyter: Omittable[bool] = None

    @classmethod
    def schema_violations(cls, body: dict[str, Any]) -> list[str]:
        """An empty body changes nothing: refused."""
        return [] if body else ["$: send at least one field to change"]


class UpdateNetworkVolumeRequest(RequestModel):
    """Body of ``PATCH /v2/network-volumes/{id}``: ``name`` and/or ``size`` (grow only)."""

    property_hints: ClassVar[dict[str, str]] = {
        "dataCenter": "a volume's data center is fixed at creation; create a new volume there",
        "type": "a volume's type is fixed at creation; create a new volume of that type",
    }

    name: Omittable[str] = Field(default=None, min_length=1)
    size: Omittable[int] = Field(default=None, ge=10, le=4096)

    @classmethod
    def schema_violations(cls, body: dict[str, Any]) -> list[str]:
        """An empty body changes nothing: refused."""
        return [] if body else ["$: send name and/or size"]
