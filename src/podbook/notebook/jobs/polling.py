"""What the session's one refresher thread does for job and health panels.

A panel that wants polling has ``queue_key()`` (a tuple such as ``("status", endpoint,
job)`` or ``("health", endpoint)``, or None for nothing this tick) and
``apply_queue(result)``. Each key is read once per tick, however many panels share it; a
failure reaches only the panels of its key (as the exception object).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)


def _reader(client: Any, key: tuple[str, ...]) -> Callable[[], Any] | None:
    kind, endpoint_id, *rest = key
    endpoint = client.endpoint(endpoint_id)
    if kind == "status" and rest:
        return lambda: endpoint.status(rest[0])
    if kind == "health":
        return endpoint.health
    return None


def poll_queue_panels(client: Any, panels: Iterable[Any]) -> int:
    """Read what the queue panels need and hand it to them; returns the calls made."""
    wanted: dict[tuple[str, ...], list[Any]] = {}
    for panel in panels:
        key_of = getattr(panel, "queue_key", None)
        key = key_of() if callable(key_of) else None
        if key:
            wanted.setdefault(tuple(key), []).append(panel)
    calls = 0
    for key, members in wanted.items():
        read = _reader(client, key)
        if read is None:
            continue
        calls += 1
        try:
            result: Any = read()
        except Exception as err:  # noqa: BLE001 - handed to the panels, never raised here
            result = err
        for panel in members:
            try:
                panel.apply_queue(result)
            except Exception as err:  # noqa: BLE001 - one broken panel must not stop others
                log.debug("podbook queue panel update failed: %s", err)
    return calls
