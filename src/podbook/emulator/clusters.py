"""Clusters: groups of identical GPU pods in one data center.

Members are ordinary pod records with a ``cluster`` block: rank 0 is the primary (the
controller for SLURM, the head for RAY); roles are SLURM_CONTROLLER/SLURM_COMPUTE and
RAY_HEAD/RAY_WORKER, none for APPLICATION and TRAINING. Ranks, roles and overlay IPs are
assigned halfway through provisioning (``rank`` null, ``role`` and ``ip`` omitted before), together with the
cluster's overlay ``network``. The cluster shows ``dataCenterId`` and ``primary`` from
creation (members are placed at once); ``primary.sshEndpoint`` (``host:port``) only while the
primary is RUNNING with ``22/tcp`` mapped.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from podbook.emulator.lifecycle import RUNNING, status_of

Record = dict[str, Any]

OVERLAY_CIDR = "10.65.0.0/16"
VXLAN_PORT = 4789

_ROLES = {
    "SLURM": ("SLURM_CONTROLLER", "SLURM_COMPUTE"),
    "RAY": ("RAY_HEAD", "RAY_WORKER"),
}


def member_role(cluster_type: str, rank: int) -> str | None:
    """The role of the member at ``rank`` (None for APPLICATION and TRAINING)."""
    roles = _ROLES.get(cluster_type)
    if roles is None:
        return None
    return roles[0] if rank == 0 else roles[1]


def overlay_ip(rank: int) -> str:
    """The member's address on the overlay network (10.65.0.2 for rank 0, ...)."""
    host = rank + 2
    return f"10.65.{host // 256}.{host % 256}"


def membership(cluster_id: str, cluster_type: str, rank: int, assign_at: float) -> Record:
    """The stored ``cluster`` block of a member pod."""
    block: Record = {
        "id": cluster_id,
        "rank": rank,
        "ip": overlay_ip(rank),
        "assignAt": assign_at,
    }
    role = member_role(cluster_type, rank)
    if role:
        block["role"] = role
    return block


def render_cluster(cluster: Record, members: list[Record], now: float) -> dict[str, Any]:
    """The cluster as the wire shows it at ``now``."""
    statuses = {m["id"]: status_of(m["phase"], now) for m in members}
    view: dict[str, Any] = {
        "id": cluster["id"],
        "name": cluster["name"],
        "type": cluster["type"],
        "compute": cluster["compute"],
        "pods": {"total": len(members), "byStatus": dict(Counter(statuses.values()))},
        "createdAt": cluster["createdAt"],
    }
    if cluster.get("template"):
        view["template"] = cluster["template"]
    if members:
        view["dataCenterId"] = members[0]["dataCenterId"]
    if now >= cluster["networkAt"]:
        view["network"] = {
            "cidr": OVERLAY_CIDR,
            "vxlanId": cluster["vxlanId"],
            "vxlanPort": VXLAN_PORT,
        }
    primary = next((m for m in members if m["cluster"]["rank"] == 0), None)
    if primary is not None:
        block: dict[str, Any] = {"podId": primary["id"], "status": statuses[primary["id"]]}
        port = primary["portMap"].get("22/tcp")
        if statuses[primary["id"]] == RUNNING and "22/tcp" in primary["ports"] and port:
            block["sshEndpoint"] = f"{primary['publicIp']}:{port}"
        view["primary"] = block
    return view
