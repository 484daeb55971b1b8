"""Every operation of the reference document has a client method, and that method works
against the emulator.

``STEPS`` (``tests/reference_steps.py``, shared with the contract tests in ``tests/contract``)
maps each ``operationId`` of ``reference/runpod-rest-v2.openapi.json`` to the client call
that performs it. The test runs every step through a ``Client`` whose transport
records each (method, path, status) it really sent over HTTP, then checks that every
reference operation was reached with a 2xx answer. A reference operation without a step, or a
step that never reached its route, fails the test by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from reference_steps import STEPS, reference_operations, route_of

from podbook import Client
from podbook.client._operations import ALSO_SENT_BY, CLIENT_METHODS, resolve_method


class RecordingTransport(httpx.HTTPTransport):
    """A real HTTP transport that notes what it sent, what came back, and from which of the
    traced client methods (see :func:`traced_methods`) it was sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[str, str, int]] = []
        self.active: list[str] = []
        self.senders: dict[tuple[str, str], set[str]] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send as usual; remember (method, path, status) and the active client methods."""
        response = super().handle_request(request)
        self.sent.append((request.method, request.url.path, response.status_code))
        key = (request.method, request.url.path)
        self.senders.setdefault(key, set()).update(self.active)
        return response


@contextmanager
def traced_methods(client: Client, transport: RecordingTransport) -> Iterator[None]:
    """While inside, each client method named in ``CLIENT_METHODS`` notes itself as active
    in ``transport`` (lazy log streams count from their creation to their last line)."""
    paths = sorted({*CLIENT_METHODS.values(), *(p for ps in ALSO_SENT_BY.values() for p in ps)})
    patched: list[tuple[Any, str]] = []

    def tracer(path: str, method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            transport.active.append(path)
            result = method(*args, **kwargs)
            if hasattr(result, "__iter__") and hasattr(result, "close"):
                return _ActiveStream(result, transport, path)  # a lazy stream: active until read
            transport.active.remove(path)
            return result

        return call

    for path in paths:
        owner_path, _, name = path.rpartition(".")
        owner = resolve_method(client, owner_path)
        setattr(owner, name, tracer(path, getattr(owner, name)))
        patched.append((owner, name))
    try:
        yield
    finally:
        for owner, name in patched:
            delattr(owner, name)


class _ActiveStream:
    """A log stream whose client method stays active until the stream is closed."""

    def __init__(self, stream: Any, transport: RecordingTransport, path: str) -> None:
        self._stream, self._transport, self._path = stream, transport, path

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stream.close()
        if self._path in self._transport.active:
            self._transport.active.remove(self._path)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._stream)


def _take_a_job(emulator: Any, endpoint_id: str, worker_id: str) -> None:
    """A bare worker (the worker protocol, not the client) takes one job, so it is listed."""
    with emulator.http() as http:
        key = http.post(f"/v2/serverless/{endpoint_id}/worker-keys").json()["workerKey"]
    with httpx.Client(base_url=emulator.url, headers={"Authorization": key}, timeout=30) as w:
        taken = w.get(f"/v2/{endpoint_id}/job-take/{worker_id}?job_in_progress=0")
        assert taken.status_code == 200, taken.text


def test_every_reference_operation_has_a_client_step() -> None:
    operations = reference_operations()
    missing = sorted(f"{op} ({' '.join(operations[op])})" for op in set(operations) - set(STEPS))
    unknown = sorted(set(STEPS) - set(operations))
    assert not missing, "reference operations without a client call: " + ", ".join(missing)
    assert not unknown, "steps naming no reference operation: " + ", ".join(unknown)


def test_every_reference_operation_has_a_named_client_method() -> None:
    operations = reference_operations()
    missing = sorted(
        f"{op} ({' '.join(operations[op])})" for op in set(operations) - set(CLIENT_METHODS)
    )
    unknown = sorted(set(CLIENT_METHODS) - set(operations))
    assert not missing, (
        "reference operations without a client method in "
        "podbook.client._operations.CLIENT_METHODS: " + ", ".join(missing)
    )
    assert not unknown, "CLIENT_METHODS names no reference operation: " + ", ".join(unknown)
    with Client(api_key="unused", url="http://127.0.0.1:9") as client:
        not_callable = sorted(
            path for path in CLIENT_METHODS.values() if not callable(resolve_method(client, path))
        )
    assert not not_callable, "CLIENT_METHODS names no client method: " + ", ".join(not_callable)


@pytest.fixture
def recording_client(emulator: Any) -> Any:
    """A client of the session emulator whose transport records every request it sent."""
    transport = RecordingTransport()
    client = Client(
        api_key=emulator.api_key,
        rest_url=emulator.url,
        queue_url=emulator.url,
        v1_url=emulator.url,
        transport=transport,
    )
    with client:
        yield client, transport


def test_every_reference_operation_works_through_the_client(
    recording_client: Any, emulator: Any
) -> None:
    client, transport = recording_client
    operations = reference_operations()
    ctx: dict[str, Any] = {}
    with traced_methods(client, transport):
        for operation_id, step in STEPS.items():
            if operation_id == "getWorkerLogs":
                client.endpoint(ctx["endpoint"].id).run({"n": 1})
                _take_a_job(emulator, ctx["endpoint"].id, "w-cov")
            step(client, ctx)

    reached: dict[str, set[int]] = {}
    for method, path, status in transport.sent:
        operation_id = route_of(method, path, operations)
        if operation_id is not None:
            reached.setdefault(operation_id, set()).add(status)
    not_reached = sorted(op for op in operations if op not in reached)
    assert not not_reached, "reference operations never sent by the client: " + ", ".join(
        not_reached
    )
    failed = sorted(
        f"{op} {sorted(statuses)}"
        for op, statuses in reached.items()
        if not any(200 <= s < 300 for s in statuses)
    )
    assert not failed, "reference operations that never answered 2xx: " + ", ".join(failed)

    senders: dict[str, set[str]] = {}
    for (method, path), active in transport.senders.items():
        operation_id = route_of(method, path, operations)
        if operation_id is not None:
            senders.setdefault(operation_id, set()).update(active)
    wrong = sorted(
        f"{op}: CLIENT_METHODS says {CLIENT_METHODS[op]}, sent from {sorted(who) or 'elsewhere'}"
        for op, who in senders.items()
        if CLIENT_METHODS[op] not in who
    )
    assert not wrong, "client methods named wrongly in CLIENT_METHODS: " + "; ".join(wrong)
