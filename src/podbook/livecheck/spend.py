"""The spending part of the live check (``PODBOOK_LIVE_SPEND=1``): the cheapest available CPU
pod is created, waited for to RUNNING, its SSH and logs read, stopped, started and
terminated; then the money it cost is printed.

Cleanup cannot be skipped: whatever happens in the steps (a failure, a timeout, Ctrl-C,
SIGTERM), a ``finally`` terminates the pod, with further interrupts held back until it is
done, and then sweeps every pod whose name starts with ``podbook-live-`` (also one whose
create answer was lost).
"""

from __future__ import annotations

import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import KW_ONLY, dataclass, field
from itertools import islice
from typing import Any

from podbook.errors import APIError, NotFound
from podbook.livecheck.options import NAME_PREFIX, LiveOptions
from podbook.livecheck.report import CheckFailed, Reporter

__all__ = [
    "CostMeter",
    "CpuChoice",
    "SpendRun",
    "cpu_candidates",
    "interrupts_deferred",
    "sweep",
]

_AVAILABILITY_ORDER = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}
_MOST_CANDIDATES = 3
_CLEANUP_SECONDS = 120.0
_TERMINATE_ATTEMPTS = 3
_MOST_LOG_LINES = 200
_KEEP_ALIVE_ARGS = "sleep infinity"


@dataclass(frozen=True)
class CpuChoice:
    """A CPU pod shape to try: flavor, vCPU count, USD per hour, and a data center."""

    flavor: str
    vcpus: int
    price: float
    data_center: str | None = None

    def describe(self) -> str:
        """E.g. ``cpu3c, 2 vCPU at $0.060/h in US-TX-3``."""
        where = f" in {self.data_center}" if self.data_center else ""
        return f"{self.flavor}, {self.vcpus} vCPU at ${self.price:.3f}/h{where}"


def _smallest_vcpus(low: int, high: int) -> int | None:
    """The smallest power of two ≥ max(2, low) within ``high`` (the create rule), or None."""
    count = 2
    while count < low:
        count *= 2
    return count if count <= high else None


def cpu_candidates(cpus: list[Any], max_price: float) -> list[CpuChoice]:
    """Available CPU pod shapes at most ``max_price`` per hour, cheapest first."""
    found = []
    for cpu in cpus:
        if cpu.availability in (None, "NONE"):
            continue
        vcpus = _smallest_vcpus(cpu.vcpu.min, cpu.vcpu.max)
        if vcpus is None:
            continue
        places = sorted(
            (_AVAILABILITY_ORDER[dc.availability], dc.id)
            for dc in cpu.data_centers or []
            if dc.availability in _AVAILABILITY_ORDER
        )
        price = round(cpu.price.secure_per_vcpu * vcpus, 6)
        if price <= max_price:
            found.append(CpuChoice(cpu.id, vcpus, price, places[0][1] if places else None))
    return sorted(found, key=lambda choice: (choice.price, choice.flavor))


class CostMeter:
    """Money spent by a pod: its ``cost`` (USD per hour) integrated over the time between
    reads (each rate holds until the next read shows another)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._since: float | None = None
        self._rate = 0.0
        self._first: float | None = None
        self._last: float | None = None
        self.usd = 0.0

    def observe(self, rate_per_hour: float) -> None:
        """A read of the pod: it costs ``rate_per_hour`` from now on."""
        now = self._clock()
        self._advance(now)
        if self._first is None:
            self._first = now
        self._since, self._rate = now, float(rate_per_hour)

    def stop(self) -> None:
        """The pod is gone: no more cost from now on."""
        self._advance(self._clock())
        self._since = None

    @property
    def seconds(self) -> float:
        """Seconds from the first read to the last (or to the stop)."""
        if self._first is None or self._last is None:
            return 0.0
        return self._last - self._first

    def _advance(self, now: float) -> None:
        if self._since is not None:
            self.usd += self._rate * (now - self._since) / 3600.0
            self._last = now


@contextmanager
def interrupts_deferred(reporter: Reporter) -> Iterator[None]:
    """Hold back Ctrl-C and SIGTERM while inside (the cleanup); raise KeyboardInterrupt after
    it when one came. Only the main thread can handle signals; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        caught.append(signum)
        reporter.progress("cleaning up first: the pod is being terminated (one moment)")

    previous = {sig: signal.signal(sig, hold) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if caught:
        raise KeyboardInterrupt


def sweep(client: Any) -> tuple[str, list[str]]:
    """Terminate every pod named ``podbook-live-*``; returns (summary, names terminated)."""
    leftovers = [
        pod
        for pod in client.pods.list()
        if pod.name.startswith(NAME_PREFIX) and pod.status != "TERMINATED"
    ]
    for pod in leftovers:
        with suppress(NotFound):
            client.pods.terminate(pod.id)
    names = [f"{pod.name} ({pod.id})" for pod in leftovers]
    if not names:
        return f"no pod named {NAME_PREFIX}* is left", names
    plural = "s" if len(names) > 1 else ""
    return f"terminated {len(names)} leftover pod{plural}: {', '.join(names)}", names


@dataclass(eq=False, repr=False)
class SpendRun:
    """One create → RUNNING → SSH → logs → stop → start → terminate cycle, with its cleanup.

    ``run()`` reports each step as a check and stops at the first failure; its ``finally``
    always runs :meth:`cleanup`. Afterwards ``meter`` holds the money the pod cost.
    """

    client: Any
    reporter: Reporter
    options: LiveOptions
    _: KW_ONLY
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    name: str = field(init=False, default_factory=lambda: NAME_PREFIX + secrets.token_hex(4))
    meter: CostMeter = field(init=False)
    candidates: list[CpuChoice] = field(init=False, default_factory=list)
    choice: CpuChoice | None = field(init=False, default=None)
    pod_id: str | None = field(init=False, default=None)
    gone: bool = field(init=False, default=False)
    deadline: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self.meter = CostMeter(self.clock)

    # -- the run --------------------------------------------------------------------------------

    def run(self) -> None:
        """Every step, then the cleanup (always)."""
        steps: list[tuple[str, Callable[[], tuple[str, Any]]]] = [
            ("cheapest CPU pod", self.choose),
            ("create pod", self.create),
            ("wait RUNNING", lambda: self.wait_for("RUNNING", self.deadline)),
            ("ssh", self.ssh),
            ("logs", self.logs),
            ("stop", self.stop),
            ("start", self.start),
            ("terminate", self.terminate),
        ]
        try:
            for name, step in steps:
                if not self.reporter.check(name, step).ok:
                    break
        finally:
            with interrupts_deferred(self.reporter):
                self.cleanup()

    def choose(self) -> tuple[str, Any]:
        """The cheapest available CPU pod shapes within the price limit."""
        self.candidates = cpu_candidates(
            self.client.catalog.cpus(availability=True), self.options.max_price
        )
        if not self.candidates:
            raise CheckFailed(
                f"no available CPU pod at ${self.options.max_price:.2f}/h or less; "
                "raise PODBOOK_LIVE_MAX_PRICE or try later"
            )
        return self.candidates[0].describe(), None

    def create(self) -> tuple[str, Any]:
        """Create the pod, trying the next cheapest shape when the service refuses one."""
        refused: list[str] = []
        for choice in self.candidates[:_MOST_CANDIDATES]:
            body: dict[str, Any] = {
                "name": self.name,
                "image": self.options.image,
                "args": _KEEP_ALIVE_ARGS,
                "cpu": {"id": choice.flavor, "vcpuCount": choice.vcpus},
                "ports": ["22/tcp"],
            }
            if choice.data_center:
                body["dataCenterIds"] = [choice.data_center]
            self.deadline = self.clock() + self.options.timeout
            try:
                pod = self.client.pods.create(body)
            except APIError as exc:
                if exc.status in (401, 403, 422):
                    raise
                refused.append(f"{choice.flavor}: {exc}")
                continue
            self.pod_id, self.choice = pod.id, choice
            self.meter.observe(pod.cost)
            note = f" (after {len(refused)} refused)" if refused else ""
            return (
                f"{self.name} ({pod.id}): {choice.flavor}, {choice.vcpus} vCPU, "
                f"${pod.cost:.3f}/h, {pod.status}{note}",
                pod,
            )
        raise CheckFailed("no CPU pod could be created: " + "; ".join(refused))

    def wait_for(self, wanted: str, deadline: float) -> tuple[str, Any]:
        """Read the pod every ``poll`` seconds until it is ``wanted`` (``TERMINATED`` also
        when it is gone), with a progress line on each change and every ``progress_every``."""
        start = last_line = self.clock()
        last_status = ""
        while True:
            try:
                pod = self.client.pods.get(self.pod_id)
            except NotFound:
                if wanted != "TERMINATED":
                    raise CheckFailed(
                        f"pod {self.pod_id} is gone; it will not be {wanted}"
                    ) from None
                return f"gone after {self.clock() - start:.1f} s", None
            now = self.clock()
            self.meter.observe(pod.cost)
            if pod.status == wanted:
                return f"{wanted} after {now - start:.1f} s", pod
            if pod.status != last_status or now - last_line >= self.options.progress_every:
                still = "still " if pod.status == last_status else ""
                self.reporter.progress(
                    f"waiting for {wanted}: {still}{pod.status} after {now - start:.0f} s"
                )
                last_status, last_line = pod.status, now
            if wanted != "TERMINATED" and pod.status in ("ERROR", "TERMINATED"):
                raise CheckFailed(f"pod {self.pod_id} is {pod.status} and will not be {wanted}")
            if now >= deadline:
                raise CheckFailed(
                    f"pod {self.pod_id} is not {wanted} within its {self.options.timeout:g} s "
                    f"(last status {pod.status}); raise PODBOOK_LIVE_TIMEOUT to wait longer"
                )
            self.sleep(max(0.0, min(self.options.poll, deadline - now)))

    def ssh(self) -> tuple[str, Any]:
        """The SSH endpoints of the RUNNING pod."""
        pod = self.client.pods.get(self.pod_id)
        self.meter.observe(pod.cost)
        ways = [
            f"{kind}: {endpoint.command}"
            for kind, endpoint in (("proxy", pod.ssh.proxy), ("direct", pod.ssh.direct))
            if endpoint is not None
        ]
        if not ways:
            raise CheckFailed("the RUNNING pod has no SSH endpoint (ssh.proxy and ssh.direct)")
        return "; ".join(ways), pod

    def logs(self) -> tuple[str, Any]:
        """The pod's last log lines (a stream that ends after the backlog)."""
        with self.client.pods.logs(self.pod_id, tail=20) as stream:
            lines = list(islice(stream, _MOST_LOG_LINES))
        if not lines:
            return "0 lines (the pod has written none yet)", lines
        last = lines[-1].line.strip()
        last = last if len(last) <= 60 else last[:57] + "..."
        return f"{len(lines)} lines, the last: {last!r}", lines

    def stop(self) -> tuple[str, Any]:
        """Stop the pod and wait until it is EXITED."""
        self.meter.observe(self.client.pods.stop(self.pod_id).cost)
        return self.wait_for("EXITED", self.deadline)

    def start(self) -> tuple[str, Any]:
        """Start the stopped pod and wait until it is RUNNING again."""
        self.meter.observe(self.client.pods.start(self.pod_id).cost)
        return self.wait_for("RUNNING", self.deadline)

    def terminate(self) -> tuple[str, Any]:
        """Terminate the pod and wait until it is gone."""
        self.client.pods.terminate(self.pod_id)
        summary, pod = self.wait_for("TERMINATED", self.clock() + _CLEANUP_SECONDS)
        self.gone = True
        self.meter.stop()
        return summary, pod

    # -- cleanup --------------------------------------------------------------------------------

    def cleanup(self) -> None:
        """Terminate the pod if it is not gone yet, sweep leftovers, report the money."""
        if self.pod_id is not None and not self.gone:
            outcome = self.reporter.check("cleanup", self._terminate_for_sure)
            if not outcome.ok:
                self.reporter.line(
                    f"    !! pod {self.pod_id} ({self.name}) may still be running and costing "
                    "money: terminate it in the console, or `%pod terminate "
                    f"{self.pod_id}`"
                )
        self.reporter.check("sweep", lambda: sweep(self.client))
        self.meter.stop()
        if self.pod_id is not None:
            self.reporter.check("pod billing", self._billing)

    def _terminate_for_sure(self) -> tuple[str, Any]:
        last: Exception | None = None
        for attempt in range(1, _TERMINATE_ATTEMPTS + 1):
            try:
                with suppress(NotFound):
                    self.client.pods.terminate(self.pod_id)
                summary, _ = self.wait_for("TERMINATED", self.clock() + _CLEANUP_SECONDS)
            except Exception as exc:  # retried; the last one is reported
                last = exc
                self.sleep(min(self.options.poll, 2.0) * attempt)
                continue
            self.gone = True
            self.meter.stop()
            return f"terminated {self.pod_id} ({self.name}): {summary}", None
        raise CheckFailed(f"pod {self.pod_id} not terminated after {attempt} tries: {last}")

    def _billing(self) -> tuple[str, Any]:
        """The money spent: estimated from the pod's rate, and what billing says so far."""
        usd = self.meter.usd
        estimate = f"≈ ${usd:.4f}" if usd >= 0.0001 else "< $0.0001"
        found = self.client.billing.pods(pod_id=self.pod_id, last_n=2, bucket_size="hour")
        billed = sum(record.total_amount for record in found.records)
        return (
            f"{estimate} from the pod's rate over {self.meter.seconds:.0f} s; "
            f"billing shows ${billed:.4f} for it so far (it may lag)",
            found,
        )
