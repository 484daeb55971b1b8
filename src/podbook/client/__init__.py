"""The typed client of the pod cloud: sync :class:`Client` and async :class:`AsyncClient`.

Both share one I/O-free core (:mod:`podbook.client._core`); nothing here imports IPython.
The names are imported on first use, so ``podbook.client.config`` (standard library only)
can be imported without httpx and pydantic: ``%load_ext podbook`` relies on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podbook import _lazy_dir, _lazy_getattr

if TYPE_CHECKING:
    from podbook.client._async import AsyncClient
    from podbook.client._core import Call, RetryPolicy
    from podbook.client._created import on_pod_created
    from podbook.client._local import LocalEmulator, ensure_emulator
    from podbook.client._sync import Client
    from podbook.client.config import Settings, resolve_settings
    from podbook.client.jobs import AsyncJob, Job
    from podbook.client.resources.queue import AsyncEndpointClient, EndpointClient

__all__ = [
    "AsyncClient",
    "AsyncEndpointClient",
    "AsyncJob",
    "Call",
    "Client",
    "EndpointClient",
    "Job",
    "LocalEmulator",
    "RetryPolicy",
    "Settings",
    "ensure_emulator",
    "on_pod_created",
    "resolve_settings",
]

_HOMES = {
    "AsyncClient": "podbook.client._async",
    "AsyncEndpointClient": "podbook.client.resources.queue",
    "AsyncJob": "podbook.client.jobs",
    "Call": "podbook.client._core",
    "Client": "podbook.client._sync",
    "EndpointClient": "podbook.client.resources.queue",
    "Job": "podbook.client.jobs",
    "LocalEmulator": "podbook.client._local",
    "RetryPolicy": "podbook.client._core",
    "Settings": "podbook.client.config",
    "ensure_emulator": "podbook.client._local",
    "on_pod_created": "podbook.client._created",
    "resolve_settings": "podbook.client.config",
}


__getattr__ = _lazy_getattr(globals(), _HOMES)
__dir__ = _lazy_dir(globals(), __all__)
