"""What no process can be started with, refused by a real emulator before anything is stored
or bound (issue 16): the request models' limits (``podbook.api.container``) on every route
that takes ``args``, ``env`` or ``ports``, and the 1 MiB of ``args`` and ``env`` re-checked on
what a pod would really start with (its template merged in, or after a PATCH).

The emulator runs pods for real (``--runtime local``): a create with 20,000 ports once blocked
its event loop for 35 s while binding public ports, and ended in a 500.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from emu_helpers import GPU, create, gpu_pod, problem, wait_status
from limit_helpers import filled_env

from podbook.api import MAX_ARG_STRING_BYTES, MAX_PORTS


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """An emulator of this module whose pods run on this machine."""
    return start_emulator(extra_args=("--runtime", "local"))


def _pod_count(http: httpx.Client) -> int:
    return len(http.get("/v2/pods").json()["pods"])


def test_a_create_with_twenty_thousand_ports_is_refused_at_once(http: httpx.Client) -> None:
    before = _pod_count(http)
    body = gpu_pod(ports=[f"{1 + i % 65535}/{('tcp', 'http')[i // 65535]}" for i in range(20_000)])
    started = time.monotonic()
    answer = http.post("/v2/pods", json=body, timeout=60)
    elapsed = time.monotonic() - started
    refused = problem(answer, 422)
    assert refused["errors"] == [
        f"$.ports: has 20,000 ports; at most {MAX_PORTS} can be exposed: remove some"
    ]
    assert elapsed < 3, f"took {elapsed:.1f} s"  # 35 s, then a 500, before
    assert _pod_count(http) == before
    assert http.get("/healthz").status_code == 200


def test_the_most_ports_a_pod_may_have_are_bound(http: httpx.Client) -> None:
    ports = [f"{port}/tcp" for port in range(9000, 9000 + MAX_PORTS)]
    pod = create(http, gpu_pod(name="many-ports", args="sleep 60", ports=ports))
    try:
        running = wait_status(http, pod["id"], "RUNNING", timeout=30)
        public = {row["private"] for row in running["runtime"]["ports"] if row["public"]}
        assert public == set(range(9000, 9000 + MAX_PORTS))
    finally:
        http.delete(f"/v2/pods/{pod['id']}")


BAD: dict[str, tuple[dict[str, Any], str]] = {
    "env name with =": ({"env": {"A=B": "1"}}, '$.env["A=B"]: a variable name cannot contain'),
    "NUL in an env value": ({"env": {"A": "1\x00"}}, "$.env.A: must not contain a NUL"),
    "NUL in args": ({"args": "sleep 1\x00"}, "$.args: must not contain a NUL"),
    "port with a newline": ({"ports": ["22/tcp\n"]}, "$.ports[0]: must be 'port/protocol'"),
    "port twice": ({"ports": ["22/tcp", "22/tcp"]}, "$.ports: '22/tcp' is listed twice"),
    "args too long": (
        {"args": "x" * (MAX_ARG_STRING_BYTES + 1)},
        "$.args: is 131,072 bytes in UTF-8",
    ),
}

ENDPOINT = {"name": "limits", "image": "me/w:1"}
CLUSTER = {
    "name": "limits",
    "type": "APPLICATION",
    "image": "i:1",
    "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
}


def _route(http: httpx.Client, route: str) -> tuple[str, str, dict[str, Any]]:
    """``(method, path, least body)`` of ``route``; makes what a PATCH needs first."""
    if route == "createPod":
        return "POST", "/v2/pods", gpu_pod(name="limits")
    if route == "updatePod":
        return "PATCH", f"/v2/pods/{create(http, gpu_pod(name='limits'))['id']}", {}
    if route == "createTemplate":
        return "POST", "/v2/templates", {"name": "limits", "image": "i:1"}
    if route == "updateTemplate":
        made = http.post("/v2/templates", json={"name": "limits-t", "image": "i:1"})
        assert made.status_code == 201, made.text
        return "PATCH", f"/v2/templates/{made.json()['id']}", {}
    if route == "createCluster":
        return "POST", "/v2/clusters", dict(CLUSTER)
    if route == "createEndpoint":
        return "POST", "/v2/serverless", dict(ENDPOINT)
    made = http.post("/v2/serverless", json=ENDPOINT)
    assert made.status_code == 201, made.text
    return "PATCH", f"/v2/serverless/{made.json()['id']}", {}


ROUTES = (
    "createPod",
    "updatePod",
    "createTemplate",
    "updateTemplate",
    "createCluster",
    "createEndpoint",
    "updateEndpoint",
)


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_refuses_what_no_process_can_start_with(http: httpx.Client, route: str) -> None:
    method, path, least = _route(http, route)
    try:
        for case, (fields, start) in BAD.items():
            answer = http.request(method, path, json={**least, **fields})
            refused = problem(answer, 422)
            assert len(refused["errors"]) == 1 and refused["errors"][0].startswith(start), case
            assert "\n" not in refused["detail"], case
    finally:
        if route == "updatePod":
            http.delete(path)


# A command that keeps the pod running, padded (a shell comment) to 120,000 bytes: with it,
# the 1 MiB can be reached within the emulator's 1 MB request bodies.
LONG_ARGS = "sleep 60 # " + "x" * (120_000 - 11)


def test_a_pod_at_the_total_limit_runs(http: httpx.Client) -> None:
    env = filled_env(LONG_ARGS, 100_000)
    names = sorted(env)
    in_template = {name: env[name] for name in names[:4]}
    in_body = {name: env[name] for name in names[4:]}
    template = http.post(
        "/v2/templates",
        json={"name": "at-the-limit", "image": "i:1", "args": LONG_ARGS, "env": in_template},
    )
    assert template.status_code == 201, template.text
    body = {"name": "at-the-limit", "templateId": template.json()["id"], "gpu": {"id": GPU}}
    pod = create(http, {**body, "env": in_body, "startJupyter": False})
    try:
        assert pod["args"] == LONG_ARGS and pod["env"] == env  # exactly 1 MiB
        wait_status(http, pod["id"], "RUNNING", timeout=30)
        time.sleep(0.5)
        assert http.get(f"/v2/pods/{pod['id']}").json()["status"] == "RUNNING"
    finally:
        http.delete(f"/v2/pods/{pod['id']}")


def test_a_patch_that_takes_the_pod_over_the_total_limit_is_refused(http: httpx.Client) -> None:
    pod = create(http, gpu_pod(name="patched", args="sleep 60", env=filled_env(LONG_ARGS, 100_000)))
    try:
        path = f"/v2/pods/{pod['id']}"
        refused = problem(http.patch(path, json={"args": LONG_ARGS + " "}), 400)
        assert refused["errors"] == [
            "$: args and env (the pod's, after this PATCH) take 1,048,577 bytes together (each"
            " string counted with its NUL and pointer, as Linux does); at most 1,048,576"
            " (1 MiB) fit: pass larger data in a file or a volume"
        ]
        assert http.get(path).json()["args"] == "sleep 60"
        at_the_limit = http.patch(path, json={"args": LONG_ARGS})
        assert at_the_limit.status_code == 200, at_the_limit.text
    finally:
        http.delete(f"/v2/pods/{pod['id']}")


def test_a_body_that_its_template_takes_over_the_total_limit_is_refused(
    http: httpx.Client,
) -> None:
    half = {f"T{i}": "t" * 100_000 for i in range(6)}
    template = http.post("/v2/templates", json={"name": "half", "image": "i:1", "env": half})
    assert template.status_code == 201, template.text
    template_id = template.json()["id"]
    before = _pod_count(http)
    body = {
        "name": "over",
        "templateId": template_id,
        "gpu": {"id": GPU},
        "env": {f"B{i}": "b" * 100_000 for i in range(6)},
    }
    refused = problem(http.post("/v2/pods", json=body), 400)
    assert refused["errors"][0].startswith(
        f"$: args and env (with template {template_id!r}'s) take 1,2"
    )
    assert _pod_count(http) == before
    body["env"] = {"T0": "body wins", "B": "b"}  # the body's value replaces the template's
    pod = create(http, body)
    http.delete(f"/v2/pods/{pod['id']}")
    assert pod["env"]["T0"] == "body wins"
