"""The emulator's shared state: :class:`Emulator`, reachable from every request as
``app.state.emulator`` (the routes' plumbing is :mod:`podbook.emulator.routes.rest`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from podbook.emulator.pods import PodViews
from podbook.emulator.ratelimit import RateLimiter
from podbook.emulator.settings import EmulatorSettings
from podbook.emulator.store import Store


@dataclass
class Emulator:
    """The emulator's shared state, reachable from every request as ``app.state.emulator``."""

    settings: EmulatorSettings
    store: Store
    limiter: RateLimiter
    views: PodViews
    clock: Callable[[], float] = time.time
    extras: dict[str, Any] = field(default_factory=dict)
