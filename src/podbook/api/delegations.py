"""ECR delegations (``/v2/registries/delegations``): let the service pull from a private Amazon
ECR repository without storing a password.

``resource`` is the repository's ARN, ``arn:aws:ecr:REGION:ACCOUNT:repository/NAME``; the
record names the AWS account, region, repository and tag (``NAME:TAG`` in the ARN picks a
tag; ``latest`` otherwise) and the ``dockerRegistryUri`` to log in to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import Field

from .base import RequestModel, ResponseModel

__all__ = [
    "CreateDelegationRequest",
    "EcrDelegation",
    "EcrResource",
    "ListDelegationsResponse",
    "parse_ecr_arn",
]

_ECR_ARN = re.compile(
    r"^arn:aws:ecr:(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+):(?P<account>\d{12}):"
    r"repository/(?P<repository>[a-z0-9][a-z0-9._/-]*?)(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?$"
)
ARN_EXAMPLE = "arn:aws:ecr:us-east-2:123456789012:repository/team/app"


@dataclass(frozen=True)
class EcrResource:
    """The parts of an ECR repository ARN."""

    region: str
    aws_account: str
    repository: str
    tag: str

    @property
    def docker_registry_uri(self) -> str:
        """The host to ``docker login`` to."""
        return f"{self.aws_account}.dkr.ecr.{self.region}.amazonaws.com"


def parse_ecr_arn(arn: str) -> EcrResource | None:
    """The parts of ``arn``, or None when it is not an ECR repository ARN."""
    match = _ECR_ARN.match(arn)
    if match is None:
        return None
    return EcrResource(
        region=match["region"],
        aws_account=match["account"],
        repository=match["repository"],
        tag=match["tag"] or "latest",
    )


class CreateDelegationRequest(RequestModel):
    """Body of ``POST /v2/registries/delegations``."""

    resource: str = Field(min_length=1, description="ECR repository ARN.")
    name: str | None = None

    def rule_violations(self) -> list[str]:
        """``resource`` must be an ECR repository ARN."""
        if parse_ecr_arn(self.resource) is None:
            return [
                f"$.resource: {self.resource!r} is not an ECR repository ARN (like {ARN_EXAMPLE!r})"
            ]
        return []


class EcrDelegation(ResponseModel):
    """A registered ECR delegation."""

    id: str
    name: str | None = None
    delegator_user_id: str
    aws_user: str
    repository: str
    tag: str
    aws_region: str
    docker_registry_uri: str | None = None
    created_at: str


class ListDelegationsResponse(ResponseModel):
    """``{"delegations": [...]}``."""

    delegations: list[EcrDelegation]
