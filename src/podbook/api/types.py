"""Enumerations and constrained strings of the wire contract.

Enumerations are ``Literal`` types (JSON strings on the wire, plain ``str`` in Python); each
has a tuple of its values beside it for code that needs to iterate over them.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, Field, PlainSerializer, SecretStr
from pydantic_core import PydanticCustomError

PodStatus = Literal["PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR", "TERMINATED"]
PodAction = Literal["start", "stop", "restart", "terminate"]
Cloud = Literal["SECURE", "COMMUNITY"]
ClusterType = Literal["APPLICATION", "TRAINING", "SLURM", "RAY"]
PodClusterRole = Literal["SLURM_CONTROLLER", "SLURM_COMPUTE", "RAY_HEAD", "RAY_WORKER"]
TemplateCategory = Literal["CPU", "NVIDIA", "AMD"]
GpuManufacturer = Literal["NVIDIA", "AMD", "UNKNOWN"]
AvailabilityLevel = Literal["NONE", "LOW", "MEDIUM", "HIGH"]
Product = Literal["POD", "CLUSTER", "SERVERLESS"]
CpuProduct = Literal["POD", "SERVERLESS"]
VolumeType = Literal["STANDARD", "HIGH_PERFORMANCE"]
DataCenterRegion = Literal[
    "NORTH_AMERICA",
    "SOUTH_AMERICA",
    "EUROPE",
    "ASIA",
    "MIDDLE_EAST",
    "AFRICA",
    "OCEANIA",
    "ANTARCTICA",
    "UNKNOWN",
]
Compliance = Literal[
    "GDPR",
    "ISO_IEC_27001",
    "ISO_14001",
    "PCI_DSS",
    "HITRUST",
    "SOC_1_TYPE_2",
    "SOC_2_TYPE_2",
    "SOC_3_TYPE_2",
    "ITAR",
    "FISMA_HIGH",
    "HIPAA",
    "RENEWABLE",
]

POD_STATUSES: tuple[str, ...] = get_args(PodStatus)
POD_ACTIONS: tuple[str, ...] = get_args(PodAction)
CLOUDS: tuple[str, ...] = get_args(Cloud)
CLUSTER_TYPES: tuple[str, ...] = get_args(ClusterType)
POD_CLUSTER_ROLES: tuple[str, ...] = get_args(PodClusterRole)
TERMINAL_POD_STATUSES: frozenset[str] = frozenset({"TERMINATED"})
BILLED_POD_STATUSES: frozenset[str] = frozenset({"PROVISIONING", "STARTING", "RUNNING"})
"""The statuses of a pod that costs its price per hour (a stopped one costs only storage)."""

# Anchored with \A and \Z, and matched with fullmatch: ``$`` also matches before a final
# newline, so "22/tcp\n" passed; and ASCII digits only, since ``\d`` also takes "٢٢". A CUDA
# version part has at most 4 digits: int() refuses 4,300 and more, which made a 500.
PORT_PATTERN = re.compile(r"\A([0-9]+)/(http|tcp|udp)\Z")
CUDA_VERSION_PATTERN = re.compile(r"\A[0-9]{1,4}\.[0-9]{1,4}\Z")
MIN_CUDA_VERSION_PATTERN = re.compile(r"\A[0-9]{1,4}(\.[0-9]{1,4})?\Z")


def parse_port(spec: str) -> tuple[int, str]:
    """Split a ``port/protocol`` string into ``(port, protocol)``.

    Raises ``ValueError`` with a one-line reason when the string is not a valid port spec.
    """
    match = PORT_PATTERN.fullmatch(spec)
    if match is None:
        raise ValueError(
            "must be 'port/protocol' with protocol http, tcp or udp (e.g. '8888/http')"
        )
    digits = match.group(1)
    port = int(digits) if len(digits) <= 5 else 0  # no int() of a thousand digits
    if not 1 <= port <= 65535:
        raise ValueError("port must be between 1 and 65535")
    return port, match.group(2)


def _check_port(value: str) -> str:
    try:
        parse_port(value)
    except ValueError as exc:
        raise PydanticCustomError("port_spec", str(exc)) from None
    return value


def _check_cuda_version(value: str) -> str:
    if not CUDA_VERSION_PATTERN.fullmatch(value):
        raise PydanticCustomError(
            "cuda_version", "must be a CUDA version 'major.minor' (e.g. '12.8')"
        )
    return value


def _check_min_cuda_version(value: str) -> str:
    if not MIN_CUDA_VERSION_PATTERN.fullmatch(value):
        raise PydanticCustomError(
            "min_cuda_version",
            "must be a CUDA version 'major' or 'major.minor' (e.g. '12' or '12.4')",
        )
    return value


def _check_power_of_two(value: int) -> int:
    if value < 1 or value & (value - 1):
        raise PydanticCustomError("power_of_two", "must be a power of two (2, 4, 8, 16, ...)")
    return value


PortSpec = Annotated[str, AfterValidator(_check_port)]
"""``port/protocol``: port 1..65535, protocol ``http``, ``tcp`` or ``udp``."""

CudaVersion = Annotated[str, AfterValidator(_check_cuda_version)]
"""An exact CUDA version ``major.minor``."""

MinCudaVersion = Annotated[str, AfterValidator(_check_min_cuda_version)]
"""A CUDA floor: ``major`` (any release of it) or ``major.minor``."""

PowerOfTwo = Annotated[int, AfterValidator(_check_power_of_two)]
"""A positive power of two."""

WireSecret = Annotated[
    SecretStr,
    Field(min_length=1),
    PlainSerializer(SecretStr.get_secret_value, return_type=str, when_used="always"),
]
"""A non-empty secret (a password, an access secret): hidden from ``repr``, sent as it is."""


def cuda_key(version: str) -> tuple[int, int]:
    """Numeric sort key of a CUDA version: ``"12.11"`` → ``(12, 11)``; ``"12"`` → ``(12, 0)``.

    Raises ``ValueError`` for anything that is not ``major`` or ``major.minor``.
    """
    if not MIN_CUDA_VERSION_PATTERN.fullmatch(version):
        raise ValueError(f"not a CUDA version: {version!r}")
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)


def cuda_satisfies_min(version: str, floor: str) -> bool:
    """Whether CUDA ``version`` is at or above ``floor``, compared numerically.

    A bare major floor (``"12"``) accepts any release of that major and above.
    """
    return cuda_key(version) >= cuda_key(floor)
