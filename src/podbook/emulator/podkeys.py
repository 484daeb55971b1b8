"""Pod-scoped API keys: what the service puts in every pod (``RUNPOD_API_KEY``) so that a
process in the pod can act on its own pod, and on nothing else.

A pod's key is derived, not stored: ``rpa_pod_<pod id>_<HMAC-SHA256 of the id>`` under a
secret made once per database (``Store.pod_key_secret``). It is the same at every start of
the pod and dies with the pod (an unknown pod's key is an invalid key). With it a caller may
read its pod (``GET /v2/pods/{id}``), read its log, run an action on it (stop, restart,
terminate) and delete it; every other call, on another pod or any other part of the account,
is a 403.
"""

from __future__ import annotations

import hashlib
import hmac

from podbook.emulator.problems import Problem
from podbook.emulator.store import Store

PREFIX = "rpa_pod_"

# (method, route path) a pod-scoped key may call, on its own pod only
ALLOWED = frozenset(
    {
        ("GET", "/v2/pods/{id}"),
        ("GET", "/v2/pods/{id}/logs"),
        ("POST", "/v2/pods/{id}/action"),
        ("DELETE", "/v2/pods/{id}"),
    }
)


def _mac(secret: bytes, pod_id: str) -> str:
    return hmac.new(secret, pod_id.encode("utf-8"), hashlib.sha256).hexdigest()[:40]


def pod_key(store: Store, pod_id: str) -> str:
    """The pod-scoped key of ``pod_id``."""
    return f"{PREFIX}{pod_id}_{_mac(store.pod_key_secret, pod_id)}"


def resolve(store: Store, key: str) -> tuple[str, str] | None:
    """``(account_id, pod_id)`` of a valid pod-scoped key of an existing pod, else None."""
    pod_id, sep, mac = key[len(PREFIX) :].rpartition("_")
    if not key.startswith(PREFIX) or not sep or not pod_id:
        return None
    if not hmac.compare_digest(mac, _mac(store.pod_key_secret, pod_id)):
        return None
    account_id = store.pods.owner_of(pod_id)
    return None if account_id is None else (account_id, pod_id)


def check_scope(pod_id: str, method: str, route_path: str, path_id: str | None) -> None:
    """403 unless a key scoped to ``pod_id`` may make this call."""
    if ("GET" if method == "HEAD" else method, route_path) in ALLOWED and path_id == pod_id:
        return
    raise Problem(
        403,
        f"this key is scoped to pod {pod_id!r}: it may only read that pod and its log, stop, "
        "restart or terminate it; use an account API key for anything else",
    )
