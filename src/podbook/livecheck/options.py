"""What the live check does, from its flags and environment variables (flags win).

| variable | flag | meaning | default |
|---|---|---|---|
| ``RUNPOD_API_KEY`` | | the key to check with (required) | |
| ``PODBOOK_LIVE_SPEND=1`` | ``--spend`` | also create, cycle and terminate one CPU pod | off |
| ``PODBOOK_LIVE_ENDPOINT`` | ``--endpoint ID`` | queue endpoint whose ``health`` is read | none |
| ``PODBOOK_LIVE_MAX_PRICE`` | ``--max-price USD`` | refuse a pod dearer than this per hour | 0.20 |
| ``PODBOOK_LIVE_TIMEOUT`` | ``--timeout S`` | the pod's longest life; it is then terminated | 900 |
| ``PODBOOK_LIVE_POLL`` | ``--poll S`` | seconds between pod reads while waiting | 5 |
| ``PODBOOK_LIVE_IMAGE`` | ``--image REF`` | the pod's image (kept alive with ``sleep``) | ``ubuntu:22.04`` |

The base URLs come from the client's configuration (``PODBOOK_URL``, ``PODBOOK_REST_URL``,
``PODBOOK_QUEUE_URL``, ``PODBOOK_V1_URL``; the real service by default).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass

from podbook.client.config import env_flag

__all__ = [
    "NAME_PREFIX",
    "LiveOptions",
    "OptionsError",
    "add_arguments",
    "options_from",
]

NAME_PREFIX = "podbook-live-"
"""Every pod the live check creates is named ``podbook-live-<random>``; the sweep removes
pods whose name starts with it."""


class OptionsError(ValueError):
    """A flag or variable with an unusable value; the message names it and the fix."""


@dataclass(frozen=True)
class LiveOptions:
    """The live check's settings (see the module's table)."""

    spend: bool = False
    endpoint: str | None = None
    max_price: float = 0.20
    timeout: float = 900.0
    poll: float = 5.0
    image: str = "ubuntu:22.04"
    progress_every: float = 30.0
    """Seconds between "still waiting" lines while a pod's status does not change."""

    @property
    def worst_case_cost(self) -> float:
        """USD: the dearest pod allowed, for its longest life."""
        return self.max_price * self.timeout / 3600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``podbook live-check`` flags (each defaults to its environment variable)."""
    parser.add_argument(
        "--spend",
        action="store_true",
        default=None,
        help="also create the cheapest CPU pod, cycle it and terminate it (PODBOOK_LIVE_SPEND=1)",
    )
    parser.add_argument(
        "--endpoint",
        metavar="ID",
        help="read the queue health of this endpoint (PODBOOK_LIVE_ENDPOINT)",
    )
    parser.add_argument(
        "--max-price",
        metavar="USD",
        help="most the pod may cost per hour (PODBOOK_LIVE_MAX_PRICE, default 0.20)",
    )
    parser.add_argument(
        "--timeout",
        metavar="S",
        help="longest life of the pod in seconds (PODBOOK_LIVE_TIMEOUT, default 900)",
    )
    parser.add_argument(
        "--poll",
        metavar="S",
        help="seconds between pod reads while waiting (PODBOOK_LIVE_POLL, default 5)",
    )
    parser.add_argument(
        "--image", metavar="REF", help="the pod's image (PODBOOK_LIVE_IMAGE, default ubuntu:22.04)"
    )


def options_from(args: argparse.Namespace, env: Mapping[str, str]) -> LiveOptions:
    """The options from parsed flags, then the environment, then the defaults; raises
    :class:`OptionsError` (or :class:`~podbook.errors.ConfigError` for a boolean) naming
    the flag or variable to fix."""
    defaults = LiveOptions()
    spend = args.spend if args.spend is not None else env_flag(env, "PODBOOK_LIVE_SPEND")
    endpoint = (args.endpoint or env.get("PODBOOK_LIVE_ENDPOINT", "")).strip() or None
    image = (args.image or env.get("PODBOOK_LIVE_IMAGE", "")).strip() or defaults.image
    max_price = _positive(args.max_price, env, "PODBOOK_LIVE_MAX_PRICE", "--max-price")
    timeout = _positive(args.timeout, env, "PODBOOK_LIVE_TIMEOUT", "--timeout")
    poll = _positive(args.poll, env, "PODBOOK_LIVE_POLL", "--poll")
    return LiveOptions(
        spend=spend,
        endpoint=endpoint,
        max_price=max_price if max_price is not None else defaults.max_price,
        timeout=timeout if timeout is not None else defaults.timeout,
        poll=poll if poll is not None else defaults.poll,
        image=image,
        progress_every=defaults.progress_every,
    )


def _positive(flag: str | None, env: Mapping[str, str], name: str, option: str) -> float | None:
    """A number > 0 from the flag, else the variable; None when neither is set."""
    raw, source = (flag, option) if flag is not None else (env.get(name, "").strip(), name)
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise OptionsError(f"{source}={raw!r} is not a number; set it like {source}=0.5") from None
    if not value > 0:
        raise OptionsError(f"{source}={raw!r} must be more than 0")
    return value
