"""Do what ``on_exit`` says for each pod a kernel created, all pods at once, within a deadline.

Each pod is looked at (``GET``) and, for ``stop`` / ``terminate``, acted on in a thread of
its own, through a client of the same target as the one that created it, with short
timeouts and no retries. Whatever has not answered by the deadline is named as such: a
kernel being shut down is killed a few seconds after the request (jupyter_client sends
SIGTERM after 2.5 s by default), so nothing here may take longer.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from podbook.api.types import BILLED_POD_STATUSES
from podbook.notebook.kernel_exit.ledger import CreatedPod

DEFAULT_BUDGET = 1.5
"""Seconds the whole exit may take: jupyter_client sends SIGTERM 2.5 s after its shutdown
request, and the lines must be written before that."""
GONE = "GONE"
"""The status of a pod the service no longer knows (terminated meanwhile)."""


@dataclass
class Outcome:
    """What became of one pod: its status and cost when looked at, and what was done."""

    pod: CreatedPod
    action: str
    status: str = ""
    cost: float = 0.0
    acted: bool = False
    error: str = ""


def one_line(err: BaseException) -> str:
    """An error as one short line (the first line of its message; never a traceback). An
    unreachable service reads the same for every pod: ``could not reach ORIGIN (reason)``."""
    from podbook.errors import ConnectionFailed, PodbookError

    if isinstance(err, ConnectionFailed):
        parts = urlsplit(err.url)
        return f"could not reach {parts.scheme}://{parts.netloc} ({err.reason})"
    text = str(err).strip().splitlines()
    first = text[0] if text else ""
    if not isinstance(err, PodbookError):
        first = f"{type(err).__name__}: {first}" if first else type(err).__name__
    return first if len(first) <= 200 else first[:199] + "…"


def exit_client(settings: Any, budget: float) -> Any:
    """A client of ``settings``' target that gives up quickly: short timeouts, one try."""
    import httpx

    from podbook.client import Client, RetryPolicy

    return Client(
        settings=settings,
        timeout=httpx.Timeout(budget, connect=min(1.0, budget)),
        retry=RetryPolicy(max_attempts=1, max_wait=0.0),
    )


def handle(outcome: Outcome, client: Any) -> None:
    """Look at one pod and, for ``stop``/``terminate``, act on it; fills in ``outcome``."""
    from podbook.errors import NotFound

    pod_id = outcome.pod.id
    try:
        record = client.pods.get(pod_id)
        outcome.status, outcome.cost = str(record.status), float(record.cost or 0.0)
        if outcome.action == "stop" and outcome.status in BILLED_POD_STATUSES:
            client.pods.stop(pod_id)
            outcome.acted = True
        elif outcome.action == "terminate" and outcome.status != "TERMINATED":
            client.pods.terminate(pod_id)
            outcome.acted = True
    except NotFound:
        outcome.status = GONE
    except Exception as err:  # noqa: BLE001 - at exit every failure is one line, never a traceback
        outcome.error = one_line(err)


def settle(
    pods: list[CreatedPod], default: str, budget: float = DEFAULT_BUDGET
) -> tuple[list[Outcome], list[Outcome]]:
    """Apply each pod's ``on_exit`` (``default`` where it has none); ``keep`` pods are not
    even looked at. Returns (finished, unfinished by the deadline)."""
    outcomes = [Outcome(pod, pod.on_exit or default) for pod in pods]
    outcomes = [outcome for outcome in outcomes if outcome.action != "keep"]
    if not outcomes:
        return [], []
    deadline = time.monotonic() + budget
    clients: dict[int, Any] = {}
    threads = []
    for outcome in outcomes:
        key = id(outcome.pod.settings)
        if key not in clients:
            clients[key] = exit_client(outcome.pod.settings, budget)
        thread = threading.Thread(
            target=handle, args=(outcome, clients[key]), name="podbook-on-exit", daemon=True
        )
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    alive = {id(o) for o, t in zip(outcomes, threads, strict=True) if t.is_alive()}
    if not alive:
        for client in clients.values():
            client.close()
    finished = [o for o in outcomes if id(o) not in alive]
    return finished, [o for o in outcomes if id(o) in alive]
