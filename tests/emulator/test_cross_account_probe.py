"""Cross-account probing (issue 5 §4): account B, with random requests across every route of
the emulator, learns nothing of account A's resources and changes none of them.

Account A owns one of everything: a pod (with a generated ``JUPYTER_PASSWORD`` and a secret
env value), a cluster, a template, a network volume, a registry credential, an ECR
delegation, a queue endpoint with a queued job, a job on its own built-in ``echo`` (an
endpoint name account B has too) and a worker that has checked in. Hypothesis then sends
requests built from the emulator's own route table (every method of every route, REST v2,
v1, queue and worker routes) with B's key (B's worker keys on worker routes), A's ids in the
path, the query or reference fields of the body, and random query strings and bodies.

For every such request:
- never a 5xx;
- with an A id in the path or a reference field of the body: never 2xx and never 403;
- the answer equals the one to the same request with each A id replaced by an id that never
  existed (status and body, the ids swapped back): A's resources are indistinguishable from
  nothing at all;
- no answer to B contains an A id it was not sent, nor any of A's secrets.
Afterwards A's resources read the same as before (through A's key).
"""

from __future__ import annotations

import collections
import json
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from emu_helpers import GPU, create, gpu_pod, wait_status
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_queue_helpers import RawWorker, create_endpoint, queue_emulator, run, wait_for, worker_key

from podbook.emulator.app import build_routes

EXAMPLES = 600
SECRET_ENV = "a-secret-" + secrets.token_hex(12)
ECR_ARN = "arn:aws:ecr:us-east-2:418399314813:repository/team-a/private"
PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


@dataclass
class AccountA:
    """A's resources: ids by kind, secrets, and the worker keys B uses."""

    ids: dict[str, list[str]] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    b_worker_keys: dict[str, str] = field(default_factory=dict)

    def all_ids(self) -> list[str]:
        """Every A-only id. ``echo`` is not one (B has its own), nor is a worker id: a worker
        names itself, so B's workers may take the same name on B's endpoints."""
        return [i for kind, ids in self.ids.items() if kind != "worker" for i in ids if i != "echo"]


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """A fresh emulator with fast broker timings and accounts A and B."""
    return queue_emulator(start_emulator)


@pytest.fixture(scope="module")
def account_a(emu: Any) -> Iterator[AccountA]:
    """Create A's resources (and a worker key per B endpoint for the worker routes)."""
    a = AccountA()
    with emu.http() as http:
        pod = create(
            http, gpu_pod(name="a-private", startJupyter=True, env={"API_TOKEN": SECRET_ENV})
        )
        wait_status(http, pod["id"], "RUNNING")
        a.secrets = [v for k, v in http.get(f"/v2/pods/{pod['id']}").json()["env"].items()]
        cluster = http.post(
            "/v2/clusters",
            json={
                "name": "a-cluster",
                "type": "TRAINING",
                "image": "runpod/pytorch:latest",
                "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
            },
        )
        assert cluster.status_code == 201, cluster.text
        members = http.get(f"/v2/clusters/{cluster.json()['id']}/pods").json()
        members = members["pods"] if isinstance(members, dict) else members
        for member in members:  # settled, so the snapshots compare like with like
            wait_status(http, member["id"], "RUNNING", timeout=60)
        volume = http.post(
            "/v2/network-volumes", json={"name": "a-vol", "size": 10, "dataCenter": "EU-RO-1"}
        )
        assert volume.status_code == 201, volume.text
        registry = http.post(
            "/v2/registries",
            json={"name": "a-registry", "username": "a-user", "password": "a-registry-pw-1234"},
        )
        assert registry.status_code in (200, 201), registry.text
        delegation = http.post("/v2/registries/delegations", json={"resource": ECR_ARN})
        assert delegation.status_code == 201, delegation.text
        endpoint = create_endpoint(http, "a-private-" + secrets.token_hex(3))
        queued = run(http, endpoint, {"input": {"secret": SECRET_ENV}})
        echo_job = run(http, "echo", {"input": {"secret": SECRET_ENV}})
        worker = RawWorker(
            emu.url, endpoint, worker_key(http, endpoint), "w-a-" + secrets.token_hex(3)
        )
        assert worker.ping().status_code == 200
        worker.close()
        wait_for(
            lambda: http.get(f"/v2/echo/status/{echo_job}").json()["status"] == "COMPLETED", 60
        )
        a.ids = {
            "pod": [pod["id"], *(m["id"] for m in members)],
            "cluster": [cluster.json()["id"]],
            "template": ["tpl-own", "tpl-serverless"],
            "volume": [volume.json()["id"]],
            "registry": [registry.json()["id"]],
            "delegation": [delegation.json()["id"]],
            "endpoint": [endpoint, "echo"],
            "job": [queued, echo_job],
            "worker": [worker.worker_id],
        }
        a.secrets += ["a-registry-pw-1234", emu.api_key, emu.readonly_key]
    with emu.http(emu.other_key) as other:
        a.b_worker_keys["echo"] = worker_key(other, "echo")
        b_endpoint = create_endpoint(other, "b-own-" + secrets.token_hex(3))
        a.b_worker_keys["*"] = worker_key(other, b_endpoint)
    yield a


# --- what B sends -----------------------------------------------------------------------------

ID_KIND_BY_PREFIX = [
    ("/v2/pods/", "pod"),
    ("/v2/clusters/", "cluster"),
    ("/v2/templates/", "template"),
    ("/v2/network-volumes/", "volume"),
    ("/v2/registries/delegations/", "delegation"),
    ("/v2/registries/", "registry"),
    ("/v1/containerregistryauth/", "registry"),
    ("/v2/serverless/", "endpoint"),
]
PARAM_KIND = {
    "endpoint_id": "endpoint",
    "job_id": "job",
    "worker_id": "worker",
    "workerId": "worker",
}
# Routes whose body may point at other resources (registry, template, network volume).
REFERENCE_ROUTES = {
    (method, f"/v2/{kind}{suffix}")
    for kind in ("pods", "templates", "serverless", "clusters")
    for method, suffix in (("POST", ""), ("PATCH", "/{id}"))
}
WORKER_OPERATIONS = (
    "job-take",
    "job-take-batch",
    "job-stop",
    "job-done",
    "job-stream",
    "ping",
    "lb-worker",
)


def route_table() -> list[tuple[str, str]]:
    """``(method, path template)`` of every route (HEAD aside), from the app itself."""
    table = []
    for route in build_routes():
        for method in sorted(getattr(route, "methods", None) or ()):
            if method != "HEAD" and route.path != "/healthz":
                table.append((method, route.path))
    return table


def param_kind(path: str, name: str) -> str | None:
    """Which kind of A resource fills ``{name}`` in ``path`` (None: public catalog ids)."""
    if name in PARAM_KIND:
        return PARAM_KIND[name]
    if path.startswith("/v2/catalog/"):
        return None
    return next((kind for prefix, kind in ID_KIND_BY_PREFIX if path.startswith(prefix)), None)


json_leaf = st.none() | st.booleans() | st.integers(-5, 5000) | st.text(max_size=12)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = [
    "name", "image", "env", "action", "input", "output", "stream", "status", "size", "gpu",
    "cpu", "compute", "type", "keys", "workersMax", "resource", "username", "password", "policy",
]  # fmt: skip


def reference_bodies(a: AccountA) -> list[dict[str, Any]]:
    """Bodies that point at A's resources from B's requests (each must be refused)."""
    reg, vol, tpl = a.ids["registry"][0], a.ids["volume"][0], a.ids["template"][0]
    pod = gpu_pod(name="b-probe")
    return [
        {**pod, "registry": reg},
        {**pod, "templateId": tpl},
        {**pod, "mounts": {"network": [{"volumeId": vol, "path": "/workspace"}]}},
        {"name": "b-tpl", "image": "b/img:1", "registry": reg},
        {"name": "b-ep", "templateId": tpl},
        {"name": "b-ep", "image": "b/img:1", "registry": reg},
        {"name": "b-ep", "image": "b/img:1", "networkVolumes": [vol]},
        {"name": "b-cluster", "type": "TRAINING", "image": "i", "registry": reg,
         "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2}},
        {"name": "b-cluster", "type": "TRAINING", "templateId": tpl,
         "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2}},
    ]  # fmt: skip


PLAIN_BODIES = [
    {},
    {"action": "stop"},
    {"action": "terminate"},
    {"name": "renamed-by-b"},
    {"env": {"STOLEN": "1"}},
    {"size": 50},
    {"input": {"x": 1}},
    {"output": "forged"},
    {"output": {"x": 1}, "status": "IN_PROGRESS"},
    {"stream": [{"output": "forged"}]},
    {"workersMax": 3},
    {"keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBprobe b@probe"]},
]


@dataclass
class Probe:
    """One request B sends."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    bare_key: bool
    named_in_path: bool
    reference_body: bool
    template: str


@st.composite
def probes(draw: st.DrawFn, a: AccountA, table: list[tuple[str, str]]) -> Probe:
    """A request built from the route table with A's ids filled in."""
    method, template = draw(st.sampled_from(table))
    named = False

    def fill(match: re.Match[str]) -> str:
        nonlocal named
        kind = param_kind(template, match.group(1))
        if kind is None:
            return draw(st.sampled_from(["NVIDIA GeForce RTX 4090", "cpu3c", "EU-RO-1", "x"]))
        pool = a.ids[kind] if draw(st.integers(0, 4)) else a.all_ids()
        value = draw(st.sampled_from(pool))
        named = named or (kind != "worker" and value in a.all_ids())  # workers name themselves
        return value

    path = PARAM.sub(fill, template)
    query_values = st.sampled_from(a.all_ids()) | st.sampled_from(["true", "0", "5", "-1", "x"])
    query = draw(
        st.dictionaries(
            st.sampled_from(
                ["includeClusterPods", "podId", "endpointId", "clusterId", "networkVolumeId",
                 "tail", "wait", "ttl", "bucketSize", "grouping", "source", "batch_size",
                 "job_id", "status", "isStream", "startTime"]
            ),
            query_values,
            max_size=2,
        )
    )  # fmt: skip
    reference = False
    body: Any = None
    if method in ("POST", "PUT", "PATCH"):
        choice = draw(st.integers(0, 9))
        if choice < 3 and (method, template) in REFERENCE_ROUTES:
            body = draw(st.sampled_from(reference_bodies(a)))
            reference = True
        elif choice < 7:
            body = draw(st.sampled_from(PLAIN_BODIES))
        elif choice < 9:
            body = draw(st.dictionaries(st.sampled_from(FIELDS), json_value, max_size=4))
        else:
            body = draw(json_value)
    return Probe(method, path, query, body, draw(st.booleans()), named, reference, template)


def plain_probe(a: AccountA, method: str, template: str) -> Probe:
    """``template`` with the first A id of each kind, no query, ``{}`` for a body."""
    kinds = [param_kind(template, m.group(1)) for m in PARAM.finditer(template)]

    def fill(match: re.Match[str]) -> str:
        kind = param_kind(template, match.group(1))
        return "x" if kind is None else a.ids[kind][0]

    named = any(kind not in (None, "worker") and a.ids[kind][0] != "echo" for kind in kinds)
    body = {} if method in ("POST", "PUT", "PATCH") else None
    return Probe(method, PARAM.sub(fill, template), {}, body, False, named, False, template)


def is_worker_route(template: str) -> bool:
    """Whether a route is served to workers (worker keys) rather than API keys."""
    parts = template.split("/")
    return len(parts) > 3 and parts[3] in WORKER_OPERATIONS


def send(
    http: httpx.Client, emu: Any, a: AccountA, probe: Probe, swap: dict[str, str]
) -> httpx.Response:
    """Send ``probe`` as B, with each A id in ``swap`` replaced by its stand-in."""

    def swapped(text: str) -> str:
        for real, fake in swap.items():
            text = text.replace(real, fake)
        return text

    if is_worker_route(probe.template):
        endpoint = probe.path.split("/")[2]
        key = a.b_worker_keys.get(endpoint, a.b_worker_keys["*"])
    else:
        key = emu.other_key
    auth = key if probe.bare_key and "{endpoint_id" in probe.template else f"Bearer {key}"
    content = None if probe.body is None else swapped(json.dumps(probe.body)).encode()
    return http.request(
        probe.method,
        swapped(probe.path),
        params={k: swapped(v) for k, v in probe.query.items()},
        content=content,
        headers={"Authorization": auth, "Content-Type": "application/json"},
    )


def stand_ins(a: AccountA, probe: Probe) -> dict[str, str]:
    """A never-existing id for each A id the probe carries (longest first)."""
    text = probe.path + json.dumps(probe.query) + json.dumps(probe.body)
    carried = sorted({i for i in a.all_ids() if i in text}, key=len, reverse=True)
    return {
        real: f"{real[:2]}zz{secrets.token_hex(max(3, len(real) // 2 - 2))}" for real in carried
    }


# --- A's state -------------------------------------------------------------------------------

VOLATILE = {"runtime", "delayTime", "executionTime", "workers", "uptime", "updatedAt"}


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def snapshot(emu: Any, a: AccountA) -> dict[str, Any]:
    """Everything A can read of its resources, volatile fields aside."""
    reads = [f"/v2/pods/{i}" for i in a.ids["pod"]]
    reads += [f"/v2/clusters/{a.ids['cluster'][0]}", f"/v2/clusters/{a.ids['cluster'][0]}/pods"]
    reads += [f"/v2/templates/{i}" for i in a.ids["template"]]
    reads += [f"/v2/network-volumes/{a.ids['volume'][0]}", "/v2/registries"]
    reads += ["/v2/registries/delegations", "/v2/account/ssh-keys", "/v2/serverless"]
    endpoint, _ = a.ids["endpoint"]
    queued, echo_job = a.ids["job"]
    reads += [f"/v2/{endpoint}/status/{queued}", f"/v2/echo/status/{echo_job}"]
    reads += [f"/v2/{endpoint}/health", "/v2/pods?includeClusterPods=true"]
    with emu.http() as http:
        return {
            path: (r.status_code, _stable(r.json())) for path in reads for r in [http.get(path)]
        }


# --- the probe -------------------------------------------------------------------------------


def test_account_b_never_sees_or_changes_account_a(emu: Any, account_a: AccountA) -> None:
    a = account_a
    table = route_table()
    assert len(table) >= 60, "the route table looks incomplete"
    before = snapshot(emu, a)
    statuses: collections.Counter[int] = collections.Counter()
    named_statuses: collections.Counter[int] = collections.Counter()
    routes_hit: set[tuple[str, str]] = set()
    other_than_404: collections.Counter[tuple[int, str, str]] = collections.Counter()
    forbidden = [*a.secrets]
    http = httpx.Client(base_url=emu.url, timeout=60)
    sent_before: list[str] = []

    def probe_once(probe: Probe) -> None:
        routes_hit.add((probe.method, probe.template))
        answer = send(http, emu, a, probe, {})
        statuses[answer.status_code] += 1
        where = f"{probe.method} {probe.path} {probe.query} {json.dumps(probe.body)[:120]}"
        assert answer.status_code < 500, f"{where} -> {answer.status_code} {answer.text[:200]}"
        sent = probe.path + json.dumps(probe.query) + json.dumps(probe.body)
        # B may name its own things after A's ids (a worker names itself in a worker route's
        # path); B reading back a value B itself sent earlier reveals nothing.
        sent_before.append(sent)
        unsent = [
            i
            for i in a.all_ids()
            if i in answer.text and not any(i in earlier for earlier in sent_before)
        ]
        assert not unsent, f"{where} revealed A's ids {unsent}: {answer.text[:300]}"
        assert not [s for s in forbidden if s in answer.text], f"{where} revealed a secret of A"
        swap = stand_ins(a, probe)
        if not swap:
            return
        named_statuses[answer.status_code] += 1
        if probe.named_in_path and answer.status_code != 404:
            other_than_404[(answer.status_code, probe.method, probe.template)] += 1
        if probe.named_in_path or probe.reference_body:
            assert answer.status_code != 403, f"{where} -> 403 {answer.text[:200]}"
            assert answer.status_code >= 400, f"{where} -> {answer.status_code} {answer.text[:200]}"
        twin = send(http, emu, a, probe, swap)
        if 429 in (answer.status_code, twin.status_code):
            return  # a rate limit is about B's own pace, not about A
        twin_text = twin.text
        for real, fake in swap.items():
            twin_text = twin_text.replace(fake, real)
        if answer.status_code < 400:  # allowed only when A's id sat in the query: fresh ids
            assert twin.status_code == answer.status_code, f"{where}: {twin.status_code}"
            return
        assert (answer.status_code, answer.text) == (twin.status_code, twin_text), (
            f"{where}: A's ids answered differently from ids that never existed:\n"
            f"  A's: {answer.status_code} {answer.text[:200]}\n  none: {twin.status_code} {twin_text[:200]}"
        )

    try:
        for method, template in table:  # every route at least once, plainly
            probe_once(plain_probe(a, method, template))
        settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        )(given(probe=probes(a, table))(probe_once))()
    finally:
        http.close()
    after = snapshot(emu, a)
    print(
        f"\n{sum(statuses.values())} requests by account B over {len(routes_hit)} of "
        f"{len(table)} routes; statuses {dict(sorted(statuses.items()))}; naming A's resources: "
        f"{sum(named_statuses.values())} -> {dict(sorted(named_statuses.items()))}"
    )
    print(f"A's id in the path, answered other than 404: {dict(other_than_404)}")
    print(f"routes not drawn: {sorted(set(table) - routes_hit)}")
    changed = [path for path in before if before[path] != after[path]]
    assert not changed, f"A's resources changed: {changed}"
    # Six hundred hostile requests later, the emulator's log and stdout still hold no secret.
    log = emu.log_path.read_text(errors="replace") + emu.stdout_path.read_text(errors="replace")
    keys = [*forbidden, emu.other_key, *a.b_worker_keys.values()]
    assert not [k for k in keys if k in log], "a key or secret reached the emulator's log"
