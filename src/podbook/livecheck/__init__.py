"""The opt-in live check of the real service: ``make test-live`` or ``podbook live-check``.

Read-only by default (catalog, pods, endpoints, templates, network volumes, registries, SSH
keys, billing, and the queue health of ``PODBOOK_LIVE_ENDPOINT``), each answer parsed by the
typed client and so validated against podbook's models; with ``PODBOOK_LIVE_SPEND=1`` one CPU
pod is also created, cycled and terminated, with a cleanup that cannot be skipped. Never part
of ``make test`` or CI. See ``docs/live-check.md``.
"""

from __future__ import annotations

from podbook.livecheck.options import NAME_PREFIX, LiveOptions
from podbook.livecheck.run import main, run_live_check

__all__ = ["NAME_PREFIX", "LiveOptions", "main", "run_live_check"]
