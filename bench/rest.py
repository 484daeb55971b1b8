"""REST benchmark on loopback: podbook's client and emulator against their baselines.

Run: ``.venv/bin/python bench/rest.py`` (about a minute). It starts its own emulator process
on a free loopback port with a temporary database, and a trivial ASGI app served by uvicorn
with the emulator's settings, then prints each figure beside its comparison, the ratio, and
the target of issue 2 §6:

- a pod read (``GET /v2/pods/{id}``): requests/s, p50 and p99 through ``podbook.Client``,
  through bare httpx, and against the trivial app (same response bytes, so the HTTP work is
  equal and the difference is what the emulator does);
- the p50 of listing 1,000 pods (``GET /v2/pods``), through the client and bare httpx;
- the emulator's resident memory holding 1,000 pods (psutil);
- the panel path, in process and in CPU time: parsing that list into 1,000 ``Pod``s and
  dumping them back to wire dicts as a panel refresh does, beside the same pod record built
  from plain pydantic models (a model per nested leaf instead of ``@response_record``
  dataclasses), against the targets of issue 12.

Reads are sequential, each side on its own keep-alive connection (the client and the server
share the machine's cores). A breakdown after the table says where the time goes when a target is
missed: HTTP round trip, JSON decoding and pydantic validation, measured in process.

Fairness: the client and bare httpx each use one ``httpx.Client`` (one keep-alive
connection), are warmed up before timing, and are timed alternately, request by request, so
that load from other processes falls on both alike; medians over all requests are compared.
An in-process replay of the same responses (no network, no server) gives the client's own
cost without any scheduling noise.
"""

from __future__ import annotations

import argparse
import functools
import json
import operator
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from _common import (
    Timing,
    account_quota,
    emulator,
    free_port,
    stop_group,
    verdict,
    wait_answering,
    wait_until,
)

HOLD_PODS = 1000
BIG_QUOTA = account_quota(100_000_000)

TARGET_CLIENT_OVERHEAD = 0.15  # the client adds at most 15% over bare httpx
TARGET_EMULATOR_SHARE = 0.50  # the emulator reaches at least 50% of the trivial app's rate
TARGET_LIST_MS = 50.0  # listing 1,000 pods takes at most 50 ms
TARGET_RSS_MB = 150.0  # the emulator holds 1,000 pods in at most 150 MB
TARGET_DUMP_MS = 16.0  # dumping 1,000 pods for a panel refresh: at most 16 ms (issue 12)
TARGET_PARSE_MS = 26.0  # ... while their parse keeps its gain over plain models: ≤ 26 ms


# --- timing ----------------------------------------------------------------------------------


def measure(call: Callable[[], object], count: int, warmup: int) -> Timing:
    """Run ``call`` ``warmup`` times untimed, then ``count`` times timed one by one."""
    for _ in range(warmup):
        call()
    clock = time.perf_counter
    seconds = []
    for _ in range(count):
        started = clock()
        call()
        seconds.append(clock() - started)
    return Timing(seconds)


# --- processes -------------------------------------------------------------------------------


TRIVIAL_APP = """
import sys, uvicorn
pod, pods = open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()

def headers(body):
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = pods if scope["path"] == "/v2/pods" else pod
    await send({"type": "http.response.start", "status": 200, "headers": headers(body)})
    await send({"type": "http.response.body", "body": body})

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_config=None, access_log=False,
            server_header=False, date_header=False, lifespan="off")
"""


@contextmanager
def trivial_app(workdir: Path, pod: bytes, pods: bytes) -> Iterator[str]:
    """A trivial ASGI app under uvicorn, configured like the emulator, answering fixed bytes:
    ``pods`` at ``/v2/pods`` and ``pod`` at every other path."""
    pod_path, pods_path = workdir / "trivial-pod.json", workdir / "trivial-pods.json"
    pod_path.write_bytes(pod)
    pods_path.write_bytes(pods)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", TRIVIAL_APP, str(port), str(pod_path), str(pods_path)],
        stdout=subprocess.DEVNULL,
        stderr=(workdir / "trivial.log").open("wb"),
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_answering(proc, url + "/", workdir / "trivial.log", "the trivial app", 30)
        yield url
    finally:
        stop_group(proc)


# --- report ----------------------------------------------------------------------------------


def row(label: str, timing: Timing) -> str:
    """One line of the read table."""
    return f"  {label:<34} {timing.rate:>9.0f} req/s   p50 {timing.p50:6.3f} ms   p99 {timing.p99:6.3f} ms"


def create_pods(http: httpx.Client, count: int) -> list[str]:
    """Create ``count`` GPU pods through the REST API; their ids."""
    ids = []
    for index in range(count):
        response = http.post(
            "/v2/pods",
            json={
                "name": f"bench-{index:04d}",
                "image": "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
                "gpu": {"id": "NVIDIA GeForce RTX 4090"},
                "ports": ["8888/http", "22/tcp"],
                "env": {"MODEL_NAME": "llama-3", "BATCH": str(index)},
                "disk": 50,
            },
        )
        response.raise_for_status()
        ids.append(response.json()["id"])
    return ids


def client_cpu(
    body: bytes,
    list_body: bytes,
    headers: dict[str, str],
    path: str,
    pod_id: str,
    reads: int,
    lists: int,
) -> dict[str, float]:
    """Median seconds per pod read and per list of bare httpx and of ``podbook.Client``, both
    replaying the emulator's recorded responses through an in-process transport: no network,
    no server, so the difference is exactly what the client adds (request building,
    rate-limit headers, error mapping, pydantic validation)."""
    from podbook import Client

    def replay(request: httpx.Request) -> httpx.Response:
        content = list_body if request.url.path == "/v2/pods" else body
        return httpx.Response(200, headers=headers, content=content)

    transport = httpx.MockTransport(replay)
    base = "http://replay.invalid"
    bare = httpx.Client(base_url=base, transport=transport, headers={"Authorization": "Bearer k"})
    client = Client(api_key="k", rest_url=base, queue_url=base, v1_url=base, transport=transport)
    try:
        runs = interleaved(
            {"bare": lambda: bare.get(path).json(), "client": lambda: client.pods.get(pod_id)},
            reads,
            200,
            3,
        )
        list_runs = interleaved(
            {"bare": lambda: bare.get("/v2/pods").json(), "client": client.pods.list},
            lists,
            3,
            3,
        )
    finally:
        bare.close()
        client.close()
    return {
        "bare": statistics.median(runs["bare"].seconds),
        "client": statistics.median(runs["client"].seconds),
        "bare_list": statistics.median(list_runs["bare"].seconds),
        "client_list": statistics.median(list_runs["client"].seconds),
    }


def interleaved(
    calls: dict[str, Callable[[], object]],
    count: int,
    warmup: int,
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Timing]:
    """Time each call ``rounds * count`` times, alternating request by request (in a rotating
    order), so that load from the rest of the machine falls on every call alike; a load
    spike then widens every distribution instead of penalizing whichever call ran in it.
    Each call is warmed up ``warmup`` times first. ``clock``: wall time by default;
    ``time.process_time`` counts only this process's CPU time (for work done in process)."""
    names = list(calls)
    for name in names:
        for _ in range(warmup):
            calls[name]()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds * count):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            call = calls[name]
            started = clock()
            call()
            seconds[name].append(clock() - started)
    return {name: Timing(values) for name, values in seconds.items()}


# --- the panel path ------------------------------------------------------------------------


def plain_model_twin(model: type[Any]) -> type[Any]:
    """``model`` rebuilt with every ``@response_record`` leaf in its fields, at any depth, as
    a plain :class:`ResponseModel`: the pod record as it was before its leaves became
    dataclasses, built from the same field declarations (no second copy of the schema)."""
    from pydantic import create_model
    from pydantic.dataclasses import is_pydantic_dataclass

    from podbook.api import ResponseModel

    def twin(annotation: Any) -> Any:
        args = typing.get_args(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            return functools.reduce(operator.or_, map(twin, args))
        if typing.get_origin(annotation) is list:
            return list[twin(args[0])]  # type: ignore[misc]
        return rebuilt(annotation) if is_pydantic_dataclass(annotation) else annotation

    @functools.cache
    def rebuilt(cls: type[Any], base: type[Any] = ResponseModel) -> type[Any]:
        fields = {
            name: (twin(field.annotation), ... if field.is_required() else field.default)
            for name, field in cls.__pydantic_fields__.items()
        }
        return create_model(cls.__name__, __base__=base, **fields)  # type: ignore[call-overload]

    return rebuilt(model, model.__base__)


@dataclass(frozen=True)
class PanelPath:
    """Median ms to parse a 1,000-pod list body and to dump its pods to wire dicts, for the
    current pod record and for its plain-model twin."""

    parse: float
    dump: float
    plain_parse: float
    plain_dump: float


def panel_path(list_bytes: bytes, count: int, rounds: int) -> PanelPath:
    """Time, alternating the two records call by call, what a panel refresh does with a list
    of pods: the client's parse from bytes (collector paused, as the client does) and the
    dump of every pod to its wire dict, as ``podbook.notebook.panels.data.to_wire`` does
    for a model (its dump alone: the notebook package, with anywidget, stays out of this
    process)."""
    from podbook.api import Pod
    from podbook.client.resources.base import ListParser

    def to_wire(pod: Any) -> dict[str, Any]:
        return pod.model_dump(mode="json", by_alias=True)

    current, plain = ListParser(Pod, "pods"), ListParser(plain_model_twin(Pod), "pods")
    pods, plain_pods = current.from_json(list_bytes), plain.from_json(list_bytes)
    timings = interleaved(
        {
            "parse": lambda: current.from_json(list_bytes),
            "plain_parse": lambda: plain.from_json(list_bytes),
            "dump": lambda: [to_wire(pod) for pod in pods],
            "plain_dump": lambda: [to_wire(pod) for pod in plain_pods],
        },
        count,
        3,
        rounds,
        clock=time.process_time,  # CPU time: other processes' load does not count
    )
    return PanelPath(**{name: timing.p50 for name, timing in timings.items()})


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=2000, help="timed pod reads per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --reads / --lists")
    parser.add_argument("--lists", type=int, default=30, help="timed lists of 1,000 pods per round")
    args = parser.parse_args(argv)

    from pydantic import TypeAdapter

    from podbook import Client
    from podbook.api import Pod
    from podbook.client.resources.base import list_parser, model_parser

    load_before = os.getloadavg()[0]
    quick = ["--provision-seconds", "0.2", "--start-seconds", "0.2", *BIG_QUOTA]
    with tempfile.TemporaryDirectory(prefix="podbook-bench-") as tmp:
        workdir = Path(tmp)
        with emulator(workdir, quick) as emu:
            url, api_key = emu.url, emu.api_key
            auth = {"Authorization": f"Bearer {api_key}"}
            http = httpx.Client(base_url=url, headers=auth, timeout=30)
            client = Client(api_key=api_key, rest_url=url, queue_url=url, v1_url=url)
            baseline_mb = emu.resident_mb()

            started = time.perf_counter()
            ids = create_pods(http, HOLD_PODS)
            create_seconds = time.perf_counter() - started
            pod_id = ids[0]
            client.pods.wait_for(pod_id, "RUNNING", timeout=30)
            wait_until(
                lambda: all(p.status == "RUNNING" for p in client.pods.list()), 30, "1,000 pods"
            )
            pod_path = f"/v2/pods/{pod_id}"
            pod_response = http.get(pod_path)
            pod_bytes, pod_headers = pod_response.content, dict(pod_response.headers)
            list_bytes = http.get("/v2/pods").content
            assert len(client.pods.list()) == HOLD_PODS

            with trivial_app(workdir, pod_bytes, list_bytes) as trivial_url:
                trivial = httpx.Client(base_url=trivial_url, headers=auth, timeout=30)

                def read(on: httpx.Client, path: str, decode: bool = True) -> Callable[[], object]:
                    def call() -> object:
                        response = on.get(path)
                        response.raise_for_status()
                        return response.json() if decode else response.content

                    return call

                warm = min(200, args.reads)
                r = interleaved(
                    {
                        "client": lambda: client.pods.get(pod_id),
                        "bare": read(http, pod_path),
                        "trivial": read(trivial, pod_path),
                    },
                    args.reads,
                    warm,
                    args.rounds,
                )
                lists = interleaved(
                    {
                        "client": lambda: client.pods.list(),
                        "bare": read(http, "/v2/pods"),
                        "bare_bytes": read(http, "/v2/pods", decode=False),
                        "trivial_bytes": read(trivial, "/v2/pods", decode=False),
                    },
                    args.lists,
                    5,
                    args.rounds,
                )
                trivial.close()
            held_mb = emu.resident_mb()
            client.close()
            http.close()

    # In process: what the client does with a body (pydantic-core validating the bytes, the
    # garbage collector paused for large bodies), and the older way (json.loads, then pydantic
    # on the dicts) for comparison.
    pod_parser = model_parser(Pod)
    list_reader = list_parser(Pod, "pods")
    pods_adapter = TypeAdapter(list[Pod])
    decoded_pod = json.loads(pod_bytes)
    decoded_list = json.loads(list_bytes)["pods"]
    decode_pod = measure(lambda: json.loads(pod_bytes), 2000, 100)
    parse_pod = measure(lambda: pod_parser.from_json(pod_bytes), 2000, 100)
    validate_pod = measure(lambda: Pod.model_validate(decoded_pod), 2000, 100)
    decode_list = measure(lambda: json.loads(list_bytes), 10, 2)
    parse_list = measure(lambda: list_reader.from_json(list_bytes), 20, 3)
    validate_list = measure(lambda: pods_adapter.validate_python(decoded_list), 10, 2)
    replayed = client_cpu(
        pod_bytes, list_bytes, pod_headers, pod_path, pod_id, reads=2000, lists=args.lists
    )
    cpu_bare, cpu_client = replayed["bare"], replayed["client"]
    panel = panel_path(list_bytes, args.lists, args.rounds)
    load_after = os.getloadavg()[0]

    rc, rb, rt = r["client"], r["bare"], r["trivial"]
    overhead_rate = rb.rate / rc.rate - 1
    overhead_p50 = rc.p50 / rb.p50 - 1
    share = rb.rate / rt.rate
    lc, lb = lists["client"], lists["bare"]
    lbb, ltb = lists["bare_bytes"], lists["trivial_bytes"]
    print(
        f"podbook REST benchmark: loopback, {os.cpu_count()} cores, Python"
        f" {sys.version.split()[0]}; load average {load_before:.1f} before, {load_after:.1f} after"
    )
    print(
        f"pod read (GET /v2/pods/{{id}}, {len(pod_bytes)} B), sequential, alternating request by"
        f" request, {args.rounds * args.reads} each:"
    )
    print(row("podbook Client → emulator", rc))
    print(row("bare httpx → emulator", rb))
    print(row("bare httpx → trivial ASGI app", rt))
    print(
        f"  client overhead over bare httpx: {overhead_p50:+.1%} at p50 ({overhead_rate:+.1%} in"
        f" req/s, which load spikes from other processes distort)"
        f"   target ≤ +{TARGET_CLIENT_OVERHEAD:.0%}   {verdict(overhead_p50 <= TARGET_CLIENT_OVERHEAD)}"
    )
    print(
        f"  emulator / trivial app: {rb.rate:.0f} / {rt.rate:.0f} req/s = {share:.0%}"
        f"   target ≥ {TARGET_EMULATOR_SHARE:.0%}   {verdict(share >= TARGET_EMULATOR_SHARE)}"
    )
    print(
        f"list {HOLD_PODS:,} pods (GET /v2/pods, {len(list_bytes) / 1e6:.2f} MB), sequential,"
        f" alternating, {args.rounds * args.lists} each:"
    )
    print(f"  podbook Client → emulator        p50 {lc.p50:7.1f} ms   p99 {lc.p99:7.1f} ms")
    print(f"  bare httpx + .json() → emulator  p50 {lb.p50:7.1f} ms   p99 {lb.p99:7.1f} ms")
    print(f"  bare httpx bytes → emulator      p50 {lbb.p50:7.1f} ms   p99 {lbb.p99:7.1f} ms")
    print(f"  bare httpx bytes → trivial app   p50 {ltb.p50:7.1f} ms   p99 {ltb.p99:7.1f} ms")
    print(
        f"  client / bare httpx: {lc.p50 / lb.p50:.2f}x;  client p50 {lc.p50:.1f} ms"
        f"   target ≤ {TARGET_LIST_MS:.0f} ms   {verdict(lc.p50 <= TARGET_LIST_MS)}"
    )
    print(
        f"emulator resident memory holding {HOLD_PODS:,} pods: {held_mb:.0f} MB (at start"
        f" {baseline_mb:.0f} MB, +{held_mb - baseline_mb:.0f} MB)   target ≤ {TARGET_RSS_MB:.0f} MB"
        f"   {verdict(held_mb <= TARGET_RSS_MB)}"
    )
    print("where the time goes (p50; the in-process figures are measured in this process):")
    print(
        f"  pod read: HTTP round trip to the trivial app {rt.p50 * 1000:.0f} µs; emulator work"
        f" {(rb.p50 - rt.p50) * 1000:+.0f} µs; client over bare httpx {(rc.p50 - rb.p50) * 1000:+.0f}"
        f" µs; the client's parse from bytes {parse_pod.p50 * 1000:.0f} µs vs bare httpx's"
        f" json.loads {decode_pod.p50 * 1000:.0f} µs (json.loads + Pod.model_validate"
        f" {(decode_pod.p50 + validate_pod.p50) * 1000:.0f} µs)"
    )
    emulator_ms = lbb.p50 - ltb.p50
    print(
        f"  list: HTTP transfer of {len(list_bytes) / 1e6:.2f} MB {ltb.p50:.1f} ms; emulator work"
        f" {emulator_ms:.1f} ms; client's own work (client - bare bytes) {lc.p50 - lbb.p50:.1f} ms,"
        f" of which the parse from bytes into 1,000 Pods {parse_list.p50:.1f} ms"
    )
    print(
        f"  list: bare httpx's json.loads {decode_list.p50:.1f} ms; the older way, json.loads then"
        f" pydantic on the dicts with the collector running, {decode_list.p50 + validate_list.p50:.1f} ms"
    )
    print(
        f"  client CPU per pod read, replaying the emulator's response in process (no network):"
        f" bare httpx {cpu_bare * 1e6:.0f} µs, podbook Client {cpu_client * 1e6:.0f} µs,"
        f" extra {(cpu_client - cpu_bare) * 1e6:.0f} µs = {(cpu_client - cpu_bare) / (rb.p50 / 1000):.0%}"
        f" of the bare round trip"
    )
    print(
        f"  client per list of {HOLD_PODS:,} pods, replayed in process (no network, no emulator):"
        f" bare httpx + .json() {replayed['bare_list'] * 1e3:.1f} ms, podbook Client"
        f" {replayed['client_list'] * 1e3:.1f} ms ({replayed['client_list'] / replayed['bare_list']:.2f}x)"
    )
    print(
        f"panel path, in process, {HOLD_PODS:,} pods, CPU time, alternating call by call,"
        f" {args.rounds * args.lists} each (plain = a pydantic model per nested leaf):"
    )
    print(
        f"  parse the list from bytes   p50 {panel.parse:6.1f} ms   plain models {panel.plain_parse:6.1f} ms"
        f" ({panel.parse / panel.plain_parse:.2f}x)   target ≤ {TARGET_PARSE_MS:.0f} ms"
        f" and faster than plain   {verdict(panel.parse <= TARGET_PARSE_MS and panel.parse < panel.plain_parse)}"
    )
    print(
        f"  dump every pod to its wire  p50 {panel.dump:6.1f} ms   plain models {panel.plain_dump:6.1f} ms"
        f" ({panel.dump / panel.plain_dump:.2f}x)   target ≤ {TARGET_DUMP_MS:.0f} ms"
        f" (the plain models' figure in issue 12)   {verdict(panel.dump <= TARGET_DUMP_MS)}"
    )
    print(f"  (creating {HOLD_PODS:,} pods through the API took {create_seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
