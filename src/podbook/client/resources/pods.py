"""Pods: create, list, read, update (merge patch), actions, terminate, and waiting for a status."""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from podbook.client._core import Call
from podbook.client._created import announce
from podbook.client.resources.base import (
    AsyncResource,
    SyncResource,
    list_parser,
    model_parser,
    path_id,
    prepare_body,
)
from podbook.errors import GuardWarning, InvalidRequest, NotFound, WaitFailed, WaitTimeout

if TYPE_CHECKING:
    from podbook.api.pods import CreatePodRequest, Pod, UpdatePodRequest
    from podbook.client.resources.podlogs import AsyncLogStream, LogStream
    from podbook.guard.settings import GuardSettings
    from podbook.guard.state import GuardStatus

__all__ = ["AsyncPods", "PodWatch", "Pods", "pod_calls"]

FINAL_STATUSES = frozenset({"ERROR", "TERMINATED"})
DEFAULT_WAIT_TIMEOUT = 600.0
DEFAULT_POLL_INTERVAL = 1.0


def _pod_model() -> type[Pod]:
    from podbook.api.pods import Pod

    return Pod


_GUARD_OPTIONS = ("idle_stop", "max_runtime", "idle_action")


def take_guard(
    request: Any, fields: Mapping[str, Any]
) -> tuple[Any, dict[str, Any], GuardSettings | None]:
    """Split the guard options (``idle_stop``, ``max_runtime``, ``idle_action``) off a create
    request and its keyword fields; :class:`InvalidRequest` for a bad value."""
    from podbook.guard.settings import GuardSettings

    fields = dict(fields)
    options = {name: fields.pop(name) for name in _GUARD_OPTIONS if name in fields}
    if isinstance(request, Mapping):
        request = dict(request)
        options.update({n: request.pop(n) for n in _GUARD_OPTIONS if n in request})
    options = {name: value for name, value in options.items() if value is not None}
    try:
        return request, fields, GuardSettings.build(**options)
    except ValueError as exc:
        raise InvalidRequest(str(exc), status=400) from None


def _created(pod: Pod, call: Call[Pod], settings: Any) -> Pod:
    """``pod``, just created by ``call``: the pod-created hooks told, and a
    :class:`~podbook.errors.GuardWarning` (pointing at the caller of ``create``) for each
    reason its guard may not work as asked."""
    from podbook.guard.settings import arm_notes

    announce(pod, settings)
    for note in arm_notes(call.json or {}):
        warnings.warn(note, GuardWarning, stacklevel=3)
    return pod


def template_args(body_source: Any, fields: Mapping[str, Any]) -> str | None:
    """The template id whose start command a guarded create must wrap: set when the request
    names a template and gives no ``args`` of its own."""

    def pick(name: str) -> Any:
        if name in fields:
            return fields[name]
        if isinstance(body_source, Mapping):
            return body_source.get(name)
        return getattr(body_source, name.replace("templateId", "template_id"), None)

    if pick("args") is not None:
        return None
    template = pick("templateId") or pick("template_id")
    return str(template) if template else None


def _gpu_shorthand(fields: dict[str, Any]) -> dict[str, Any]:
    """``gpu="NVIDIA GeForce RTX 4090"`` means ``gpu={"id": "NVIDIA GeForce RTX 4090"}``."""
    if isinstance(fields.get("gpu"), str):
        fields = {**fields, "gpu": {"id": fields["gpu"]}}
    return fields


class pod_calls:  # noqa: N801 - a namespace of call builders, used like a module
    """Pure builders of the pod calls (no I/O)."""

    @staticmethod
    def create(
        request: CreatePodRequest | Mapping[str, Any] | None,
        fields: Mapping[str, Any],
        *,
        guard: GuardSettings | None = None,
        base_args: str | None = None,
    ) -> Call[Pod]:
        """``POST /v2/pods`` with a locally validated body; with ``guard``, armed with the pod
        guard (``base_args``: the template's start command the guard must run)."""
        from podbook.api.pods import CreatePodRequest

        if isinstance(request, Mapping):
            request = _gpu_shorthand(dict(request))
        body = prepare_body(CreatePodRequest, request, _gpu_shorthand(dict(fields)))
        if guard is not None:
            from podbook.guard.settings import arm

            body = arm(body, guard, base_args=base_args)
        return Call("POST", "/v2/pods", json=body, parse=model_parser(_pod_model()))

    @staticmethod
    def list(include_cluster_pods: bool = False) -> Call[list[Pod]]:
        """``GET /v2/pods`` (cluster members only with ``include_cluster_pods``)."""
        params = {"includeClusterPods": "true"} if include_cluster_pods else None
        return Call("GET", "/v2/pods", params=params, parse=list_parser(_pod_model(), "pods"))

    @staticmethod
    def get(pod: Any) -> Call[Pod]:
        """``GET /v2/pods/{id}``."""
        return Call("GET", f"/v2/pods/{path_id(pod, 'pod id')}", parse=model_parser(_pod_model()))

    @staticmethod
    def update(
        pod: Any,
        request: UpdatePodRequest | Mapping[str, Any] | None,
        fields: Mapping[str, Any],
    ) -> Call[Pod]:
        """``PATCH /v2/pods/{id}``: a merge patch; only the fields given change.

        When ``pod`` is a :class:`Pod` (not just an id), the seed's mount rules that
        depend on the pod (mount kind fixed at creation, immutable ``volumeId``) are checked
        locally too.
        """
        from podbook.api.pods import UpdatePodRequest

        pod_id = path_id(pod, "pod id")
        body = prepare_body(UpdatePodRequest, request, fields)
        if not body:
            raise InvalidRequest("nothing to update; pass at least one field", status=400)
        if not isinstance(pod, str):
            _check_mount_patch(pod, body)
        return Call("PATCH", f"/v2/pods/{pod_id}", json=body, parse=model_parser(_pod_model()))

    @staticmethod
    def action(pod: Any, action: str) -> Call[Pod]:
        """``POST /v2/pods/{id}/action`` with ``{"action": ...}`` (start, stop, restart)."""
        return Call(
            "POST",
            f"/v2/pods/{path_id(pod, 'pod id')}/action",
            json={"action": action},
            parse=model_parser(_pod_model()),
        )

    @staticmethod
    def terminate(pod: Any) -> Call[None]:
        """``DELETE /v2/pods/{id}`` (204; idempotent, so safe to retry)."""
        return Call("DELETE", f"/v2/pods/{path_id(pod, 'pod id')}")


def _check_mount_patch(pod: Any, body: Mapping[str, Any]) -> None:
    """Apply the seed's PATCH mount rules that need the pod's current mounts (400)."""
    if not body.get("mounts"):
        return
    from podbook.api.validation import check_patch_mounts

    errors = check_patch_mounts(getattr(pod, "mounts", None), body["mounts"])
    if errors:
        detail = errors[0] if len(errors) == 1 else f"{errors[0]} (and {len(errors) - 1} more)"
        raise InvalidRequest(detail, errors, status=400, title="Bad Request")


def _status(pod: Any) -> str:
    status = getattr(pod, "status", "")
    return str(getattr(status, "value", status))


class PodWatch:
    """The I/O-free logic of ``wait_for``: track status changes, decide when to stop.

    ``observe`` returns True once the wanted status is reached, raises
    :class:`WaitFailed` when the pod lands in a final status instead; ``next_sleep``
    raises :class:`WaitTimeout` (naming the last status) once time is up.
    """

    def __init__(
        self,
        wanted: str,
        timeout: float,
        poll_interval: float,
        on_change: Callable[[Any], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        ready: Any = None,
    ) -> None:
        from podbook.client.readiness import parse_ready

        wanted = wanted.upper()
        self.ready = parse_ready(ready)
        if self.ready and wanted != "RUNNING":
            raise InvalidRequest("ready=... needs status RUNNING", status=400)
        self.pending: list[str] = []
        if wanted not in {"PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR", "TERMINATED"}:
            raise InvalidRequest(
                f"status {wanted!r} is not a pod status; use RUNNING, EXITED, TERMINATED, ...",
                status=400,
            )
        if timeout <= 0 or poll_interval <= 0:
            raise InvalidRequest("timeout and poll_interval must be positive", status=400)
        self.wanted = wanted
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.on_change = on_change
        self._clock = clock
        self._deadline = clock() + timeout
        self.last: Any = None
        self.last_status = "unknown"

    @property
    def label(self) -> str:
        """How the pod is named in errors."""
        pod_id = getattr(self.last, "id", None)
        return f"pod {pod_id}" if pod_id else "the pod"

    def seed(self, pod: Any) -> None:
        """Start from a pod object the caller already has (reported, but not judged)."""
        self.last = pod
        self.last_status = _status(pod)
        if self.on_change is not None:
            self.on_change(pod)

    def observe(self, pod: Any) -> bool:
        """Record one read of the pod; True when it has the wanted status."""
        status = _status(pod)
        self.last = pod
        if status != self.last_status:
            self.last_status = status
            if self.on_change is not None:
                self.on_change(pod)
        if status == self.wanted:
            return True
        if status in FINAL_STATUSES:
            raise WaitFailed(self.label, self.wanted, status, pod)
        return False

    def gone(self, error: NotFound) -> Any:
        """The pod answered 404: terminated. Returns it when TERMINATED was wanted."""
        if self.last is None:
            raise error
        terminated = self.last
        copy = getattr(terminated, "model_copy", None)
        if copy is not None:
            terminated = copy(update={"status": "TERMINATED"})
        if self.observe(terminated):
            return terminated
        raise WaitFailed(self.label, self.wanted, "TERMINATED", terminated)  # pragma: no cover

    def is_ready(self, pod: Any) -> bool:
        """Whether every service of ``ready`` answers on ``pod`` (probes: blocking)."""
        from podbook.client.readiness import not_ready

        self.pending = not_ready(pod, self.ready) if self.ready else []
        return not self.pending

    def next_sleep(self) -> float:
        """Seconds to sleep before the next read; raises WaitTimeout when time is up."""
        remaining = self._deadline - self._clock()
        if remaining <= 0:
            raise WaitTimeout(self.label, self.wanted, self.last_status, self.timeout, self.pending)
        return min(self.poll_interval, remaining)


S = TypeVar("S", "LogStream", "AsyncLogStream")


class _PodLogs(Generic[S]):
    """``logs()`` of both faces: a :class:`LogStream` on the sync client, an
    :class:`AsyncLogStream` (``async for``) on the async one."""

    def logs(
        self,
        pod: Pod | str,
        *,
        source: str | None = None,
        tail: int | None = None,
        since: Any = None,
        follow: bool = False,
        idle: float = 1.0,
    ) -> S:
        """A pod's log lines (:class:`~podbook.api.logs.LogLine`), oldest first.

        ``source`` ``"container"`` or ``"system"`` (both by default); ``tail`` lines of
        backfill (service default 100, at most 5000); ``since`` an RFC 3339 time (or a
        ``datetime``) to start from instead. ``follow=True`` keeps yielding new lines until the
        pod is terminated or the stream is closed; a dropped connection is resumed without
        losing or repeating a line. Use it as a context manager or call ``close()``
        (``async for`` and ``aclose()`` on the async client).
        """
        from podbook.client.resources.podlogs import log_stream, open_logs

        follower = open_logs(pod, source=source, tail=tail, since=since, follow=follow, idle=idle)
        return log_stream(self, follower)


class Pods(_PodLogs["LogStream"], SyncResource):
    """``client.pods``: the pod area of the REST interface."""

    def create(
        self, request: CreatePodRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> Pod:
        """Create a pod from a ``CreatePodRequest``, a mapping, or keyword fields.

        The request is validated locally first: a request the service would refuse raises
        :class:`~podbook.errors.InvalidRequest` and nothing is sent.

        ``idle_stop`` / ``max_runtime`` (``"30m"``, ``"4h"`` or seconds) and ``idle_action``
        (``"stop"`` or ``"terminate"``) arm the pod guard, which runs inside the pod and
        stops it when idle or past its time limit (``docs/cost-control.md``).
        """
        request, fields, guard = take_guard(request, fields)
        base_args = None
        template_id = template_args(request, fields) if guard else None
        if template_id:
            base_args = self._client.templates.get(template_id).args
        call = pod_calls.create(request, fields, guard=guard, base_args=base_args)
        return _created(self._request(call), call, self._client.settings)

    def list(self, include_cluster_pods: bool = False) -> list[Pod]:
        """The account's pods (cluster members only with ``include_cluster_pods=True``)."""
        return self._request(pod_calls.list(include_cluster_pods))

    def get(self, pod: Pod | str) -> Pod:
        """Read one pod by id (or refresh a :class:`Pod`)."""
        return self._request(pod_calls.get(pod))

    def update(
        self,
        pod: Pod | str,
        request: UpdatePodRequest | Mapping[str, Any] | None = None,
        /,
        **fields: Any,
    ) -> Pod:
        """Change a pod with a merge patch: only the fields given change."""
        return self._request(pod_calls.update(pod, request, fields))

    def start(self, pod: Pod | str) -> Pod:
        """Start a stopped pod (EXITED or ERROR)."""
        return self._request(pod_calls.action(pod, "start"))

    def stop(self, pod: Pod | str) -> Pod:
        """Stop a pod; it keeps its machine and answers EXITED."""
        return self._request(pod_calls.action(pod, "stop"))

    def restart(self, pod: Pod | str) -> Pod:
        """Restart a running pod."""
        return self._request(pod_calls.action(pod, "restart"))

    def terminate(self, pod: Pod | str) -> None:
        """Delete a pod for good."""
        self._request(pod_calls.terminate(pod))

    def guard(self, pod: Pod | str) -> GuardStatus | None:
        """The pod guard's last report (``state``, ``deadline``, ``busy``, ``describe()``: "idle
        stop in 12 min"), read from the pod's log; None for a pod without a guard. Extend it
        with :func:`podbook.guard.extend` (over SSH)."""
        from podbook.guard.state import read_status

        return read_status(self._client, pod)

    def wait_for(
        self,
        pod: Pod | str,
        status: str = "RUNNING",
        *,
        timeout: float = DEFAULT_WAIT_TIMEOUT,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        on_change: Callable[[Pod], Any] | None = None,
        ready: str | Iterable[str] | None = None,
    ) -> Pod:
        """Poll the pod until it has ``status``; ``on_change(pod)`` sees every new status.

        ``ready`` (with ``RUNNING``): also wait until these services answer at the addresses
        of the pod's record: ``"ssh"`` (its SSH server's banner), ``"jupyter"`` (its login
        page), a port such as ``"8000/http"`` or ``"5432/tcp"`` (``podbook.client.readiness``).

        Raises :class:`~podbook.errors.WaitTimeout` after ``timeout`` seconds (naming the
        last status, or what was not ready) and :class:`~podbook.errors.WaitFailed` as soon
        as the pod lands in ERROR or TERMINATED while waiting for another status.
        """
        watch = PodWatch(status, timeout, poll_interval, on_change, ready=ready)
        if not isinstance(pod, str):
            watch.seed(pod)
        while True:
            try:
                current = self.get(pod)
            except NotFound as exc:
                return watch.gone(exc)
            if watch.observe(current) and watch.is_ready(current):
                return current
            time.sleep(watch.next_sleep())


class AsyncPods(_PodLogs["AsyncLogStream"], AsyncResource):
    """``client.pods`` of the :class:`AsyncClient`: the same methods, awaitable."""

    async def create(
        self, request: CreatePodRequest | Mapping[str, Any] | None = None, /, **fields: Any
    ) -> Pod:
        """Create a pod (validated locally first, guard options too); see :meth:`Pods.create`."""
        request, fields, guard = take_guard(request, fields)
        base_args = None
        template_id = template_args(request, fields) if guard else None
        if template_id:
            base_args = (await self._client.templates.get(template_id)).args
        call = pod_calls.create(request, fields, guard=guard, base_args=base_args)
        return _created(await self._request(call), call, self._client.settings)

    async def list(self, include_cluster_pods: bool = False) -> list[Pod]:
        """The account's pods; see :meth:`Pods.list`."""
        return await self._request(pod_calls.list(include_cluster_pods))

    async def get(self, pod: Pod | str) -> Pod:
        """Read one pod."""
        return await self._request(pod_calls.get(pod))

    async def update(
        self,
        pod: Pod | str,
        request: UpdatePodRequest | Mapping[str, Any] | None = None,
        /,
        **fields: Any,
    ) -> Pod:
        """Change a pod with a merge patch."""
        return await self._request(pod_calls.update(pod, request, fields))

    async def start(self, pod: Pod | str) -> Pod:
        """Start a stopped pod."""
        return await self._request(pod_calls.action(pod, "start"))

    async def stop(self, pod: Pod | str) -> Pod:
        """Stop a pod."""
        return await self._request(pod_calls.action(pod, "stop"))

    async def restart(self, pod: Pod | str) -> Pod:
        """Restart a running pod."""
        return await self._request(pod_calls.action(pod, "restart"))

    async def terminate(self, pod: Pod | str) -> None:
        """Delete a pod for good."""
        return await self._request(pod_calls.terminate(pod))

    async def guard(self, pod: Pod | str) -> GuardStatus | None:
        """The pod guard's last report, or None without a guard; see :meth:`Pods.guard`."""
        from podbook.guard.state import READ_TAIL, status_from

        record = await self.get(pod) if isinstance(pod, str) else pod
        lines = []
        if record.env and "PODBOOK_GUARD" in record.env:
            stream = self.logs(record.id, source="container", tail=READ_TAIL, idle=0.5)
            lines = [line async for line in stream]
        return status_from(record, lines)

    async def wait_for(
        self,
        pod: Pod | str,
        status: str = "RUNNING",
        *,
        timeout: float = DEFAULT_WAIT_TIMEOUT,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        on_change: Callable[[Pod], Any] | None = None,
        ready: str | Iterable[str] | None = None,
    ) -> Pod:
        """Poll until the pod has ``status`` (and ``ready`` answers); see :meth:`Pods.wait_for`."""
        watch = PodWatch(status, timeout, poll_interval, on_change, ready=ready)
        if not isinstance(pod, str):
            watch.seed(pod)
        while True:
            try:
                current = await self.get(pod)
            except NotFound as exc:
                return watch.gone(exc)
            if watch.observe(current) and await asyncio.to_thread(watch.is_ready, current):
                return current
            await asyncio.sleep(watch.next_sleep())
