"""One client call per operation of the REST reference document, shared by the tests.

``STEPS`` maps each ``operationId`` of ``reference/runpod-rest-v2.openapi.json`` to the
``podbook.Client`` call that performs it. ``tests/client/test_reference_coverage.py`` runs
the table against the emulator; ``tests/contract/`` runs it against an independent mock of
the document (Stoplight Prism) and replays the document's recorded answers through it.

Steps run in this order and share ``ctx``: a create step stores what it made, later steps
read it (``ctx["pod"]``). Give a ``ctx`` that answers a missing key with a stand-in id
(:class:`StandInIds`) where the create step may not have made anything.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from reference_docs import rest_reference

from podbook import Client

GPU = "NVIDIA GeForce RTX 4090"
CPU = "cpu3c"
ARN = "arn:aws:ecr:us-east-2:123456789012:repository/team/app"
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZha2VrZXlmb3J0ZXN0c29ubHk coverage"
METHODS = ("get", "put", "post", "patch", "delete")

Step = Callable[[Client, dict[str, Any]], Any]


@dataclass
class Exchange:
    """One request sent over HTTP and the answer it got."""

    method: str
    path: str
    status: int
    request_headers: httpx.Headers
    request_body: bytes
    response_headers: httpx.Headers

    @property
    def violations(self) -> list[dict[str, Any]]:
        """Prism's ``sl-violations`` header, decoded (empty when absent)."""
        raw = self.response_headers.get("sl-violations")
        return json.loads(raw) if raw else []

    def __str__(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


class ExchangeRecorder(httpx.HTTPTransport):
    """A real HTTP transport that notes each exchange (``sent``: method, path, status).

    ``headers`` are added to every request (e.g. Prism's ``Prefer``); ``headers_for`` may
    add more to one request (a function of the request, returning a mapping or None).
    """

    def __init__(
        self,
        headers: dict[str, str] | None = None,
        headers_for: Callable[[httpx.Request], dict[str, str] | None] | None = None,
    ) -> None:
        super().__init__()
        self.headers = dict(headers or {})
        self.headers_for = headers_for
        self.exchanges: list[Exchange] = []

    @property
    def sent(self) -> list[tuple[str, str, int]]:
        """(method, path, status) of every exchange, in order."""
        return [(e.method, e.path, e.status) for e in self.exchanges]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send as usual; remember the exchange."""
        request.headers.update(self.headers)
        if self.headers_for is not None:
            request.headers.update(self.headers_for(request) or {})
        response = super().handle_request(request)
        self.exchanges.append(
            Exchange(
                request.method,
                request.url.path,
                response.status_code,
                request.headers,
                request.content,
                response.headers,
            )
        )
        return response


def reference_operations() -> dict[str, tuple[str, str]]:
    """``operationId`` → (METHOD, path template) for every operation of the reference."""
    return {
        operation["operationId"]: (method.upper(), path)
        for path, item in rest_reference()["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


def route_of(method: str, path: str, operations: dict[str, tuple[str, str]]) -> str | None:
    """The operationId a sent request reached (literal segments beat ``{placeholders}``)."""
    candidates = []
    for operation_id, (op_method, template) in operations.items():
        pattern = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"
        if op_method == method and re.match(pattern, path):
            candidates.append((template.count("{"), operation_id))
    return min(candidates)[1] if candidates else None


class StandInIds(dict[str, Any]):
    """A step context whose missing entries are stand-in ids (``"pod-stand-in"``), for a
    mock that answers any id: a later step still runs when its create step failed."""

    def __missing__(self, key: str) -> str:
        return f"{key}-stand-in"


def _unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def _lines(stream: Any) -> list[str]:
    with stream:
        return [line.line for line in stream]


# operationId → the client call. Steps run in this order and share ``ctx``.
STEPS: dict[str, Step] = {
    "getSshKeys": lambda c, ctx: c.account.ssh_keys.get(),
    "updateSshKeys": lambda c, ctx: c.account.ssh_keys.put([SSH_KEY]),
    "listGpuTypes": lambda c, ctx: c.catalog.gpus(availability=True),
    "getGpuType": lambda c, ctx: c.catalog.gpu(GPU, availability=True),
    "listCpuTypes": lambda c, ctx: c.catalog.cpus(),
    "getCpuType": lambda c, ctx: c.catalog.cpu(CPU),
    "listDataCenters": lambda c, ctx: c.catalog.datacenters(),
    "getDataCenter": lambda c, ctx: c.catalog.datacenter("EU-RO-1", include="GPU_AVAILABILITY"),
    "listPublicTemplates": lambda c, ctx: c.catalog.templates(),
    "createTemplate": lambda c, ctx: ctx.setdefault(
        "template", c.templates.create(name=_unique("cov"), image="me/app:1")
    ),
    "listTemplates": lambda c, ctx: c.templates.list(),
    "getTemplate": lambda c, ctx: c.templates.get(ctx["template"]),
    "updateTemplate": lambda c, ctx: c.templates.update(ctx["template"], image="me/app:2"),
    "deleteTemplate": lambda c, ctx: c.templates.delete(ctx["template"]),
    "createNetworkVolume": lambda c, ctx: ctx.setdefault(
        "volume", c.network_volumes.create(name=_unique("cov"), size=10, data_center="EU-RO-1")
    ),
    "listNetworkVolumes": lambda c, ctx: c.network_volumes.list(),
    "getNetworkVolume": lambda c, ctx: c.network_volumes.get(ctx["volume"]),
    "updateNetworkVolume": lambda c, ctx: c.network_volumes.update(ctx["volume"], size=20),
    "deleteNetworkVolume": lambda c, ctx: c.network_volumes.delete(ctx["volume"]),
    "createRegistry": lambda c, ctx: ctx.setdefault(
        "registry", c.registries.create(name="cov", username="u", password="coverage-secret")
    ),
    "listRegistries": lambda c, ctx: c.registries.list(),
    "getRegistry": lambda c, ctx: c.registries.get(ctx["registry"]),
    "deleteRegistry": lambda c, ctx: c.registries.delete(ctx["registry"]),
    "createDelegation": lambda c, ctx: ctx.setdefault(
        "delegation", c.registries.create_delegation(resource=ARN, name="cov")
    ),
    "listDelegations": lambda c, ctx: c.registries.list_delegations(),
    "revokeDelegation": lambda c, ctx: c.registries.revoke_delegation(ctx["delegation"]),
    "createPod": lambda c, ctx: ctx.setdefault(
        "pod", c.pods.create(name=_unique("cov"), image="img:1", gpu=GPU)
    ),
    "listPods": lambda c, ctx: c.pods.list(),
    "getPod": lambda c, ctx: c.pods.get(ctx["pod"]),
    "updatePod": lambda c, ctx: c.pods.update(ctx["pod"], name=_unique("renamed")),
    "podAction": lambda c, ctx: c.pods.stop(ctx["pod"]),
    "getPodLogs": lambda c, ctx: _lines(c.pods.logs(ctx["pod"], tail=5)),
    "deletePod": lambda c, ctx: c.pods.terminate(ctx["pod"]),
    "createCluster": lambda c, ctx: ctx.setdefault(
        "cluster",
        c.clusters.create(
            name=_unique("cov"),
            type="APPLICATION",
            image="alpine",
            compute={"gpu_type_id": GPU, "gpu_count_per_pod": 1, "pod_count": 2},
        ),
    ),
    "listClusters": lambda c, ctx: c.clusters.list(),
    "getCluster": lambda c, ctx: c.clusters.get(ctx["cluster"]),
    "updateCluster": lambda c, ctx: c.clusters.update(ctx["cluster"], name=_unique("renamed")),
    "listClusterPods": lambda c, ctx: c.clusters.pods(ctx["cluster"]),
    "deleteCluster": lambda c, ctx: c.clusters.delete(ctx["cluster"]),
    "createEndpoint": lambda c, ctx: ctx.setdefault(
        "endpoint", c.endpoints.create(name=_unique("cov"), image="me/worker:1")
    ),
    "listEndpoints": lambda c, ctx: c.endpoints.list(),
    "getEndpoint": lambda c, ctx: c.endpoints.get(ctx["endpoint"]),
    "updateEndpoint": lambda c, ctx: c.endpoints.update(ctx["endpoint"], image="me/worker:2"),
    "listEndpointWorkers": lambda c, ctx: c.endpoints.workers(ctx["endpoint"]),
    "listEndpointReleases": lambda c, ctx: c.endpoints.releases(ctx["endpoint"]),
    "getWorkerLogs": lambda c, ctx: _lines(c.endpoints.worker_logs(ctx["endpoint"], "w-cov")),
    "deleteEndpoint": lambda c, ctx: c.endpoints.delete(ctx["endpoint"]),
    "listBilling": lambda c, ctx: c.billing.list(last_n=2, bucket_size="hour"),
    "listPodBilling": lambda c, ctx: c.billing.pods(last_n=2, bucket_size="hour"),
    "listServerlessBilling": lambda c, ctx: c.billing.serverless(last_n=2, bucket_size="hour"),
    "listEndpointBilling": lambda c, ctx: c.billing.endpoints(last_n=2, bucket_size="hour"),
    "listNetworkVolumeBilling": lambda c, ctx: c.billing.network_volumes(
        last_n=2, bucket_size="day"
    ),
    "listClusterBilling": lambda c, ctx: c.billing.clusters(last_n=2, bucket_size="day"),
}
