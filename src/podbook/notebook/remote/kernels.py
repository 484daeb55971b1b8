"""One remote kernel per pod for this notebook, and what the pod panels show of it.

The first ``%%pod exec`` on a pod starts a kernel on the pod's Jupyter server, named after
this notebook session (``podbook.remote.connect_kernel(pod, name=...)``), and later cells reuse
it, so state stays in the pod between cells. The kernel's state (starting, idle, busy) and
the last transfer reach every live panel of the pod (its ``remote`` trait).
"""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from podbook.api.pods import Pod
    from podbook.notebook.session import NotebookSession
    from podbook.remote import RemoteKernel


class KernelBook:
    """The remote kernels of one notebook session, by pod id."""

    def __init__(self, session: NotebookSession) -> None:
        self.session = session
        self.name = f"notebook-{uuid.uuid4().hex[:12]}"
        """The name of this notebook's kernel on every pod (a Jupyter session of the server)."""
        self.attached: str | None = None
        """The pod whose kernel runs the cells (``%pod attach``), if any."""
        self._kernels: dict[str, RemoteKernel] = {}
        self._remote: dict[str, dict[str, object]] = {}
        self._lock = threading.Lock()

    def kernel(self, pod: Pod, kernel_name: str = "python3") -> RemoteKernel:
        """The pod's kernel for this notebook, connected (started on first use)."""
        from podbook.remote import connect_kernel

        pod_id = str(pod.id)
        with self._lock:
            kernel = self._kernels.get(pod_id)
        if kernel is not None and kernel.attached and kernel.kernel_name == kernel_name:
            return kernel
        if kernel is not None:
            kernel.close()
        kernel = connect_kernel(
            pod,
            name=f"{self.name}-{kernel_name}",
            kernel_name=kernel_name,
            on_status=lambda state: self.note(pod_id, kernel=state),
        )
        with self._lock:
            self._kernels[pod_id] = kernel
        self.note(pod_id, kernel=kernel.state)
        return kernel

    def note(self, pod_id: str, **changes: object) -> None:
        """Record what the panels of ``pod_id`` show of the work on it, and show it."""
        with self._lock:
            state = {**self._remote.get(pod_id, {}), **changes}
            state["attached"] = self.attached == pod_id
            self._remote[pod_id] = state
        for panel in self.session.refresher.panels:
            if getattr(panel, "pod_id", None) == pod_id and hasattr(panel, "remote"):
                panel.remote = dict(state)

    def remote_state(self, pod_id: str) -> dict[str, object]:
        """What a new panel of ``pod_id`` shows of the work on it."""
        with self._lock:
            return dict(self._remote.get(pod_id, {}))

    def close(self) -> None:
        """Close every connection (the kernels stay on their pods until the pods stop)."""
        with self._lock:
            kernels, self._kernels = list(self._kernels.values()), {}
        for kernel in kernels:
            kernel.close()


def kernel_book(session: NotebookSession) -> KernelBook:
    """The session's :class:`KernelBook`, made on first use."""
    book = getattr(session, "_remote_kernels", None)
    if book is None:
        book = session._remote_kernels = KernelBook(session)
    return book


def close_kernels(session: NotebookSession) -> None:
    """Close the session's kernel connections (``%unload_ext podbook``)."""
    book = getattr(session, "_remote_kernels", None)
    if book is not None:
        book.close()
