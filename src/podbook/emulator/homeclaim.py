"""One emulator per home: the claim an emulator holds on its home for as long as it runs.

An emulator's home holds what only one process may own at a time: ``emulator.json`` and
``emulator.key`` (how clients find it), the local runtime's ledger of running processes and the
trees of its pods. A second emulator on the same home would overwrite the first one's
announcement and treat its live processes as leftovers. So an emulator takes an exclusive
``flock`` on ``HOME/emulator.owner`` before it touches anything there, and keeps it until its
process ends; the kernel drops the lock when the process dies, even by ``kill -9``. What
an emulator finds in a home it could claim was therefore left by one that is gone.

The home is made private on the way (mode 0700), whatever the umask.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

if os.name == "posix":
    import fcntl
else:  # pragma: no cover - Windows has no flock; one emulator per home is then the user's care
    fcntl = None  # type: ignore[assignment]

OWNER_FILE = "emulator.owner"


class HomeTaken(RuntimeError):
    """Another live emulator holds this home; the message names it and how to choose another."""


class HomeClaim:
    """The held claim on a home; released when the process ends (or by :meth:`release`)."""

    def __init__(self, home: Path, fd: int) -> None:
        self.home = home
        self._fd = fd

    def release(self) -> None:
        """Give the home up (the process ends soon, or a test wants it back)."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and its parents) and make ``path`` itself mode 0700 whatever the
    umask; an existing folder of ours is narrowed to 0700 too."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):  # not ours (a shared folder): leave its mode alone
        if path.stat().st_uid == os.getuid():
            os.chmod(path, 0o700)


def claim_home(home: Path) -> HomeClaim:
    """Claim ``home`` for this process, or raise :class:`HomeTaken` naming its holder."""
    make_private_dir(home)
    path = home / OWNER_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise HomeTaken(_taken_message(home)) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return HomeClaim(home, fd)


def _taken_message(home: Path) -> str:
    holder = ""
    with contextlib.suppress(OSError, ValueError):
        holder = (home / OWNER_FILE).read_text(encoding="utf-8").strip()
    with contextlib.suppress(OSError, ValueError, AttributeError):
        info = json.loads((home / "emulator.json").read_text(encoding="utf-8"))
        if str(info.get("pid")) == holder and info.get("url"):
            holder = f"{holder}, {info['url']}"
    who = f" (pid {holder})" if holder else ""
    return (
        f"another emulator{who} runs with home {home}; stop it first, or give this one a "
        "home of its own with --home DIR (or PODBOOK_HOME=DIR)"
    )
