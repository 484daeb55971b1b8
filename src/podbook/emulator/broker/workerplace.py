"""Where a scaled serverless worker runs: its folders, its network volume, and (with
``--sandbox bwrap``) its bubblewrap box, as a pod's.

The service mounts an endpoint's network volume at ``/runpod-volume`` in each worker. In a box
the worker sees it there; in the process runtime ``RUNPOD_MOUNT_RUNPOD_VOLUME`` names the
volume's folder, as a pod's mounts are named. A worker starts in the folder the emulator was
started in (for the embedded emulator: the folder of the notebook that started it), so a
start command such as ``python handler.py`` finds a handler file there; a box shows that
folder read-only at its own path (unless it holds the emulator's home or your whole home),
with the emulator's Python environment, as a pod's box does.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podbook.emulator.podruntime.tree import mount_env_name

VOLUME_PATH = "/runpod-volume"
"""Where the service mounts an endpoint's network volume in its workers."""


@dataclass(frozen=True)
class WorkerPlace:
    """What the emulator knows to place workers: its home and, for boxes, what to hide."""

    home: Path
    """The emulator's home: a worker's own folders are under ``podruntime/workers``."""
    volume_dir: Callable[[str], Path]
    boxed: bool = False
    hidden: tuple[Path, ...] = ()
    hidden_files: tuple[Path, ...] = ()
    shared: tuple[Path, ...] = ()

    def root(self, worker_id: str) -> Path:
        """The worker's own folder (its ``HOME``; in a box, its container disk)."""
        return self.home / "podruntime" / "workers" / worker_id

    def mounts(self, record: dict[str, Any]) -> dict[str, Path]:
        """The endpoint's first network volume at ``/runpod-volume`` (made when missing)."""
        volumes = [str(v) for v in record.get("networkVolumes") or []]
        if not volumes:
            return {}
        folder = self.volume_dir(volumes[0])
        folder.mkdir(parents=True, exist_ok=True)
        return {VOLUME_PATH: folder}

    def visible_cwd(self) -> Path | None:
        """The emulator's working directory, when a box may show it (not a folder that holds
        what the box hides)."""
        cwd = Path.cwd().resolve()
        if cwd == Path("/") or any(
            hidden == cwd or cwd in hidden.parents for hidden in self.hidden
        ):
            return None
        return cwd

    def forget(self, worker_id: str) -> None:
        """Remove the worker's folders once it is gone."""
        shutil.rmtree(self.root(worker_id), ignore_errors=True)


def place_of(settings: Any) -> WorkerPlace:
    """The workers' place of an emulator with these settings (boxed with the local runtime's
    ``--sandbox bwrap``; hiding what a pod's box hides)."""
    from functools import partial

    from podbook.emulator.podruntime.tree import volume_dir

    home = Path(settings.home or settings.db_path.parent)
    return WorkerPlace(
        home=home,
        volume_dir=partial(volume_dir, home),
        boxed=settings.runtime == "local" and settings.sandbox == "bwrap",
        hidden=(Path.home(), home),
        hidden_files=tuple(settings.private_files()),
        shared=tuple(settings.share_ro),
    )


def process_env(place: WorkerPlace, record: dict[str, Any], worker_id: str) -> dict[str, str]:
    """The variables a worker of the process runtime gets for its folders."""
    root = place.root(worker_id)
    (root / "home").mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(root / "home")}
    for path, folder in place.mounts(record).items():
        env[mount_env_name(path)] = str(folder)
    return env


async def open_worker_box(
    place: WorkerPlace, record: dict[str, Any], worker_id: str, api_url: str, preexec: Any
) -> Any:
    """The worker's box (an :class:`~podbook.emulator.podruntime.boxed.OpenBox`): its
    container disk, the endpoint's volume at ``/runpod-volume``, the emulator's API at its
    own address, the emulator's working directory read-only."""
    from podbook.emulator.podruntime.boxed import open_box
    from podbook.emulator.podruntime.sandbox import Sandbox

    root = place.root(worker_id)
    (root / "container").mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox(root=root, workdir=root, mounts=place.mounts(record))
    cwd = place.visible_cwd()
    shared = (*place.shared, *([cwd] if cwd else []))
    return await open_box(
        {"id": worker_id},
        sandbox,
        api_url=api_url,
        hidden=list(place.hidden),
        hidden_files=list(place.hidden_files),
        shared=shared,
        preexec=preexec,
    )


def boxed_cwd(place: WorkerPlace) -> str:
    """Where a boxed worker starts: the emulator's folder when the box shows it, else
    ``/root``."""
    cwd = place.visible_cwd()
    return str(cwd) if cwd else "/root"
