"""The typed client of the pod cloud: sync :class:`Client` and async :class:`AsyncClient`.

Both share one I/O-free core (:mod:`podbook.client.core`); nothing here imports IPython.
"""

from podbook.client._async import AsyncClient
from podbook.client._sync import Client
from podbook.client.config import Settings, resolve_settings
from podbook.client.core import Call, RetryPolicy
from podbook.client.local import LocalEmulator, ensure_emulator

__all__ = [
    "AsyncClient",
    "Call",
    "Client",
    "LocalEmulator",
    "RetryPolicy",
    "Settings",
    "ensure_emulator",
    "resolve_settings",
]
