"""The client against an independent mock of the REST reference document (Stoplight Prism).

Every operation's client call (``STEPS``, one table shared with the emulator coverage test)
runs against Prism, which validates each request against the document. For every operation:

- the mock accepts what podbook sends: no ``sl-violations`` about the request, no 4xx;
- the client reads what the mock answers: the document's examples (every named example of a
  2xx answer, one round per name) and data generated from its schemas (several rounds of a
  seeded generator), each into the typed models;
- every documented error status (``Prefer: code=NNN``) becomes the typed exception of
  ``podbook.errors`` for that status, in one line.

The request examples of the document go through the client's methods too, and every public
method of every resource runs at least once.

Where the document's own example breaks its own schema, Prism answers 500 and names the
violation; that is deviation D1 of ``reference/DEVIATIONS.md`` and is the one fault allowed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from prism import PrismMock
from reference_docs import rest_reference
from reference_examples import resolve, success_example_names
from reference_steps import (
    ARN,
    CPU,
    GPU,
    STEPS,
    Exchange,
    ExchangeRecorder,
    StandInIds,
    reference_operations,
    route_of,
)

from podbook import Client
from podbook.api.ratelimit import RateLimitState
from podbook.errors import RateLimited, ServerError, error_class_for_status

OPERATIONS = reference_operations()
EXAMPLE_NAMES = success_example_names()
STATIC_ROUNDS = max(len(names) for names in EXAMPLE_NAMES.values())
DYNAMIC_ROUNDS = 5
D1_FIELD = "requestUrls"
"""Deviation D1: the document's ``requestUrls`` examples are URI templates, not URIs."""


@dataclass
class Outcome:
    """What one step did: its result or error, and the exchanges it caused."""

    operation: str
    result: Any = None
    error: BaseException | None = None
    exchanges: list[Exchange] = field(default_factory=list)


@dataclass
class Run:
    """One pass of steps against a mock: each outcome, the quota last read, and (when
    traced) the client resource methods that were called."""

    outcomes: dict[str, Outcome]
    rate_limit: RateLimitState | None
    called: set[str] = field(default_factory=set)


def operation_of(request: httpx.Request) -> str | None:
    """The operationId a request is for."""
    return route_of(request.method, request.url.path, OPERATIONS)


def prefer_example(round_index: int) -> Callable[[httpx.Request], dict[str, str] | None]:
    """``Prefer: example=NAME``: the ``round_index``-th 2xx example of the operation (its
    last when it has fewer)."""

    def headers(request: httpx.Request) -> dict[str, str] | None:
        names = EXAMPLE_NAMES.get(operation_of(request) or "")
        return {"Prefer": f"example={names[min(round_index, len(names) - 1)]}"} if names else None

    return headers


def resource_methods(client: Client) -> set[str]:
    """``"pods.create"``-style names of every public method of every resource."""
    names = set()
    pending = [(name, value) for name, value in vars(client).items() if not name.startswith("_")]
    while pending:
        prefix, resource = pending.pop()
        for name, member in inspect.getmembers(resource):
            if name.startswith("_"):
                continue
            if inspect.ismethod(member):
                names.add(f"{prefix}.{name}")
            elif type(member).__module__.startswith("podbook.client.resources"):
                pending.append((f"{prefix}.{name}", member))
    return names


class MethodTrace:
    """Notes which resource methods of a client are called (by wrapping each one)."""

    def __init__(self, client: Client) -> None:
        self.called: set[str] = set()
        for path in resource_methods(client):
            owner: Any = client
            *parents, name = path.split(".")
            for parent in parents:
                owner = getattr(owner, parent)
            setattr(owner, name, self._wrap(path, getattr(owner, name)))

    def _wrap(self, path: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def traced(*args: Any, **kwargs: Any) -> Any:
            self.called.add(path)
            return method(*args, **kwargs)

        return traced


def run_steps(
    mock: PrismMock,
    steps: dict[str, Callable[[Client, dict[str, Any]], Any]],
    headers_for: Callable[[httpx.Request], dict[str, str] | None] | None = None,
    *,
    trace: bool = False,
) -> Run:
    """Every step against ``mock``, each outcome noted (an error does not stop the run);
    ``trace`` notes which client methods the steps called."""
    recorder = ExchangeRecorder(headers_for=headers_for)
    outcomes: dict[str, Outcome] = {}
    with mock.client(recorder) as client:
        tracer = MethodTrace(client) if trace else None
        ctx = StandInIds()
        for name, step in steps.items():
            first = len(recorder.exchanges)
            outcome = outcomes[name] = Outcome(name)
            try:
                outcome.result = step(client, ctx)
            except Exception as exc:  # noqa: BLE001 - reported per operation below
                outcome.error = exc
            outcome.exchanges = recorder.exchanges[first:]
        return Run(outcomes, client.rate_limit, tracer.called if tracer else set())


def request_refusals(exchanges: list[Exchange]) -> list[str]:
    """What the mock refused in the requests: request violations and 4xx answers."""
    problems = []
    for exchange in exchanges:
        for violation in exchange.violations:
            if violation["location"][0] == "request":
                where = ".".join(str(part) for part in violation["location"])
                problems.append(f"{exchange}: {where}: {violation['message']}")
        if 400 <= exchange.status < 500:
            problems.append(f"{exchange}: refused")
    return problems


def answer_faults(exchanges: list[Exchange]) -> list[dict[str, Any]]:
    """Violations the mock found in its own answers."""
    return [v for e in exchanges for v in e.violations if v["location"][0] == "response"]


def is_typed(value: Any) -> bool:
    """Whether a step's result is what the client promises: a model or a list of models, a
    list of log lines (the steps keep their text), or None for a 204."""
    if isinstance(value, list):
        return all(isinstance(item, str) or is_typed(item) for item in value)
    return value is None or hasattr(type(value), "__pydantic_fields__")


def check(outcome: Outcome, *, allow_d1: bool) -> list[str]:
    """Everything wrong with one outcome, as readable lines (empty: all good)."""
    problems = request_refusals(outcome.exchanges)
    faults = answer_faults(outcome.exchanges)
    if faults and allow_d1 and all(D1_FIELD in map(str, v["location"]) for v in faults):
        if not isinstance(outcome.error, ServerError):
            problems.append(f"D1: expected the mock's 500 for its own example: {outcome.error!r}")
        return problems
    problems += [f"the mock's own answer breaks the document: {v['message']}" for v in faults]
    if outcome.error is not None:
        problems.append(f"the client failed: {type(outcome.error).__name__}: {outcome.error}")
    elif not is_typed(outcome.result):
        problems.append(f"untyped result {type(outcome.result).__name__}")
    if not outcome.exchanges:
        problems.append("nothing was sent")
    return problems


def problems_in_rounds(runs: list[Run], operation: str, *, allow_d1: bool) -> list[str]:
    """What went wrong with ``operation`` in any of ``runs``, each line naming its round."""
    return [
        f"round {i}: {line}"
        for i, run in enumerate(runs)
        for line in check(run.outcomes[operation], allow_d1=allow_d1)
    ]


@pytest.fixture(scope="module")
def static_runs(prism_static: PrismMock) -> list[Run]:
    """Every step against the examples, one round per example name."""
    return [run_steps(prism_static, STEPS, prefer_example(i)) for i in range(STATIC_ROUNDS)]


@pytest.fixture(scope="module")
def dynamic_runs(prism_dynamic: PrismMock) -> list[Run]:
    """Every step against generated answers, several rounds."""
    return [run_steps(prism_dynamic, STEPS) for _ in range(DYNAMIC_ROUNDS)]


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_mock_accepts_the_request_and_client_reads_the_examples(
    static_runs: list[Run], operation: str
) -> None:
    problems = problems_in_rounds(static_runs, operation, allow_d1=True)
    sent = {
        route_of(e.method, e.path, OPERATIONS) for e in static_runs[0].outcomes[operation].exchanges
    }
    assert operation in sent, f"the step of {operation} sent {sent}"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_mock_accepts_the_request_and_client_reads_generated_answers(
    dynamic_runs: list[Run], operation: str
) -> None:
    problems = problems_in_rounds(dynamic_runs, operation, allow_d1=False)
    assert not problems, "\n".join(problems)


def test_client_reads_the_rate_limit_headers_of_the_examples(static_runs: list[Run]) -> None:
    document = rest_reference()
    example = resolve(document, document["components"]["headers"]["RateLimit"]["schema"])
    state = static_runs[0].rate_limit
    assert state is not None, "no RateLimit read from the mock's answers"
    minute = state.get("minute")
    assert (
        minute is not None
        and f'"minute";r={minute.remaining};t={minute.reset}' in (example["examples"][0])
    )
    assert minute.quota is not None


# ------------------------------------------------------------------ documented errors


def error_cases() -> list[tuple[str, int]]:
    """(operationId, status) for every documented 4xx/5xx status of every operation."""
    document = rest_reference()
    cases = []
    for operation, (method, path) in OPERATIONS.items():
        responses = document["paths"][path][method.lower()]["responses"]
        cases += [(operation, int(s)) for s in responses if s.isdigit() and int(s) >= 400]
    return cases


def assert_one_line(error: Exception) -> None:
    """The error reads as one line naming what the service said (then one ``  - `` line per
    entry of the problem's ``errors``, as podbook prints them)."""
    first, *rest = str(error).splitlines()
    assert getattr(error, "detail", "") and error.detail in first, str(error)
    assert len(rest) <= len(getattr(error, "errors", ())), str(error)
    assert all(line.startswith("  - ") for line in rest), str(error)


@pytest.mark.parametrize(("operation", "status"), error_cases())
def test_documented_error_becomes_a_typed_one_line_exception(
    prism_static: PrismMock, operation: str, status: int
) -> None:
    def prefer_code(request: httpx.Request) -> dict[str, str] | None:
        return {"Prefer": f"code={status}"} if operation_of(request) == operation else None

    run = run_steps(prism_static, {operation: STEPS[operation]}, prefer_code)
    outcome = run.outcomes[operation]
    assert not [v for e in outcome.exchanges for v in e.violations if v["location"][0] == "request"]
    assert [e.status for e in outcome.exchanges][-1:] == [status]
    error = outcome.error
    assert isinstance(error, error_class_for_status(status)), repr(error)
    assert error.status == status
    assert_one_line(error)
    if isinstance(error, RateLimited):
        assert error.retry_after is not None and error.retry_after > 0


# ------------------------------------------------------------------ request examples


def request_examples() -> list[tuple[str, str, Any]]:
    """(operationId, example name, body) for every request example of the document."""
    document = rest_reference()
    cases = []
    for operation, (method, path) in OPERATIONS.items():
        body = document["paths"][path][method.lower()].get("requestBody")
        if body is None:
            continue
        for content in resolve(document, body)["content"].values():
            for name, example in (content.get("examples") or {}).items():
                cases.append((operation, name, resolve(document, example)["value"]))
    return cases


def _action(client: Client, body: dict[str, Any]) -> Any:
    return getattr(client.pods, body["action"])("pod-stand-in")


SEND_BODY: dict[str, Callable[[Client, Any], Any]] = {
    "updateSshKeys": lambda c, body: c.account.ssh_keys.put(body["keys"]),
    "createPod": lambda c, body: c.pods.create(body),
    "updatePod": lambda c, body: c.pods.update("pod-stand-in", body),
    "podAction": _action,
    "createCluster": lambda c, body: c.clusters.create(body),
    "updateCluster": lambda c, body: c.clusters.update("cluster-stand-in", body),
    "createEndpoint": lambda c, body: c.endpoints.create(body),
    "updateEndpoint": lambda c, body: c.endpoints.update("endpoint-stand-in", body),
    "createTemplate": lambda c, body: c.templates.create(body),
    "updateTemplate": lambda c, body: c.templates.update("template-stand-in", body),
    "createNetworkVolume": lambda c, body: c.network_volumes.create(body),
    "updateNetworkVolume": lambda c, body: c.network_volumes.update("volume-stand-in", body),
    "createRegistry": lambda c, body: c.registries.create(body),
    "createDelegation": lambda c, body: c.registries.create_delegation(body),
}
"""operationId → the client method that sends a body, given the document's example body."""


def test_every_operation_with_a_body_has_a_sender() -> None:
    document = rest_reference()
    with_body = {
        operation
        for operation, (method, path) in OPERATIONS.items()
        if "requestBody" in document["paths"][path][method.lower()]
    }
    assert with_body == set(SEND_BODY)


@pytest.mark.parametrize(("operation", "name", "body"), request_examples())
def test_document_request_example_goes_through_the_client(
    prism_dynamic: PrismMock, operation: str, name: str, body: Any
) -> None:
    run = run_steps(prism_dynamic, {operation: lambda c, ctx: SEND_BODY[operation](c, body)})
    outcome = run.outcomes[operation]
    assert not check(outcome, allow_d1=False), check(outcome, allow_d1=False)
    sent = [e for e in outcome.exchanges if route_of(e.method, e.path, OPERATIONS) == operation]
    assert sent, f"the {name} example was not sent as {operation}"


# ------------------------------------------------------------------ every client method

NOW = datetime.now(timezone.utc).replace(microsecond=0)
FULL_POD = {
    "name": "contract-cpu",
    "image": "runpod/base:0.6.2",
    "cpu": {"id": CPU, "vcpuCount": 4},
    "ports": ["8888/http", "22/tcp"],
    "env": {"MODEL": "small"},
    "mounts": {"network": [{"volumeId": "volume-stand-in", "path": "/workspace"}]},
    "disk": 30,
    "cloud": "SECURE",
    "args": "sleep infinity",
}
VARIANTS: dict[str, Callable[[Client, dict[str, Any]], Any]] = {
    "pods.create(cpu pod, every field)": lambda c, ctx: c.pods.create(FULL_POD),
    "pods.create(gpu, cuda floor)": lambda c, ctx: c.pods.create(
        name="contract-gpu", image="img:1", gpu={"id": GPU, "count": 2, "minCudaVersion": "12.4"}
    ),
    "pods.list(include_cluster_pods)": lambda c, ctx: c.pods.list(include_cluster_pods=True),
    "pods.start": lambda c, ctx: c.pods.start("pod-stand-in"),
    "pods.restart": lambda c, ctx: c.pods.restart("pod-stand-in"),
    "pods.logs(source, since)": lambda c, ctx: list(
        c.pods.logs("pod-stand-in", source="container", since=NOW - timedelta(hours=1))
    ),
    "pods.logs(follow)": lambda c, ctx: list(c.pods.logs("pod-stand-in", follow=True)),
    "pods.guard": lambda c, ctx: c.pods.guard("pod-stand-in"),
    "catalog.gpus(filters)": lambda c, ctx: c.catalog.gpus(
        count=1, cloud="SECURE", country_codes=["US"], min_cuda_version="12.4"
    ),
    "catalog.gpu(cuda list)": lambda c, ctx: c.catalog.gpu(GPU, cuda_versions=["12.4", "12.8"]),
    "catalog.cpus(filters)": lambda c, ctx: c.catalog.cpus(vcpu_count=4),
    "catalog.cpu(availability)": lambda c, ctx: c.catalog.cpu(CPU, availability=True),
    "catalog.datacenters(filters)": lambda c, ctx: c.catalog.datacenters(
        global_network=True, regions=["NORTH_AMERICA", "EUROPE"]
    ),
    "catalog.templates(source)": lambda c, ctx: c.catalog.templates(source="official"),
    "billing window": lambda c, ctx: c.billing.list(
        start_time=NOW - timedelta(days=2), end_time=NOW, bucket_size="day"
    ),
    "billing.pods(pod_id)": lambda c, ctx: c.billing.pods(pod_id="pod-stand-in", last_n=1),
    "billing.serverless(serverless_id)": lambda c, ctx: c.billing.serverless(
        serverless_id="endpoint-stand-in", last_n=1
    ),
    "billing.network_volumes(id)": lambda c, ctx: c.billing.network_volumes(
        network_volume_id="volume-stand-in", last_n=1
    ),
    "billing.clusters(cluster_id)": lambda c, ctx: c.billing.clusters(
        cluster_id="cluster-stand-in", last_n=1
    ),
    "billing.kind": lambda c, ctx: c.billing.kind("pods", last_n=1),
    "endpoints.create(cpu)": lambda c, ctx: c.endpoints.create(
        name="contract-cpu", image="me/w:1", cpu=[{"id": CPU, "vcpuCount": 2}], workers={"max": 2}
    ),
    "endpoints.worker_logs(tail, source)": lambda c, ctx: list(
        c.endpoints.worker_logs("endpoint-stand-in", "worker-stand-in", tail=10, source="system")
    ),
    "registries.create_delegation(arn)": lambda c, ctx: c.registries.create_delegation(
        resource=ARN
    ),
}
"""More calls of the same operations: the other client methods and their arguments."""

NOT_REFERENCE_OPERATIONS = {
    "pods.wait_for": "polls getPod until a status; needs a pod that changes",
    "registries.delete_v1": "REST v1 (DELETE /v1/registries/{id}), not in the document",
}
"""Public resource methods that send no operation of the document of their own."""


@pytest.fixture(scope="module")
def variant_run(prism_dynamic: PrismMock) -> Run:
    """The steps and the variants once against generated answers, tracing the methods."""
    return run_steps(prism_dynamic, {**STEPS, **VARIANTS}, trace=True)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_client_method_variant_against_the_mock(variant_run: Run, variant: str) -> None:
    problems = check(variant_run.outcomes[variant], allow_d1=False)
    assert not problems, "\n".join(problems)


def test_every_public_client_method_ran_against_the_mock(
    variant_run: Run, prism_dynamic: PrismMock
) -> None:
    with prism_dynamic.client(httpx.HTTPTransport()) as client:
        methods = resource_methods(client)
    never = sorted(methods - variant_run.called - set(NOT_REFERENCE_OPERATIONS))
    assert not never, "client methods never run against the mock: " + ", ".join(never)
    assert set(NOT_REFERENCE_OPERATIONS) <= methods
