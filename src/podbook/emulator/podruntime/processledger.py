"""The ledger of pod processes: ``HOME/podruntime/ledger.json``, pod id → ``{pid: start}``.

Written whenever the runtime learns of a pod process (its main process when it starts, and
with the process-tree tracking of :mod:`.confine`, every process recorded since) and when a pod
stops. When the emulator starts, every process the ledger names that still runs with the same
start time is killed: a pid and its start time name one process for good, so a reused pid never
kills a stranger, and nothing a pod can change (its session, group or environment) hides it.
This is what ends the leftovers of an emulator killed with ``kill -9``. The emulator reads it
only under its claim on the home (:mod:`podbook.emulator.homeclaim`): whoever wrote it is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import psutil

Entry = dict[str, float]  # pid (as text, JSON keys) → create time


class ProcessLedger:
    """The on-disk record of the pods' processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Entry] = self._read()

    def _read(self) -> dict[str, Entry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {pod: entry for pod, entry in data.items() if isinstance(entry, dict)}

    def _write(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(self.entries))
        os.replace(tmp, self.path)

    def add(self, pod_id: str, processes: dict[int, float]) -> None:
        """Record processes of ``pod_id`` (pid → create time); writes only what is new."""
        entry = self.entries.setdefault(pod_id, {})
        new = {str(pid): started for pid, started in processes.items() if str(pid) not in entry}
        if new:
            entry.update(new)
            self._write()

    def add_pid(self, pod_id: str, pid: int) -> None:
        """Record one process of ``pod_id`` by pid (its start time looked up now; a box's
        process that ended before its host pid was known, ``-1``, is not recorded)."""
        if pid <= 0:
            return
        with contextlib.suppress(psutil.Error):
            self.add(pod_id, {pid: psutil.Process(pid).create_time()})

    def remove(self, pod_id: str) -> None:
        """Forget the pod's processes (they have ended)."""
        if self.entries.pop(pod_id, None) is not None:
            self._write()

    def kill_leftovers(self) -> int:
        """SIGKILL every recorded process still running; how many were killed."""
        killed = 0
        for entry in self.entries.values():
            for pid, started in entry.items():
                with contextlib.suppress(psutil.Error, ValueError):
                    proc = psutil.Process(int(pid))
                    if abs(proc.create_time() - float(started)) < 0.01:
                        proc.send_signal(signal.SIGKILL)
                        killed += 1
        self.entries = {}
        self._write()
        return killed
