"""The ledger of main processes: ``HOME/podruntime/ledger.json``, pod id → pid, pgid, start.

Written whenever a main process starts or ends. When the emulator starts, every process
group the ledger names is killed if it still has members that belong to it: same process
group, started no earlier than the recorded leader, and ``RUNPOD_POD_ID`` in its
environment equal to the pod's id (so a reused pid or group id never kills a stranger).
This is what ends the leftovers of an emulator killed with ``kill -9``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any

import psutil

Entry = dict[str, Any]


class Ledger:
    """The on-disk record of the running main processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Entry] = self._read()

    def _read(self) -> dict[str, Entry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.entries), encoding="utf-8")
        os.replace(tmp, self.path)

    def add(self, pod_id: str, pid: int) -> None:
        """Record the main process ``pid`` (its own group leader) of ``pod_id``."""
        try:
            started = psutil.Process(pid).create_time()
        except psutil.Error:
            started = 0.0
        self.entries[pod_id] = {"pid": pid, "pgid": pid, "started": started}
        self._write()

    def remove(self, pod_id: str) -> None:
        """Forget the pod's main process (it has ended)."""
        if self.entries.pop(pod_id, None) is not None:
            self._write()

    def kill_leftovers(self) -> int:
        """Kill every surviving member of the recorded groups; how many were killed."""
        killed = 0
        for pod_id, entry in list(self.entries.items()):
            for proc in _members(int(entry["pgid"]), float(entry["started"]), pod_id):
                with contextlib.suppress(psutil.Error):
                    proc.send_signal(signal.SIGKILL)
                    killed += 1
        self.entries = {}
        self._write()
        return killed


def _members(pgid: int, started: float, pod_id: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(proc.pid) != pgid or proc.create_time() < started - 1:
                continue
            if proc.environ().get("RUNPOD_POD_ID") == pod_id:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found
