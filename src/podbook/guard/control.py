"""Change a running guard's deadline from here: :func:`extend` and :func:`keep_running`.

The guard reads commands from ``${TMPDIR:-/tmp}/podbook-guard/control`` inside the pod (one
per line: ``extend SECONDS``, ``keep``), takes them at its next tick (at most 15 s) and
reports the new deadline on the pod's log. podbook writes that file over the pod's direct SSH
endpoint, so these need ``22/tcp`` and a registered key, as ``%pod push`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from podbook.guard.settings import parse_duration

if TYPE_CHECKING:
    from podbook.client import Client
    from podbook.remote.keys import SshKeyPair

__all__ = ["CONTROL_DIR", "extend", "keep_running"]

CONTROL_DIR = '"${TMPDIR:-/tmp}/podbook-guard"'
"""The guard's folder in the pod, as a shell word (its ``TMPDIR``, else ``/tmp``)."""


def _send(
    pod: Any, command: str, *, client: Client | None, key: SshKeyPair | str | Path | None
) -> None:
    from podbook.remote.ssh import RemoteError, run

    script = f"mkdir -p {CONTROL_DIR} && printf '%s\\n' '{command}' >> {CONTROL_DIR}/control"
    status = run(pod, script, client=client, key=key, shell="sh")
    if status != 0:
        raise RemoteError(
            f"could not reach the guard of pod {getattr(pod, 'id', pod)} (exit status {status})",
            reason="guard",
        )


def extend(
    pod: Any,
    by: str | float = "30m",
    *,
    client: Client | None = None,
    key: SshKeyPair | str | Path | None = None,
) -> int:
    """Push the guard's deadline back by ``by`` (``"30m"``, ``"2h"``, seconds) from the later of
    now and its current deadline; the seconds added. Raises ``ValueError`` for a bad duration
    and :class:`~podbook.remote.RemoteError` when the pod cannot be reached over SSH."""
    seconds = parse_duration(by, "extend by")
    _send(pod, f"extend {seconds}", client=client, key=key)
    return seconds


def keep_running(
    pod: Any, *, client: Client | None = None, key: SshKeyPair | str | Path | None = None
) -> None:
    """Turn the guard off until the pod stops: it runs until you stop it (a stop/start arms
    the guard again)."""
    _send(pod, "keep", client=client, key=key)
