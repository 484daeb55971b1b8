"""Work on a pod from here: run code in a kernel on the pod's own Jupyter server
(:mod:`podbook.remote.kernel`), and the URL of a pod's HTTP port (:func:`pod_http_url`).

Nothing here imports IPython; the magics build on it. The names are imported on first use
(like :mod:`podbook.client`), so importing this package costs nothing until one is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podbook.remote._kernel_vars import CHUNK_BYTES, MAX_TRANSFER_BYTES
    from podbook.remote.execution import Execution
    from podbook.remote.kernel import RemoteKernel, connect_kernel
    from podbook.remote.outputs import (
        ClearOutput,
        DisplayData,
        ExecuteDone,
        ExecuteError,
        ExecuteResult,
        KernelOutput,
        KernelState,
        Reconnected,
        StreamText,
        UpdateDisplayData,
    )
    from podbook.remote.podurl import pod_http_url

_HOMES = {
    # the kernel of a pod's Jupyter server
    "CHUNK_BYTES": "podbook.remote._kernel_vars",
    "ClearOutput": "podbook.remote.outputs",
    "DisplayData": "podbook.remote.outputs",
    "ExecuteDone": "podbook.remote.outputs",
    "ExecuteError": "podbook.remote.outputs",
    "ExecuteResult": "podbook.remote.outputs",
    "Execution": "podbook.remote.execution",
    "KernelOutput": "podbook.remote.outputs",
    "KernelState": "podbook.remote.outputs",
    "MAX_TRANSFER_BYTES": "podbook.remote._kernel_vars",
    "Reconnected": "podbook.remote.outputs",
    "RemoteKernel": "podbook.remote.kernel",
    "StreamText": "podbook.remote.outputs",
    "UpdateDisplayData": "podbook.remote.outputs",
    "connect_kernel": "podbook.remote.kernel",
    "pod_http_url": "podbook.remote.podurl",
}

__all__ = [
    "CHUNK_BYTES",
    "ClearOutput",
    "DisplayData",
    "ExecuteDone",
    "ExecuteError",
    "ExecuteResult",
    "Execution",
    "KernelOutput",
    "KernelState",
    "MAX_TRANSFER_BYTES",
    "Reconnected",
    "RemoteKernel",
    "StreamText",
    "UpdateDisplayData",
    "connect_kernel",
    "pod_http_url",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'podbook.remote' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
