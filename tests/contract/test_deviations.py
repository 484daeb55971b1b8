"""Every deviation of ``reference/DEVIATIONS.md``, tested by its id.

Each test names the row it checks (``@deviation("D7")``); the table and the tests must match
one to one. Rules the document states in prose but its schemas cannot express (D9-D22) are
checked the same way: the independent mock (Prism, validating against the document) accepts
the request, and the emulator refuses it with the status the table gives. The table is also
where ``scripts/conformance.py`` reads the schemathesis checks it turns off.
"""

from __future__ import annotations

import importlib.util
import json
import re
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from prism import PrismMock, mock_client
from reference_docs import REFERENCE_DIR, rest_reference
from reference_examples import recorded_answers
from reference_steps import CPU, GPU, METHODS, ExchangeRecorder, reference_operations

from podbook import Client
from podbook.api.logs import parse_event_id, parse_rfc3339
from podbook.client.resources.pods import pod_calls

ROOT = Path(__file__).resolve().parents[2]
TABLE = REFERENCE_DIR / "DEVIATIONS.md"
ROW = re.compile(r"^\|\s*(D\d+)\s*\|")
TESTED: set[str] = set()
"""The ids some test below names."""


def deviation(*ids: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a test as the check of the table rows ``ids``."""

    def mark(test: Callable[..., Any]) -> Callable[..., Any]:
        TESTED.update(ids)
        return test

    return mark


def table_rows() -> dict[str, list[str]]:
    """id → the cells of its row."""
    rows = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if match := ROW.match(line):
            rows[match.group(1)] = [cell.strip() for cell in line.strip().strip("|").split("|")]
    return rows


def conformance_script() -> ModuleType:
    """``scripts/conformance.py``, loaded by path."""
    name = "podbook_conformance_script"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "conformance.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def queue_operations(emulator: Any) -> set[str]:
    """The operationIds of the emulator's own queue document."""
    with emulator.http() as http:
        document = http.get("/openapi/queue.json").json()
    return {
        operation["operationId"]
        for item in document["paths"].values()
        for method, operation in item.items()
        if method in METHODS
    }


# ------------------------------------------------------------------ the table itself


def test_every_row_is_well_formed_and_names_real_operations(emulator: Any) -> None:
    rows = table_rows()
    known = set(reference_operations()) | queue_operations(emulator)
    assert rows and all(len(cells) == 6 for cells in rows.values()), "six cells per row"
    for row_id, cells in rows.items():
        operations = re.findall(r"`(\w+)`", cells[1])
        assert operations and set(operations) <= known, f"{row_id}: {operations}"
        assert all(cells[2:5]), f"{row_id}: says / does / why must all be filled"


def test_every_row_has_a_test_and_every_test_a_row() -> None:
    rows = set(table_rows())
    assert rows - TESTED == set(), "rows without a test"
    assert TESTED - rows == set(), "tests naming no row"


def test_the_conformance_run_turns_off_exactly_the_checks_of_the_table() -> None:
    script = conformance_script()
    expected: dict[str, set[str]] = {}
    for cells in table_rows().values():
        for operation in re.findall(r"`(\w+)`", cells[1]):
            for check in re.findall(r"`(\w+)`", cells[5]):
                expected.setdefault(operation, set()).add(check)
    assert {op: set(checks) for op, checks in script.DEVIATIONS.items()} == expected
    assert all(
        why.startswith("D") for checks in script.DEVIATIONS.values() for why in checks.values()
    )


# ------------------------------------------------------------------ the document contradicts itself


@deviation("D1")
def test_d1_request_urls_examples_are_templates_not_uris(prism_static: PrismMock) -> None:
    # The independent mock refuses the document's own example of an endpoint (500).
    answer = httpx.get(f"{prism_static.url}/v2/serverless", headers=prism_static.headers())
    faults = json.loads(answer.headers.get("sl-violations", "[]"))
    assert answer.status_code == 500
    assert any("requestUrls" in map(str, v["location"]) and v["code"] == "format" for v in faults)
    # podbook reads the templates as given.
    example = next(a for a in recorded_answers() if a.operation == "getEndpoint" and a.is_success)
    recorded = example.response()
    transport = httpx.MockTransport(lambda request: recorded)
    with mock_client("http://127.0.0.1:9", transport) as client:
        endpoint = client.endpoints.get("4m7x2k9q")
    urls = example.value.get("requestUrls") or {}
    assert endpoint.request_urls == urls
    templated = [
        a.value["requestUrls"]["status"]
        for a in recorded_answers()
        if a.operation == "createEndpoint" and a.is_success
    ]
    assert templated and all("{job_id}" in url for url in templated)


@pytest.fixture(scope="module")
def slow_emulator(start_emulator: Any) -> Any:
    """An emulator whose pods stay PROVISIONING for a minute."""
    return start_emulator(timings=("--provision-seconds", "60", "--start-seconds", "0.2"))


@deviation("D2")
def test_d2_a_provisioning_pod_lists_start_and_terminate_and_accepts_stop(
    slow_emulator: Any,
) -> None:
    document = rest_reference()
    action_text = document["paths"]["/v2/pods/{id}/action"]["post"]["description"]
    assert "`PROVISIONING` and `STARTING` allow `stop`/`terminate`" in " ".join(action_text.split())
    created_example = next(a for a in recorded_answers() if a.operation == "createPod").value
    assert (created_example["status"], created_example["actions"]) == (
        "PROVISIONING",
        ["start", "terminate"],
    )
    with Client(api_key=slow_emulator.api_key, url=slow_emulator.url) as client:
        pod = client.pods.create(name="d2", image="img:1", gpu=GPU)
        assert (pod.status, pod.actions) == ("PROVISIONING", ["start", "terminate"])
        assert client.pods.start(pod).status == "PROVISIONING"  # a no-op
        assert client.pods.stop(pod).status == "EXITED"
        client.pods.terminate(pod)


def _sse_ids(text: str) -> list[str]:
    return [
        line.removeprefix("id:").strip() for line in text.splitlines() if line.startswith("id:")
    ]


@deviation("D3")
def test_d3_log_event_ids_are_ts_slash_seq_and_either_form_resumes(emulator: Any) -> None:
    examples = [a for a in recorded_answers() if a.media_type == "text/event-stream"]
    description = rest_reference()["paths"]["/v2/pods/{id}/logs"]["get"]["description"]
    assert "`id` values are the event `ts`" in " ".join(description.split())
    for example in examples:
        ts = json.loads(example.value.split("data:", 1)[1])["ts"]
        (event_id,) = _sse_ids(example.value)
        assert event_id != ts and event_id.startswith(ts + "/")
        assert parse_event_id(event_id).seq is not None
        assert parse_event_id(ts).ts == parse_rfc3339(ts)  # a bare ts resumes too
    with emulator.http() as http:
        pod_id = http.post("/v2/pods", json={"name": "d3", "image": "i:1", "gpu": {"id": GPU}})
        pod_id.raise_for_status()
        url = f"/v2/pods/{pod_id.json()['id']}/logs"
        with http.stream("GET", url, timeout=httpx.Timeout(10, read=1.0)) as stream:
            ids = []
            try:
                for line in stream.iter_lines():
                    if line.startswith("id:"):
                        ids.append(line[3:].strip())
                        break
            except httpx.ReadTimeout:
                pass
    assert ids and all(parse_event_id(i).seq is not None and "/" in i for i in ids)


@deviation("D4")
def test_d4_the_log_examples_end_an_event_without_a_blank_line_and_are_read(
    prism_static: PrismMock,
) -> None:
    examples = [a for a in recorded_answers() if a.media_type == "text/event-stream"]
    assert examples and all(not a.value.endswith("\n\n") for a in examples)
    with prism_static.client(ExchangeRecorder()) as client:
        lines = list(client.pods.logs("pod-stand-in", tail=5))
    expected = json.loads(examples[0].value.split("data:", 1)[1])["line"]
    assert [line.line for line in lines] == [expected]


# ------------------------------------------------------------------ paths, the seed, defaults


@deviation("D5")
def test_d5_delete_on_the_delegations_path_is_a_registry_delete(
    emulator: Any, prism_static: PrismMock
) -> None:
    with emulator.http() as http:
        assert http.delete("/v2/registries/delegations").status_code == 404
        refused = http.put("/v2/registries/delegations", json={})
    assert refused.status_code == 405
    assert {m.strip() for m in refused.headers["Allow"].split(",")} >= {"DELETE", "GET", "POST"}
    mock = httpx.delete(
        f"{prism_static.url}/v2/registries/delegations", headers=prism_static.headers()
    )
    assert mock.status_code == 204  # the document reads it as deleteRegistry


@deviation("D6")
def test_d6_top_level_cuda_fields_are_sent_inside_gpu(prism_static: PrismMock) -> None:
    call = pod_calls.create(
        {"name": "d6", "image": "i:1", "gpu": GPU, "minCudaVersion": "12.4"}, {}
    )
    assert "minCudaVersion" not in call.json and call.json["gpu"]["minCudaVersion"] == "12.4"
    recorder = ExchangeRecorder()
    with prism_static.client(recorder) as client:
        client.pods.create(
            {"name": "d6", "image": "i:1", "gpu": GPU, "allowedCudaVersions": ["12.4"]}
        )
    assert recorder.exchanges[-1].status == 201 and not recorder.exchanges[-1].violations


@deviation("D7")
def test_d7_the_seeds_v1_registry_delete_is_served_and_sent(
    client: Client, prism_static: PrismMock
) -> None:
    registry = client.registries.create(
        name=f"d7-{secrets.token_hex(3)}", username="u", password="p"
    )
    client.registries.delete_v1(registry)
    assert registry.id not in {r.id for r in client.registries.list()}
    mock = httpx.delete(
        f"{prism_static.url}/v1/containerregistryauth/{registry.id}", headers=prism_static.headers()
    )
    assert mock.status_code == 404  # not an operation of the document


@deviation("D8")
def test_d8_endpoint_type_and_scaling_are_required_but_defaulted(
    emulator: Any, prism_static: PrismMock
) -> None:
    body = {"name": f"d8-{secrets.token_hex(3)}", "image": "me/w:1"}
    mock = httpx.post(
        f"{prism_static.url}/v2/serverless", json=body, headers=prism_static.headers()
    )
    assert mock.status_code == 422  # the document requires type and scaling
    with emulator.http() as http:
        created = http.post("/v2/serverless", json=body)
    assert created.status_code == 201 and created.json()["scaling"]["type"] == "QUEUE_DELAY"


# ------------------------------------------------------------------ rules beyond the schemas


@dataclass(frozen=True)
class Probe:
    """A request the document's schemas accept and podbook refuses with ``status``.

    ``path`` and ``json`` may name ``{pod}``, ``{volume}``, ``{endpoint}`` or ``{job}``:
    ``setup`` makes them on the emulator first. ``in_reference`` is False for the queue,
    which the REST document (and so the mock) does not cover.
    """

    method: str
    path: str
    status: int
    json: Any = None
    params: dict[str, str] | None = None
    setup: Callable[[httpx.Client], dict[str, str]] | None = None
    in_reference: bool = True


def _pod(http: httpx.Client) -> dict[str, str]:
    pod = http.post("/v2/pods", json={"name": "probe", "image": "i:1", "gpu": {"id": GPU}})
    pod.raise_for_status()
    pod_id = pod.json()["id"]
    deadline = time.monotonic() + 10
    while http.get(f"/v2/pods/{pod_id}").json()["status"] != "RUNNING":
        assert time.monotonic() < deadline, "the pod did not reach RUNNING"
        time.sleep(0.05)
    http.post(f"/v2/pods/{pod_id}/action", json={"action": "stop"}).raise_for_status()
    return {"pod": pod_id}


def _volume(http: httpx.Client) -> dict[str, str]:
    body = {"name": "probe", "size": 20, "dataCenter": "US-KS-2"}
    made = http.post("/v2/network-volumes", json=body)
    made.raise_for_status()
    return {"volume": made.json()["id"]}


def _completed_job(http: httpx.Client) -> dict[str, str]:
    job = http.post("/v2/echo/runsync", json={"input": {"hi": 1}})
    job.raise_for_status()
    assert job.json()["status"] == "COMPLETED"
    return {"job": job.json()["id"]}


CLUSTER = {
    "name": "probe",
    "type": "APPLICATION",
    "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
}
ENDPOINT = {
    "name": "probe",
    "type": "QUEUE",
    "image": "me/w:1",
    "scaling": {"type": "QUEUE_DELAY", "queueDelay": 4},
}

PROBES: dict[str, Probe] = {
    "D9": Probe(
        "POST",
        "/v2/pods",
        400,
        {"name": "p", "image": "i:1", "gpu": {"id": GPU}, "cpu": {"id": CPU, "vcpuCount": 2}},
    ),
    "D10": Probe("POST", "/v2/pods/{pod}/action", 409, {"action": "restart"}, setup=_pod),
    "D11": Probe("POST", "/v2/clusters", 422, CLUSTER),
    "D12": Probe("POST", "/v2/serverless", 400, {**ENDPOINT, "workers": {"min": 3, "max": 1}}),
    "D13": Probe(
        "POST", "/v2/templates", 422, {"name": "probe-t", "image": "i:1", "ports": ["8888"]}
    ),
    "D14": Probe("PATCH", "/v2/network-volumes/{volume}", 400, {"size": 15}, setup=_volume),
    "D15": Probe("PUT", "/v2/account/ssh-keys", 422, {"keys": ["ssh-ed25519 AAAA\x85BBBB"]}),
    "D16": Probe("GET", "/v2/catalog/gpus", 400, params={"count": "1"}),
    "D17": Probe(
        "GET", "/v2/billing", 400, params={"lastN": "2", "startTime": "2026-06-01T00:00:00Z"}
    ),
    "D18": Probe("GET", "/v2/catalog/datacenters", 422, params={"include": ""}),
    "D19": Probe("POST", "/v2/registries/delegations", 400, {"resource": "my-bucket"}),
    "D20": Probe(
        "POST", "/v2/echo/run", 400, {"input": {}, "policy": {"ttl": 60000.0}}, in_reference=False
    ),
    "D21": Probe("POST", "/v2/echo/retry/{job}", 400, setup=_completed_job, in_reference=False),
    "D22": Probe(
        "POST",
        "/v2/pods",
        422,
        {"name": "p", "image": "i:1", "gpu": {"id": GPU}, "env": {"A=B": "1"}},
    ),
}
TESTED.update(PROBES)


@pytest.mark.parametrize("row", sorted(PROBES, key=lambda r: int(r[1:])))
def test_a_request_the_document_accepts_is_refused_by_podbook(
    row: str, emulator: Any, prism_static: PrismMock
) -> None:
    probe = PROBES[row]
    with emulator.http() as raw:
        path = probe.path.format(**(probe.setup(raw) if probe.setup else {}))
        answer = raw.request(probe.method, path, json=probe.json, params=probe.params)
    if probe.in_reference:
        mock = httpx.request(
            probe.method,
            prism_static.url + path,
            json=probe.json,
            params=probe.params,
            headers=prism_static.headers(),
        )
        violations = json.loads(mock.headers.get("sl-violations", "[]"))
        refused = [v for v in violations if v["location"][0] == "request"]
        assert not refused and not 400 <= mock.status_code < 500, f"refused: {refused}"
    assert answer.status_code == probe.status, answer.text
    body = answer.json()
    assert body.get("detail") or body.get("error"), body
