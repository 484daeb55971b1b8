"""The set-up of every child process the emulator starts (pod processes, workers).

Run in the forked child before ``exec`` (``preexec_fn``): the child ends with the emulator and
inherits none of its descriptors.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_prctl = None
if sys.platform == "linux":  # looked up here: the forked child must not load anything
    with contextlib.suppress(OSError, AttributeError):
        _prctl = ctypes.CDLL(None).prctl


def detach_child() -> None:  # pragma: no cover (runs in the forked child)
    """In the child before exec: SIGTERM when the emulator dies, umask 022, and no descriptor
    of the emulator survives the exec. uvloop (libuv) hands every inheritable descriptor to a
    child whatever ``close_fds`` says, the server's listening socket among them: a worker
    holding it would keep the port taken after the emulator died, and a restart on that
    port would fail with "Address already in use"."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
    os.umask(0o022)  # the emulator keeps 077 for its own files; its children get the usual
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc/self/fd"):
            if name.isdigit() and int(name) > 2:
                with contextlib.suppress(OSError):
                    os.set_inheritable(int(name), False)
