"""Pod records: creation from a validated request, the wire view, actions and patches.

A stored pod record keeps the container configuration in wire form plus what the emulator
needs to derive the rest at read time: its lifecycle ``phase`` (see
:mod:`podbook.emulator.lifecycle`), the machine it was placed on (data center, public IP,
host CUDA version, price), its SSH proxy username, its public port map, its global-network
address and, for cluster members, its membership.

Global networking: ``globalNetworking: true`` places the pod only in a data center whose
catalog entry supports global networking (and needs an NVIDIA GPU); when the request's
``dataCenterIds`` name none that does, or the pod is a CPU pod, creation answers 400 with a
detail that says so (the reference: "enforced upstream"). A pod with global networking
shows ``ip`` and ``internalDns`` = ``<pod_id>.<internal domain>``; any other pod shows
``{"enabled": false}``.

Runtime: the seed's creation example shows ``runtime: {}`` for the PROVISIONING pod, so the
create response carries ``{}``; every later read carries ``runtime`` only while RUNNING
(``null`` otherwise).
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Callable
from typing import Any

import orjson

from podbook.emulator.billing.ledger import close_run
from podbook.emulator.lifecycle import (
    ACTIONS,
    EXITED,
    PROVISIONING,
    RUNNING,
    boot_phase,
    check_action,
    iso,
    running_since,
    running_since_iso,
    status_of,
)
from podbook.emulator.placement import Placement
from podbook.emulator.podmetrics import new_port_map, runtime_block
from podbook.emulator.problems import Problem
from podbook.emulator.settings import EmulatorSettings

LOOPBACK = "127.0.0.1"

Record = dict[str, Any]

_ID_ALPHABET = string.ascii_lowercase + string.digits
CONTAINER_FIELDS = ("image", "args", "disk", "ports", "env", "registry")


def new_id(length: int = 14) -> str:
    """An opaque lowercase id like the service's (``7h9k2m4n6p...``)."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))


def inject_env(
    env: dict[str, str], *, start_ssh: bool, start_jupyter: bool, ssh_keys: list[str]
) -> dict[str, str]:
    """Add ``PUBLIC_KEY`` (from the account's keys) and ``JUPYTER_PASSWORD`` unless set."""
    env = dict(env)
    if start_ssh and ssh_keys and "PUBLIC_KEY" not in env:
        env["PUBLIC_KEY"] = "\n".join(ssh_keys)
    if start_jupyter and "JUPYTER_PASSWORD" not in env:
        env["JUPYTER_PASSWORD"] = secrets.token_urlsafe(12)
    return env


def new_pod_record(
    *,
    pod_id: str,
    spec: dict[str, Any],
    placement: Placement,
    now: float,
    settings: EmulatorSettings,
    ssh_keys: list[str],
    cluster: dict[str, Any] | None = None,
) -> Record:
    """A stored pod from a merged create spec (wire names) and its placement."""
    ports = list(spec.get("ports") or [])
    record: Record = {
        "id": pod_id,
        "name": spec["name"],
        "image": spec["image"],
        "args": spec.get("args") or "",
        "disk": spec.get("disk") or 20,
        "ports": ports,
        "env": inject_env(
            dict(spec.get("env") or {}),
            start_ssh=bool(spec.get("startSsh")),
            start_jupyter=bool(spec.get("startJupyter")),
            ssh_keys=ssh_keys,
        ),
        "registry": spec.get("registry"),
        "mounts": dict(spec.get("mounts") or {}),
        "cloud": spec.get("cloud") or "SECURE",
        "locked": False,
        "createdAt": iso(now),
        "startedAt": None,
        "phase": boot_phase(now, settings.provision_seconds, settings.start_seconds),
        "dataCenterId": placement.data_center_id,
        "cudaVersion": placement.cuda_version,
        "publicIp": LOOPBACK if settings.runtime == "local" else placement.public_ip,
        "pricePerHour": placement.price_per_hour,
        "sshUser": f"{pod_id}-{secrets.token_hex(4)}",
        "portMap": port_map_for(ports, settings, ssh=bool(spec.get("startSsh"))),
        "globalIp": placement.global_ip,
    }
    if "gpu" in spec:
        record["gpu"] = {"id": spec["gpu"]["id"], "count": spec["gpu"].get("count", 1)}
    else:
        record["cpu"] = {
            "id": spec["cpu"]["id"],
            "vcpuCount": spec["cpu"]["vcpuCount"],
            "memory": placement.memory_gb,
        }
    if cluster is not None:
        record["cluster"] = cluster
    return record


def port_map_for(ports: list[str], settings: EmulatorSettings, *, ssh: bool) -> dict[str, int]:
    """Public ports for ``ports``: invented ones, or with the local runtime real free loopback
    ports (plus ``ssh-proxy``, the port of the pod's SSH proxy endpoint, for SSH pods)."""
    if settings.runtime != "local":
        return new_port_map(ports)
    from podbook.emulator.podruntime.ports import free_ports

    names = [*ports, "ssh-proxy"] if ssh else list(ports)
    return dict(zip(names, free_ports(LOOPBACK, len(names)), strict=True))


def current_status(record: Record, now: float) -> str:
    """The pod's status now."""
    return status_of(record["phase"], now)


def render_pod(
    record: Record, now: float, settings: EmulatorSettings, *, creating: bool = False
) -> dict[str, Any]:
    """The pod as the wire shows it at ``now`` (uncached; see :class:`PodViews`)."""
    status = status_of(record["phase"], now)
    view = _static_view(record, status, now, settings)
    _add_runtime(view, record, status, now, creating)
    return view


class _Static:
    """A pod's view but ``runtime``, for one record object and status; its JSON made once,
    on first need, split around ``runtime``'s value."""

    __slots__ = ("json", "key", "record", "view")

    def __init__(self, record: Record, key: tuple[str, bool], view: dict[str, Any]) -> None:
        self.record, self.key, self.view = record, key, view
        self.json: tuple[bytes, bytes] | None = None

    def halves(self) -> tuple[bytes, bytes]:
        """The view's JSON before and after ``runtime``'s value."""
        if self.json is None:
            marked = orjson.dumps({**self.view, "runtime": _RUNTIME_MARK})
            head, _, tail = marked.partition(orjson.dumps(_RUNTIME_MARK))
            self.json = (head, tail)
        return self.json


class _Sample:
    """A running pod's ``runtime`` for one second (the service samples its metrics so)."""

    __slots__ = ("json", "record", "second", "value")

    def __init__(self, record: Record, second: int, value: dict[str, Any]) -> None:
        self.record, self.second, self.value = record, second, value
        self.json: bytes | None = None


_RUNTIME_MARK = "podbook-runtime-" + secrets.token_hex(16)
"""Stands for ``runtime``'s value in a view's cached JSON (no field can hold it by chance)."""


class PodViews:
    """Renders pods, reusing what has not changed since the last read.

    Everything but ``runtime`` changes only with the pod's status, so it is kept per pod
    record object and status (a changed pod is a new record object). ``runtime`` is sampled
    once per second per pod, like the real service's metrics: reads within the same second
    (of the pod's own, which starts at an offset of its id) share one sample. :meth:`render_json` gives the same view as JSON from cached pieces, so a
    list of thousands of pods builds no dict per pod and encodes only what changed.
    """

    def __init__(self, settings: EmulatorSettings) -> None:
        self._settings = settings
        self._static: dict[str, _Static] = {}
        self._runtime: dict[str, _Sample] = {}
        self.live: Callable[[Record, float], dict[str, Any]] | None = None
        """Measures ``runtime`` of a running pod (the local runtime); None: invented."""

    def _parts(self, record: Record, now: float) -> tuple[_Static, _Sample | None, str]:
        """The cached static view and, while RUNNING, this second's sample; and the status."""
        status = status_of(record["phase"], now)
        cluster = record.get("cluster")
        key = (status, cluster is None or now >= cluster["assignAt"])
        pod_id = record["id"]
        static = self._static.get(pod_id)
        if static is None or static.record is not record or static.key != key:
            static = _Static(record, key, _static_view(record, status, now, self._settings))
            self._static[pod_id] = static
        if status != RUNNING:
            return static, None, status
        # each pod's second starts at its own offset: a list of thousands renews a share of
        # their samples at every read, never all of them in the read after a second turns
        second = int(now + (hash(pod_id) % 1000) / 1000)
        sample = self._runtime.get(pod_id)
        if sample is None or sample.record is not record or sample.second != second:
            measure = self.live or _runtime_of
            sample = _Sample(record, second, measure(record, now))
            self._runtime[pod_id] = sample
        return static, sample, status

    def render(self, record: Record, now: float, *, creating: bool = False) -> dict[str, Any]:
        """The pod as the wire shows it at ``now``."""
        static, sample, status = self._parts(record, now)
        view = static.view.copy()
        if sample is not None:
            view["runtime"] = sample.value
        elif creating and status == PROVISIONING:
            view["runtime"] = {}
        return view

    def render_json(self, record: Record, now: float) -> tuple[bytes, bytes, bytes]:
        """``orjson.dumps(self.render(record, now))`` in three cached pieces, to be joined
        (once, with the rest of a list's)."""
        static, sample, _ = self._parts(record, now)
        head, tail = static.halves()
        if sample is None:
            return head, b"null", tail
        if sample.json is None:
            sample.json = orjson.dumps(sample.value)
        return head, sample.json, tail

    def forget(self, pod_id: str) -> None:
        """Drop the cached views of a deleted pod."""
        self._static.pop(pod_id, None)
        self._runtime.pop(pod_id, None)


def _add_runtime(
    view: dict[str, Any], record: Record, status: str, now: float, creating: bool
) -> None:
    if status == RUNNING:
        view["runtime"] = _runtime_of(record, now)
    elif creating and status == PROVISIONING:
        view["runtime"] = {}


def _runtime_of(record: Record, now: float) -> dict[str, Any]:
    return runtime_block(
        record["id"],
        now,
        running_since(record["phase"]),  # type: ignore[arg-type]
        record["gpu"]["count"] if "gpu" in record else 0,
        record["ports"],
        record["portMap"],
        record["publicIp"],
    )


def _static_view(
    record: Record, status: str, now: float, settings: EmulatorSettings
) -> dict[str, Any]:
    """Every field of the pod view but ``runtime`` (null here)."""
    phase = record["phase"]
    running = status == RUNNING
    ports = record["ports"]
    started_at = record["startedAt"]
    if running:
        started_at = running_since_iso(phase)
    proxy_host = settings.ssh_proxy_host
    ssh_direct = None
    port_map = record["portMap"]
    if running and "22/tcp" in ports and "22/tcp" in port_map:
        ssh_port = port_map["22/tcp"]
        ip = record["publicIp"]
        ssh_direct = {
            "host": ip,
            "port": ssh_port,
            "username": "root",
            "command": f"ssh root@{ip} -p {ssh_port}",
        }
    user = record["sshUser"]
    proxy_port = port_map.get("ssh-proxy", 22)
    proxy_command = f"ssh {user}@{proxy_host}" + (f" -p {proxy_port}" if proxy_port != 22 else "")
    proxy: dict[str, Any] | None = {
        "host": proxy_host,
        "port": proxy_port,
        "username": user,
        "command": proxy_command,
    }
    unavailable = no_ssh_reason(record, settings)
    if unavailable is not None:  # no server of this pod would answer: show no command
        proxy = ssh_direct = None
    elif settings.runtime == "local" and "ssh-proxy" not in port_map:
        proxy = None  # SSH on the direct port only (PUBLIC_KEY set by hand, no startSsh)
    view: dict[str, Any] = {
        "id": record["id"],
        "name": record["name"],
        "status": status,
        "actions": list(ACTIONS.get(status, ())),
        "image": record["image"],
        "args": record["args"],
        "disk": record["disk"],
        "mounts": record["mounts"],
        "ports": ports,
        "env": record["env"],
        "registry": record["registry"],
        "cloud": record["cloud"],
        "dataCenterId": record["dataCenterId"],
        "cudaVersion": record["cudaVersion"],
        "ssh": {"proxy": proxy, "direct": ssh_direct},
        "template": None,
        "cost": 0.0 if status == EXITED or status == "ERROR" else record["pricePerHour"],
        "locked": record["locked"],
        "globalNetworking": (
            {
                "enabled": True,
                "ip": record["globalIp"],
                "internalDns": f"{record['id']}.{settings.internal_domain}",
            }
            if record["globalIp"]
            else {"enabled": False}
        ),
        "runtime": None,
        "createdAt": record["createdAt"],
        "startedAt": started_at,
    }
    if "gpu" in record:
        view["gpu"] = record["gpu"]
    else:
        view["cpu"] = record["cpu"]
    if unavailable is not None:
        view["ssh"]["unavailable"] = unavailable
    cluster = record.get("cluster")
    if cluster is not None:
        view["cluster"] = cluster_membership_view(cluster, record, now)
    return view


def no_ssh_reason(record: Record, settings: EmulatorSettings) -> str | None:
    """Why the local runtime runs no SSH server for this pod (its commands would reach another
    program, such as the host's own sshd on port 22), or None when it does or pods are
    simulated (``--runtime none``: the addresses are invented and lead nowhere)."""
    if settings.runtime != "local":
        return None
    if not str((record.get("env") or {}).get("PUBLIC_KEY") or "").strip():
        return (
            "no SSH server: the pod has no PUBLIC_KEY; register a key (%sshkey add, or "
            "client.account.ssh_keys.put) and create the pod with --ssh (startSsh)"
        )
    port_map = record.get("portMap") or {}
    if "ssh-proxy" not in port_map and "22/tcp" not in port_map:
        return "no SSH server: the pod was created without startSsh; create it with --ssh"
    return None


def cluster_membership_view(cluster: dict[str, Any], record: Record, now: float) -> dict[str, Any]:
    """A member's ``cluster`` block: rank, role and overlay IP appear once assigned.

    The role follows from the rank (rank 0 is the controller or head), so like the rank it
    is not shown before the assignment.
    """
    if now < cluster["assignAt"]:
        return {"id": cluster["id"], "rank": None}
    view: dict[str, Any] = {"id": cluster["id"], "rank": cluster["rank"]}
    if cluster.get("role"):
        view["role"] = cluster["role"]
    view["ip"] = cluster["ip"]
    return view


def apply_action(record: Record, action: str, now: float, settings: EmulatorSettings) -> None:
    """Apply ``start``/``stop``/``restart`` to a stored pod (409 when not allowed now)."""
    status = status_of(record["phase"], now)
    check_action(status, action, locked=record["locked"], pod_id=record["id"])
    if action == "start":
        if status == PROVISIONING:
            return  # already on its way to RUNNING
        _boot(record, now, settings)
    elif action == "restart":
        _remember_start(record, now)
        close_run(record, now)
        _boot(record, now, settings)
    elif action == "stop":
        _remember_start(record, now)
        close_run(record, now)
        record["phase"] = {"kind": "exited", "since": now}


def mark_exited(record: Record, now: float) -> None:
    """The container ended by itself (local runtime): EXITED, billing closed, as for stop."""
    _remember_start(record, now)
    close_run(record, now)
    record["phase"] = {"kind": "exited", "since": now}


def _remember_start(record: Record, now: float) -> None:
    since = running_since(record["phase"])
    if since is not None and since <= now:
        record["startedAt"] = running_since_iso(record["phase"])


def _boot(record: Record, now: float, settings: EmulatorSettings) -> None:
    """Start the container again on the same machine: STARTING, then RUNNING."""
    record["phase"] = boot_phase(now, 0.0, settings.start_seconds)
    record["portMap"] = port_map_for(
        record["ports"], settings, ssh="ssh-proxy" in record["portMap"]
    )
    wanted = record.pop("globalNetworkingWanted", None)
    if wanted is not None:
        record["globalIp"] = record.get("globalIpCandidate") if wanted else None


def ensure_not_member(record: Record, verb: str) -> None:
    """409 for changing a cluster member through the pod endpoints."""
    cluster = record.get("cluster")
    if cluster is not None:
        raise Problem(
            409,
            f"pod {record['id']!r} belongs to cluster {cluster['id']!r} and cannot be {verb} "
            f"through the pod endpoints; manage it through /v2/clusters/{cluster['id']}",
        )
