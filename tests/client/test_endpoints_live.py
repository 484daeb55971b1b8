"""``client.endpoints`` against a real emulator: create, list, get, update, delete, workers,
releases; strict requests, problem+json errors, persistence, and a delete that cancels jobs."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from podbook.api.endpoints import Endpoint
from podbook.api.secrets import MASK
from podbook.client import AsyncClient, Client
from podbook.errors import BadRequest, Conflict, InvalidRequest, NotFound

FAST_BROKER = ("--worker-poll-seconds", "0.5", "--worker-gone-seconds", "3")


@pytest.fixture(scope="module")
def emu(start_emulator: Callable[..., Any]) -> Any:
    """An emulator of this module's own (it is restarted)."""
    return start_emulator(extra_args=FAST_BROKER)


def _client(emu: Any) -> Client:
    return Client(api_key=emu.api_key, rest_url=emu.url, queue_url=emu.url, v1_url=emu.url)


@pytest.fixture
def client(emu: Any) -> Iterator[Client]:
    """Account A's client on the module's emulator."""
    with _client(emu) as c:
        yield c


def _name(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def _wait_for(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


class Worker:
    """A bare worker speaking the worker protocol (take a job, wait for stop signals)."""

    def __init__(self, emu: Any, endpoint_id: str, worker_id: str) -> None:
        with emu.http() as http:
            key = http.post(f"/v2/serverless/{endpoint_id}/worker-keys").json()["workerKey"]
        self.http = httpx.Client(base_url=emu.url, headers={"Authorization": key}, timeout=30)
        self.base = f"/v2/{endpoint_id}"
        self.worker_id = worker_id

    def take(self) -> httpx.Response:
        return self.http.get(f"{self.base}/job-take/{self.worker_id}?job_in_progress=0")

    def stops(self) -> httpx.Response:
        return self.http.get(f"{self.base}/job-stop/{self.worker_id}")

    def close(self) -> None:
        self.http.close()


def test_create_list_get_typed(client: Client) -> None:
    name = _name("crud")
    created = client.endpoints.create(
        name=name, image="me/worker:1", workers={"min": 0, "max": 2}, env={"MODEL": "small"}
    )
    assert isinstance(created, Endpoint)
    assert created.id == name and created.name == name and created.type == "QUEUE"
    assert created.image == "me/worker:1" and created.workers["max"] == 2
    assert created.version == 1 and created.created_at
    listed = {e.id: e for e in client.endpoints.list()}
    assert name in listed and "echo" in listed
    assert "releases" not in listed[name].model_dump(by_alias=True)
    got = client.endpoints.get(created)  # an object with .id works too
    assert got.env == {"MODEL": "small"}
    history = client.endpoints.releases(name)
    assert history.endpoint_version == 1 and len(history.releases) == 1
    fields = {entry.field: entry.new for entry in history.releases[0].diff}
    assert fields["image"] == "me/worker:1" and fields["env.MODEL"] == "small"


def test_update_changes_only_given_fields_and_records_releases(client: Client) -> None:
    name = _name("upd")
    client.endpoints.create(name=name, image="me/worker:1", workers={"max": 3}, env={"A": "1"})
    renamed = client.endpoints.update(name, name="renamed", workers={"min": 1})
    assert renamed.name == "renamed" and renamed.id == name
    assert renamed.workers["min"] == 1 and renamed.workers["max"] == 3  # merged
    assert renamed.image == "me/worker:1" and renamed.version == 1  # no config change
    assert len(client.endpoints.releases(name).releases) == 1

    changed = client.endpoints.update(
        name, image="me/worker:2", env={"A": "2", "HF_TOKEN": "hf_secret_value"}
    )
    assert changed.version == 2 and changed.env == {"A": "2", "HF_TOKEN": "hf_secret_value"}
    history = client.endpoints.releases(name)
    assert history.endpoint_version == 2
    newest, first = history.releases
    assert newest.version == 2 and first.version == 1 and newest.source == "MANUAL"
    diff = {entry.field: (entry.old, entry.new) for entry in newest.diff}
    assert diff["image"] == ("me/worker:1", "me/worker:2")
    assert diff["env.A"] == ("1", "2")
    assert diff["env.HF_TOKEN"] == (None, MASK)  # a secret never lands in the history
    assert "hf_secret_value" not in history.model_dump_json()


def test_requests_are_strict_and_errors_are_problems(emu: Any, client: Client) -> None:
    name = _name("strict")
    client.endpoints.create(name=name)
    with pytest.raises(InvalidRequest, match="bogus"):  # refused before sending
        client.endpoints.update(name, bogus=1)
    with pytest.raises(InvalidRequest, match="min"):
        client.endpoints.update(name, workers={"min": 3, "max": 1})
    with pytest.raises(InvalidRequest, match="queue_delay|queueDelay"):
        client.endpoints.update(name, scaling={"type": "QUEUE_DELAY"})
    with pytest.raises(InvalidRequest, match="null"):
        client.endpoints.update(name, image=None)
    with emu.http() as http:
        raw = http.patch(f"/v2/serverless/{name}", json={"type": "QUEUE"})
        assert raw.status_code == 422
        assert raw.headers["content-type"].startswith("application/problem+json")
        assert any("'type' not allowed" in line for line in raw.json()["errors"])
        raw = http.patch(f"/v2/serverless/{name}", json={"workers": {"min": 9}})  # max is 3
        assert raw.status_code == 400 and "min" in raw.json()["detail"]
    with pytest.raises(BadRequest, match="timeout"):
        client.endpoints.update(name, timeout=10)
    with pytest.raises(NotFound):
        client.endpoints.update("no-such-" + secrets.token_hex(3), name="x")
    with pytest.raises(NotFound):
        client.endpoints.workers("no-such-" + secrets.token_hex(3))
    with pytest.raises(Conflict, match="built-in"):
        client.endpoints.update("echo", image="x/y:1")
    with pytest.raises(BadRequest, match="handler"):
        client.endpoints.update(name, handler="/no/such/handler.py")


def test_workers_and_rollout(emu: Any, client: Client) -> None:
    name = _name("wrk")
    client.endpoints.create(name=name, image="me/worker:1")
    assert client.endpoints.workers(name).summary.total == 0
    job = client.endpoint(name).run({"n": 1})
    worker = Worker(emu, name, "w-one")
    try:
        assert worker.take().json()["id"] == job.id
        listing = client.endpoints.workers(name)
        assert [(w.id, w.status, w.is_stale) for w in listing.workers] == [
            ("w-one", "RUNNING", False)
        ]
        assert listing.summary.running == 1 and listing.endpoint_version == 1
        client.endpoints.update(name, image="me/worker:2")
        stale = client.endpoints.workers(name)
        assert stale.endpoint_version == 2 and stale.workers[0].is_stale
        rollout = client.endpoints.releases(name).rollout
        assert rollout.in_progress and rollout.workers_total == 1
        assert rollout.percent_on_latest == 0
    finally:
        worker.close()


def test_delete_cancels_queued_and_running_jobs(emu: Any, client: Client) -> None:
    name = _name("del")
    client.endpoints.create(name=name)
    running = client.endpoint(name).run({"job": "running"})
    worker = Worker(emu, name, "w-del")
    stops: list[httpx.Response] = []
    try:
        assert worker.take().json()["id"] == running.id
        # a job-stop request is a long poll of --worker-poll-seconds: asked again until the
        # stop arrives (a loaded run saw the first poll end empty before the delete)
        waiter = threading.Thread(
            target=lambda: stops.append(
                _wait_for(lambda: (r := worker.stops()).status_code != 204 and r, timeout=30)
            )
        )
        waiter.start()
        held: list[Any] = []
        sync_call = threading.Thread(
            target=lambda: held.append(
                _client(emu).endpoint(name).runsync({"job": "queued"}, wait=60_000)
            )
        )
        sync_call.start()
        assert _wait_for(lambda: client.endpoint(name).health().jobs.in_queue == 1)
        client.endpoints.delete(name)
        sync_call.join(30)
        waiter.join(30)
        assert held and held[0].record.status == "CANCELLED"  # the queued job ended CANCELLED
        assert stops and running.id in stops[0].text  # the running job's worker was told
        with pytest.raises(NotFound):
            client.endpoints.get(name)
        with pytest.raises(NotFound):
            client.endpoints.delete(name)
    finally:
        worker.close()


def test_releases_survive_a_restart(emu: Any) -> None:
    name = _name("keep")
    with _client(emu) as client:
        client.endpoints.create(name=name, image="me/worker:1")
        client.endpoints.update(name, image="me/worker:2", timeout=60_000)
    emu.restart()
    with _client(emu) as client:
        endpoint = client.endpoints.get(name)
        assert endpoint.image == "me/worker:2" and endpoint.timeout == 60_000
        history = client.endpoints.releases(name)
        assert [r.version for r in history.releases] == [2, 1]


@pytest.mark.anyio
async def test_async_face(emu: Any) -> None:
    name = _name("async")
    async with AsyncClient(
        api_key=emu.api_key, rest_url=emu.url, queue_url=emu.url, v1_url=emu.url
    ) as client:
        created = await client.endpoints.create(name=name, image="me/a:1")
        assert created.id == name
        assert name in {e.id for e in await client.endpoints.list()}
        updated = await client.endpoints.update(name, image="me/a:2")
        assert updated.version == 2 and (await client.endpoints.get(name)).image == "me/a:2"
        assert len((await client.endpoints.releases(name)).releases) == 2
        assert (await client.endpoints.workers(name)).summary.total == 0
        await client.endpoints.delete(name)
        with pytest.raises(NotFound):
            await client.endpoints.get(name)


def test_a_new_handler_is_a_release_and_serves_the_next_jobs(client: Client, tmp_path: Any) -> None:
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text("def handler(job):\n    return 'first'\n")
    second.write_text("def handler(job):\n    return 'second'\n")
    name = _name("hnd")
    client.endpoints.create(name=name, handler=f"{first}:handler")
    try:
        assert client.endpoint(name).runsync({}, wait=120_000).output() == "first"
        updated = client.endpoints.update(name, handler=f"{second}:handler")
        assert updated.version == 2
        diff = client.endpoints.releases(name).releases[0].diff
        assert [(d.field, d.new) for d in diff] == [("handler", f"{second.resolve()}:handler")]
        assert client.endpoint(name).runsync({}, wait=120_000).output() == "second"
    finally:
        client.endpoints.delete(name)


def test_worker_logs_backfill_follow_and_end(emu: Any, client: Client) -> None:
    name = _name("logs")
    client.endpoints.create(name=name)
    job = client.endpoint(name).run({"n": 1})
    worker = Worker(emu, name, "w-log")
    try:
        assert worker.take().json()["id"] == job.id
        with client.endpoints.worker_logs(name, "w-log") as stream:
            lines = [line.line for line in stream]
        assert lines[0].startswith("worker w-log connected") and f"job {job.id} started" in lines
        with client.endpoints.worker_logs(name, "w-log", tail=1) as stream:
            assert [line.line for line in stream] == [f"job {job.id} started"]
        seen: list[str] = []
        follow = client.endpoints.worker_logs(name, "w-log", tail=0, follow=True)

        def read() -> None:
            for line in follow:
                seen.append(line.line)

        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(0.5)  # the follow request is open (lines arriving before it are backfilled)
        client.endpoint(name).cancel(job.id)
        assert _wait_for(lambda: f"job {job.id} ended CANCELLED" in seen)
        assert f"told to stop job {job.id}" in seen
        client.endpoints.delete(name)  # the worker goes with its endpoint: the stream ends
        reader.join(30)
        assert not reader.is_alive()
        follow.close()
    finally:
        worker.close()
    with pytest.raises(NotFound):
        list(client.endpoints.worker_logs("echo", "no-such-worker"))
    with pytest.raises(InvalidRequest, match="tail"):
        client.endpoints.worker_logs("echo", "w", tail=-1)


def test_async_endpoints_mirror_the_sync_ones() -> None:
    import inspect

    sync = Client(api_key="k", url="http://127.0.0.1:9")
    async_ = AsyncClient(api_key="k", url="http://127.0.0.1:9")
    names = {m for m in dir(sync.endpoints) if not m.startswith("_")}
    assert names == {m for m in dir(async_.endpoints) if not m.startswith("_")}
    assert {"create", "list", "get", "update", "delete", "workers", "releases"} < names
    for method in names - {"worker_logs"}:  # worker_logs gives an async iterator
        assert inspect.iscoroutinefunction(getattr(async_.endpoints, method)), method
    assert hasattr(async_.endpoints.worker_logs("ep", "w"), "__aiter__")
    sync.close()
