"""The local runtime's cap on running pods (``--max-running-pods``), as a capacity error,
and the loopback addresses of cluster members.

A pod counts from creation (or ``start``) until it is stopped, exits or is terminated, i.e.
while its phase is a boot. Beyond the cap, creating or starting answers what the service
answers when a machine cannot be found: 400 with the title ``No Capacity``.
"""

from __future__ import annotations

from typing import Any

from podbook.emulator.problems import Problem


def check_capacity(emulator: Any, adding: int) -> None:
    """400 ``No Capacity`` when ``adding`` more pods would exceed the cap (local runtime only)."""
    settings = emulator.settings
    if settings.runtime != "local":
        return
    active = sum(
        1 for _, record in emulator.store.pods.every() if record["phase"]["kind"] == "boot"
    )
    cap = settings.max_running_pods
    if active + adding > cap:
        raise Problem(
            400,
            f"no capacity: the local runtime runs at most {cap} pod(s) at once and {active} "
            "run or start; stop or terminate one, or raise --max-running-pods",
            title="No Capacity",
        )


def free_loopback_ip(store: Any) -> str:
    """A loopback address no cluster member uses yet: ``127.0.0.2`` … ``127.0.0.254``, then
    ``127.0.1.1`` and so on (a member's cluster ``ip``; its processes may bind it)."""
    used = {
        record["cluster"].get("ip") for _, record in store.pods.every() if record.get("cluster")
    }
    for third in range(256):
        for fourth in range(1, 255):
            ip = f"127.0.{third}.{fourth}"
            if ip not in used and ip != "127.0.0.1":
                return ip
    raise RuntimeError("no free loopback address for a cluster member")
