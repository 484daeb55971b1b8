"""Work on a pod from here: run code in a kernel on the pod's own Jupyter server
(:mod:`podbook.remote.kernel`), and the URL of a pod's HTTP port (:func:`pod_http_url`).
Over the pod's direct SSH endpoint: shell scripts (:func:`run`), files both ways
(:func:`push`, :func:`pull`) and one-way folder sync (:func:`sync`, :func:`watch`), see
``docs/file-transfer.md``.

Nothing here imports IPython; the magics build on it. The names are imported on first use
(like :mod:`podbook.client`), so importing this package costs nothing until one is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podbook import _lazy_dir, _lazy_getattr

if TYPE_CHECKING:
    from podbook.remote._kernel_vars import CHUNK_BYTES, MAX_TRANSFER_BYTES
    from podbook.remote.dirsync import IgnoreRules, sync, watch
    from podbook.remote.execution import Execution
    from podbook.remote.files import pull, push
    from podbook.remote.kernel import RemoteKernel, connect_kernel
    from podbook.remote.keys import KeyRegistration, SshKeyPair, ensure_key_registered, find_key
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
    from podbook.remote.progress import Progress, ProgressPrinter, TransferSummary
    from podbook.remote.ssh import PodConnection, RemoteError, connect, run

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
    # shell and files over SSH
    "IgnoreRules": "podbook.remote.dirsync",
    "KeyRegistration": "podbook.remote.keys",
    "PodConnection": "podbook.remote.ssh",
    "Progress": "podbook.remote.progress",
    "ProgressPrinter": "podbook.remote.progress",
    "RemoteError": "podbook.remote.ssh",
    "SshKeyPair": "podbook.remote.keys",
    "TransferSummary": "podbook.remote.progress",
    "connect": "podbook.remote.ssh",
    "ensure_key_registered": "podbook.remote.keys",
    "find_key": "podbook.remote.keys",
    "pull": "podbook.remote.files",
    "push": "podbook.remote.files",
    "run": "podbook.remote.ssh",
    "sync": "podbook.remote.dirsync",
    "watch": "podbook.remote.dirsync",
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
    # shell and files over SSH
    "IgnoreRules",
    "KeyRegistration",
    "PodConnection",
    "Progress",
    "ProgressPrinter",
    "RemoteError",
    "SshKeyPair",
    "TransferSummary",
    "connect",
    "ensure_key_registered",
    "find_key",
    "pull",
    "push",
    "run",
    "sync",
    "watch",
]


__getattr__ = _lazy_getattr(globals(), _HOMES)
__dir__ = _lazy_dir(globals(), __all__)
