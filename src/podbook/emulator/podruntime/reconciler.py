"""The reconciler: one asyncio task that makes running processes follow the pod records.

The emulator derives a pod's status from its stored phase at read time, so nothing fires when
a pod "becomes" RUNNING. Every :data:`TICK` seconds the reconciler compares each pod record
with what it runs:

- a pod whose status is RUNNING, and that it does not run for this boot (a boot is named by
  its phase's ``since``), is started: the container disk is wiped, the sandbox built, ``args``
  started as the main process (no ``args``: no main process, the pod idles with its services),
  the SSH server started for ``startSsh`` pods (direct on the ``22/tcp`` public port, proxy on
  the ``ssh-proxy`` port), the Jupyter server for ``startJupyter`` pods on the ``8888/http``
  public port;
- a pod it runs whose record is no longer RUNNING for that same boot (stopped, restarted, a
  new boot) is stopped: SIGTERM, then SIGKILL after the grace period, servers closed;
- a pod it runs that no longer exists (terminated, its cluster deleted) is stopped and its tree
  removed; a network volume whose record is gone has its directory removed.

A main process that exits by itself ends the container, so the pod becomes EXITED, as the seed
says ("EXITED: container exited (stopped)"): its log gets ``container exited with code N``
and billing stops, as for ``stop``; ``start`` runs it again. Lines of the main process go to
the pod's container log (source ``container``) as they come. At most
``settings.max_running_pods`` pods run at once; a pod beyond the cap is not started and its
log says why (creation already refuses it with the capacity error, see ``capacity.py``).
Every process a pod starts is tracked by its pod group (:mod:`.confine`: a cgroup, or the
process tree recorded as it forms) and ends with the pod. When the emulator starts, leftovers
of an earlier run are killed (the pod groups and :mod:`.processledger`), then the RUNNING pods start
again like after a host reboot (fresh container disk, same mounts). Blocking work (building and
removing trees, killing process groups) runs off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podbook.emulator.lifecycle import RUNNING, running_since, status_of
from podbook.emulator.podkeys import pod_key
from podbook.emulator.podlogs import log_book
from podbook.emulator.podruntime.boxed import OpenBox, boxed_env, open_box
from podbook.emulator.podruntime.confine import Confinement, PodGroup, process_children
from podbook.emulator.podruntime.figures import ProcessTree, runtime_block
from podbook.emulator.podruntime.mainproc import MainProcess
from podbook.emulator.podruntime.processledger import ProcessLedger
from podbook.emulator.podruntime.services import (
    kill_service_orphans,
    start_services,
    stop_services,
)
from podbook.emulator.podruntime.tree import build_sandbox, claim, remove_gone_trees, runtime_root
from podbook.emulator.pods import mark_exited
from podbook.emulator.tasks import cancel_and_wait

log = logging.getLogger("podbook.emulator.podruntime")

TICK = 0.1
Record = dict[str, Any]


@dataclass
class LivePod:
    """What the runtime runs for one pod's boot."""

    pod_id: str
    account_id: str
    boot: float
    main: MainProcess | None = None
    services: list[Any] = field(default_factory=list)
    tree: ProcessTree = field(default_factory=ProcessTree)
    watcher: asyncio.Task[None] | None = None
    starting: asyncio.Task[None] | None = None  # the services' start (Jupyter takes seconds)
    group: PodGroup | None = None  # every process of this boot (confine.py)
    box: OpenBox | None = None  # --sandbox bwrap: the pod's box (boxed.py)

    def roots(self) -> list[int]:
        """The processes the runtime started for this boot (main, servers, SSH sessions)."""
        pids = [self.main.pid] if self.main is not None else []
        if self.box is not None:
            pids.append(self.box.box.pid)
        for service in self.services:
            pids += getattr(service, "pids", lambda: [])()
        return [pid for pid in pids if pid > 0]  # -1: a box's process already gone


class LocalRuntime:
    """Runs the emulator's pods for real; see the module docstring."""

    def __init__(self, emulator: Any) -> None:
        self.emulator = emulator
        self.settings = emulator.settings
        self.home: Path = Path(self.settings.home or self.settings.db_path.parent)
        self.ledger = ProcessLedger(runtime_root(self.home) / "ledger.json")
        self.pods: dict[str, LivePod] = {}
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._refused: set[tuple[str, float]] = set()
        self._started_at = 0.0
        self.confinement = Confinement(self.home)
        self._warned: set[str] = set()

    # lifecycle of the runtime ---------------------------------------------------------------

    def start(self) -> None:
        """Kill an earlier run's leftovers, then reconcile every :data:`TICK` seconds.

        Runs under the emulator's claim on its home, so whatever the ledger and the pod groups
        still name was left by an emulator that is gone, never by a live one."""
        killed = self.ledger.kill_leftovers() + self.confinement.kill_leftovers()
        killed += kill_service_orphans([r["id"] for _, r in self.emulator.store.pods.every()])
        if killed:
            log.info("killed %d leftover pod process(es) of an earlier run", killed)
        self._claim_own_trees()
        log.info("local runtime: pod processes tracked by %s", self.confinement.mode)
        if self.settings.sandbox == "bwrap":
            log.info("local runtime: each pod runs in a bubblewrap box (--sandbox bwrap)")
        self.emulator.views.live = self.measure
        self._started_at = self.emulator.clock()
        self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        """Stop every pod's processes (the emulator is stopping)."""
        await cancel_and_wait(self._task)
        async with self._lock:
            await asyncio.gather(*(self._stop(pod) for pod in list(self.pods.values())))
        self.confinement.close()

    async def _loop(self) -> None:
        while True:
            try:
                async with self._lock:
                    await self.reconcile()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # keep reconciling; say what failed, not the secrets
                log.error("local runtime: reconcile failed: %s", type(exc).__name__)
            await asyncio.sleep(TICK)

    # one pass -------------------------------------------------------------------------------

    async def reconcile(self) -> None:
        """Start, stop and remove processes so they match the pod records now."""
        now = self.emulator.clock()
        wanted: dict[str, tuple[str, Record]] = {}
        for account_id, record in self.emulator.store.pods.every():
            if status_of(record["phase"], now) == RUNNING:
                wanted[record["id"]] = (account_id, record)
        ending = [
            live
            for pod_id, live in self.pods.items()
            if pod_id not in wanted or wanted[pod_id][1]["phase"]["since"] != live.boot
        ]
        await asyncio.gather(*(self._stop(live) for live in ending))
        for pod_id, (account_id, record) in wanted.items():
            if pod_id not in self.pods:
                try:
                    await self._start(account_id, record)
                except Exception as exc:  # this pod only; it is not retried until its next boot
                    note = f"the local runtime could not start the pod: {type(exc).__name__}: {exc}"
                    self._log(account_id, pod_id, [note], "system")
        await self._record_processes()
        store = self.emulator.store
        await asyncio.to_thread(
            remove_gone_trees,
            self.home,
            store.identity,
            lambda pod_id: store.pods.exists(pod_id) or pod_id in self.pods,
            store.network_volumes.exists,
        )

    def _claim_own_trees(self) -> None:
        """Mark the trees of this database's records as its own (trees made before owners
        were marked); a tree no record of it names is left alone: it may be another one's."""
        root = runtime_root(self.home)
        store = self.emulator.store
        for folder, collection in (("pods", store.pods), ("volumes", store.network_volumes)):
            for _, record in collection.every():
                if (root / folder / record["id"]).is_dir():
                    claim(root / folder / record["id"], store.identity)

    async def _record_processes(self) -> None:
        """Fallback tracking (no cgroup): record each pod's process tree as it forms."""
        groups = [live for live in self.pods.values() if live.group and not live.group.cgroup]
        if not groups:
            return
        children = await asyncio.to_thread(process_children)
        for live in groups:
            assert live.group is not None
            live.group.record(children)
            self.ledger.add(live.pod_id, live.group.recorded)

    # one pod --------------------------------------------------------------------------------

    def _log(self, account_id: str, pod_id: str, lines: list[str], source: str) -> None:
        record = self.emulator.store.pods.get(account_id, pod_id)
        if record is not None and lines:
            log_book(self.emulator).append_lines(
                record, [(source, line) for line in lines], self.emulator.clock()
            )

    async def _start(self, account_id: str, record: Record) -> None:
        pod_id = record["id"]
        boot = record["phase"]["since"]
        if len(self.pods) >= self.settings.max_running_pods:
            if (pod_id, boot) not in self._refused:
                self._refused.add((pod_id, boot))
                self._log(
                    account_id,
                    pod_id,
                    ["not started: the local runtime's cap on running pods is reached"],
                    "system",
                )
            return
        live = LivePod(pod_id=pod_id, account_id=account_id, boot=boot)
        self.pods[pod_id] = live
        live.group = group = await asyncio.to_thread(self.confinement.group, pod_id)
        group.roots = live.roots
        sandbox = await asyncio.to_thread(
            build_sandbox,
            self.home,
            record,
            wipe_container=True,
            owner=self.emulator.store.identity,
            service={
                "RUNPOD_API_KEY": pod_key(self.emulator.store, pod_id),
                "PODBOOK_API_URL": self.settings.url,
            },
        )
        private = self.settings.private_files()
        if self.settings.sandbox == "bwrap":  # the box hides the home (no Landlock: no mounts)
            live.box = await open_box(
                record,
                sandbox,
                api_url=self.settings.url,
                hidden=[Path.home(), self.home],
                hidden_files=private,
                shared=self.settings.share_ro,
                preexec=group.preexec(),
            )
            sandbox.box = live.box.box
            sandbox.run_dir = live.box.run
            sandbox.env = boxed_env(sandbox)
        else:
            allowed = [sandbox.root, *sandbox.mounts.values()]
            if not await asyncio.to_thread(group.hide, [self.home, *private], allowed):
                self._warn_once("Landlock is not available: pod processes can read the home")
        sandbox.preexec = group.preexec()
        if (running_since(record["phase"]) or 0) < self._started_at - 1:
            note = "the emulator restarted: the container starts again (fresh container disk)"
            self._log(account_id, pod_id, [note], "system")
        args = (record.get("args") or "").strip()
        if args:
            try:
                output = lambda lines: self._log(account_id, pod_id, lines, "container")  # noqa: E731
                if sandbox.box is not None:
                    live.main = await MainProcess.start_in_box(
                        args, sandbox.box, sandbox.env, sandbox.cwd, output
                    )
                else:
                    live.main = await MainProcess.start(args, sandbox, output)
            except OSError as exc:  # e.g. E2BIG: the container fails to start, as a pod would
                note = f"the container failed to start: {exc.strerror or exc}"
                self._log(account_id, pod_id, [note], "system")
                self._exit(account_id, live)
                await self._stop(live)
                return
            self.ledger.add_pid(pod_id, live.main.pid)
            live.watcher = asyncio.get_running_loop().create_task(self._watch(account_id, live))
        live.starting = asyncio.get_running_loop().create_task(
            start_services(
                record,
                sandbox,
                live.services,
                lambda lines: self._log(account_id, pod_id, lines, "system"),
                lambda lines: self._log(account_id, pod_id, lines, "container"),
            )
        )

    def _warn_once(self, note: str) -> None:
        if note not in self._warned:
            self._warned.add(note)
            log.warning("local runtime: %s (see docs/local-runtime.md, Isolation)", note)

    async def _watch(self, account_id: str, live: LivePod) -> None:
        """When the main process exits by itself, the pod becomes EXITED."""
        assert live.main is not None
        code = await live.main.wait()
        self.ledger.remove(live.pod_id)
        if live.main.stopping:
            return
        async with self._lock:
            if self._exit(account_id, live, f"container exited with code {code}"):
                await self._stop(live)

    def _exit(self, account_id: str, live: LivePod, line: str | None = None) -> bool:
        """Mark this boot of the pod EXITED (its container ended); False if it is not the
        pod's current boot any more."""
        record = self.emulator.store.pods.get(account_id, live.pod_id)
        if record is None or record["phase"].get("since") != live.boot:
            return False
        if line:
            self._log(account_id, live.pod_id, [line], "system")
        updated = dict(record)
        mark_exited(updated, self.emulator.clock())
        self.emulator.store.pods.put(account_id, updated)
        return True

    async def _stop(self, live: LivePod) -> None:
        self.pods.pop(live.pod_id, None)
        group = live.group
        if group is not None:  # every process of the pod gets the main process's grace
            await asyncio.to_thread(group.signal_all, signal.SIGTERM)
        if live.starting is not None:
            live.starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await live.starting
        if live.main is not None:
            await live.main.stop()
        await stop_services(live.services)
        live.services = []
        if live.box is not None:
            await live.box.close()
        if group is not None:  # what is left (daemons, detached children) ends now
            await asyncio.to_thread(group.kill_all)
            await asyncio.to_thread(self.confinement.release, group)
        self.ledger.remove(live.pod_id)

    # figures --------------------------------------------------------------------------------

    def measure(self, record: Record, now: float) -> dict[str, Any]:
        """The measured ``runtime`` block of a RUNNING pod."""
        live = self.pods.get(record["id"])
        roots: list[int] = []
        tree = ProcessTree()
        if live is not None:
            tree = live.tree
            if live.box is not None:  # every process of the pod descends from its box
                roots.append(live.box.box.pid)
            else:
                if live.main is not None:
                    roots.append(live.main.pid)
                roots += [pid for s in live.services if (pid := getattr(s, "pid", None))]
        since = running_since(record["phase"]) or now
        return runtime_block(record, now, since, tree, roots)
