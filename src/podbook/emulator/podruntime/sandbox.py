"""The sandbox of a local-runtime pod: its directory tree, working directory and environment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Sandbox:
    """Where a pod's processes run and what they see.

    There is no chroot: processes see real host paths. ``mounts`` maps the paths a pod would
    see (e.g. ``"/workspace"``) to the real directories behind them; the pod's environment
    carries the same mapping (``RUNPOD_WORKSPACE`` and friends, see docs/local-runtime.md).
    """

    root: Path
    """The pod's tree (container disk, persistent mount, links to network volumes)."""
    workdir: Path
    """Working directory and ``HOME`` of the pod's processes."""
    env: dict[str, str] = field(default_factory=dict)
    """The pod's full environment: its ``env`` plus the variables the service sets."""
    mounts: dict[str, Path] = field(default_factory=dict)
    """Path as the pod sees it → real directory."""
    preexec: Callable[[], None] | None = None
    """Runs in every process the pod starts, between fork and exec (``confine.PodGroup``):
    the pod's process group membership, umask and the emulator-death signal."""
    container: Path | None = None
    """The container disk (what SFTP shows as ``/``)."""
    run_dir: Path | None = None
    """With ``--sandbox bwrap``: the host folder the pod sees at ``/run/podbook``."""
    box: Any = None
    """With ``--sandbox bwrap``: the pod's :class:`~.box.Box`; its processes start in it, and
    ``env`` holds the paths the pod sees there."""

    def mount_workdir(self) -> str:
        """The working directory a box gives the pod: its first mount path, else ``/``."""
        return next(iter(self.mounts), "/")

    @property
    def cwd(self) -> str:
        """The working directory of the pod's processes as they name it: in a box
        :meth:`mount_workdir`, otherwise the real folder ``workdir``."""
        return self.mount_workdir() if self.box is not None else str(self.workdir)

    def preexec_then(self, then: Callable[[], None] | None = None) -> Callable[[], None] | None:
        """The ``preexec_fn`` of a pod process: :attr:`preexec`, then ``then``."""
        first = self.preexec
        if first is None or then is None:
            return first or then

        def both() -> None:  # pragma: no cover - runs in the child between fork and exec
            first()
            then()

        return both
