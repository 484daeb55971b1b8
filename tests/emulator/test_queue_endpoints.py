"""``/v2/serverless``: creating, listing, reading and deleting queue endpoints; worker keys."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
import pytest
from test_queue_helpers import RawWorker, create_endpoint, queue_emulator, run, worker_key


@pytest.fixture(scope="module")
def emu(start_emulator: Any) -> Any:
    """One emulator for this module."""
    return queue_emulator(start_emulator)


def test_create_uses_the_name_as_id_when_free(http: httpx.Client) -> None:
    name = "demo-" + secrets.token_hex(3)
    response = http.post("/v2/serverless", json={"name": name, "timeout": 30_000})
    assert response.status_code == 201
    record = response.json()
    assert record["id"] == name and record["name"] == name
    assert record["type"] == "QUEUE" and record["timeout"] == 30_000
    for field in ("workers", "scaling", "dataCenterIds", "networkVolumes", "flashboot"):
        assert field in record
    assert record["createdAt"].endswith("Z")
    assert http.get(f"/v2/{name}/health").status_code == 200
    # Taken (or not URL-safe) names get a generated id.
    again = http.post("/v2/serverless", json={"name": name}).json()
    assert again["id"] != name and again["id"].startswith("ep_") and again["name"] == name
    spaced = http.post("/v2/serverless", json={"name": "my endpoint"}).json()
    assert spaced["id"].startswith("ep_")


def test_builtins_are_listed_for_every_account(emu: Any, http: httpx.Client) -> None:
    name = create_endpoint(http, "listed-" + secrets.token_hex(3))
    ids = [e["id"] for e in http.get("/v2/serverless").json()["endpoints"]]
    assert ids[:2] == ["echo", "stream-demo"] and name in ids
    with emu.http(emu.other_key) as other:
        other_ids = [e["id"] for e in other.get("/v2/serverless").json()["endpoints"]]
        assert other_ids[:2] == ["echo", "stream-demo"] and name not in other_ids
        assert other.get(f"/v2/serverless/{name}").status_code == 404


def test_get_and_delete(emu: Any, http: httpx.Client) -> None:
    name = create_endpoint(http, "gone-" + secrets.token_hex(3))
    assert http.get(f"/v2/serverless/{name}").json()["id"] == name
    job_id = run(http, name, {"input": {}})
    key = worker_key(http, name)
    assert http.delete(f"/v2/serverless/{name}").status_code == 204
    assert http.get(f"/v2/serverless/{name}").status_code == 404
    assert http.get(f"/v2/{name}/status/{job_id}").status_code == 404
    worker = RawWorker(emu.url, name, key)
    assert worker.take().status_code == 401  # its keys went with it
    worker.close()
    missing = http.delete(f"/v2/serverless/{name}")
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("application/problem+json")


def test_builtins_cannot_be_deleted(http: httpx.Client) -> None:
    response = http.delete("/v2/serverless/echo")
    assert response.status_code == 409 and "built-in" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({}, "$.name"),
        ({"name": "x", "bogus": 1}, "$.bogus: unknown property"),
        ({"name": "x", "timeout": 10}, "$.timeout"),
        ({"name": "x", "type": "SOMETHING"}, "$.type"),
        (
            {"name": "x", "type": "LOAD_BALANCER", "handler": "podbook.worker.builtins:echo"},
            "$.handler",
        ),
        ({"name": "x", "handler": "/no/such/handler.py"}, "$.handler"),
        ({"name": "x", "handler": "not a spec"}, "$.handler"),
    ],
)
def test_invalid_create_bodies_are_422(http: httpx.Client, body: dict, fragment: str) -> None:
    response = http.post("/v2/serverless", json=body)
    assert response.status_code == 422
    assert any(fragment in line for line in response.json()["errors"])


def test_handler_file_is_stored_absolute(http: httpx.Client, tmp_path: Any) -> None:
    handler = tmp_path / "handler.py"
    handler.write_text("def handler(job):\n    return job['input']\n")
    record = http.post(
        "/v2/serverless",
        json={"name": "h-" + secrets.token_hex(3), "handler": f"{handler}:handler"},
    ).json()
    assert record["handler"] == f"{handler.resolve()}:handler"


def test_worker_keys_need_a_full_key(emu: Any, http: httpx.Client) -> None:
    name = create_endpoint(http, "wk-" + secrets.token_hex(3))
    with emu.http(emu.readonly_key) as readonly:
        assert readonly.post(f"/v2/serverless/{name}/worker-keys").status_code == 403
    assert http.post("/v2/serverless/nope-nope/worker-keys").status_code == 404
    first, second = worker_key(http, name), worker_key(http, name)
    assert first != second
