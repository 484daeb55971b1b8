"""The broker's knobs: long-poll lengths, worker liveness, the time base, declared endpoints.

Production defaults follow the reference; tests shorten them (``podbook emulator
--queue-time-scale 0.01 --worker-poll-seconds 0.5 ...``). ``time_scale`` multiplies every
queue duration that a user cannot shorten below the seed's minimum: TTL, retention,
``executionTimeout`` and the webhook retry interval (reported times stay real milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from podbook.emulator.broker.limits import WEBHOOK_RETRY_SECONDS
from podbook.emulator.loadbalancer.settings import LoadBalancerSettings


class EndpointSpecError(ValueError):
    """A ``--endpoint`` value is invalid; the message says how to write it."""


@dataclass(frozen=True)
class DeclaredEndpoint:
    """An endpoint declared on the command line: ``NAME`` or ``NAME=handler.py[:fn]``."""

    name: str
    handler: str | None = None


@dataclass
class BrokerSettings:
    """Timings and declarations of the queue broker."""

    take_wait_seconds: float = 30.0
    stop_wait_seconds: float = 30.0
    worker_gone_seconds: float = 30.0
    time_scale: float = 1.0
    webhook_retry_seconds: float = WEBHOOK_RETRY_SECONDS
    worker_concurrency: int = 4
    endpoints: list[DeclaredEndpoint] = field(default_factory=list)
    rate_limits: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    load_balancer: LoadBalancerSettings = field(default_factory=LoadBalancerSettings)


def parse_declared_endpoint(text: str) -> DeclaredEndpoint:
    """Parse ``NAME`` or ``NAME=handler.py[:fn]`` (``--endpoint``)."""
    from podbook.emulator.broker.endpoints import check_endpoint_id, check_handler_spec

    name, sep, handler = text.partition("=")
    name = name.strip()
    problem = check_endpoint_id(name)
    if problem:
        raise EndpointSpecError(
            f"--endpoint {text!r}: {problem}; write NAME or NAME=handler.py[:function]"
        )
    handler = handler.strip()
    if sep and not handler:
        raise EndpointSpecError(
            f"--endpoint {text!r}: nothing after '='; write NAME=handler.py[:function]"
        )
    if handler and (problem := check_handler_spec(handler)):
        raise EndpointSpecError(f"--endpoint {text!r}: {problem}")
    return DeclaredEndpoint(name=name, handler=handler or None)


def parse_rate_limit(text: str) -> tuple[str, tuple[int, int | None]]:
    """Parse ``OP=RATE[/CONCURRENT]`` (``--queue-rate-limit run=5/2``)."""
    from podbook.emulator.broker.limits import OPERATION_LIMITS

    op, sep, value = text.partition("=")
    rate, _, concurrent = value.partition("/")
    if (
        not sep
        or op not in OPERATION_LIMITS
        or not rate.isdigit()
        or int(rate) < 1
        or (concurrent and not concurrent.isdigit())
    ):
        raise EndpointSpecError(
            f"--queue-rate-limit {text!r} is invalid: use OP=RATE[/CONCURRENT] with OP one of "
            f"{', '.join(OPERATION_LIMITS)}, e.g. run=5/2"
        )
    return op, (int(rate), int(concurrent) if concurrent else None)
