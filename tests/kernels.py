"""Kernels for tests: they talk to their client over Unix sockets, not TCP.

A kernel over TCP binds ports its manager picked and released a moment before; with six
pytest workers starting kernels, emulators and pods at once, another process can take one
in between, and the kernel dies before it answers ("Kernel died before replying to
kernel_info"). Sockets in a folder of the test's own cannot be taken.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path

from jupyter_client import KernelManager

_numbers = itertools.count()


def ipc_kernel_manager(kernel_name: str = "python3") -> KernelManager:
    """A manager whose kernel's channels are Unix sockets in a new private folder (short
    enough for a socket path wherever the tests run)."""
    folder = Path(tempfile.mkdtemp(prefix=f"k{os.getpid()}-{next(_numbers)}-"))
    return KernelManager(kernel_name=kernel_name, transport="ipc", ip=str(folder / "kernel"))
