#!/usr/bin/env python3
"""Conformance and fuzzing of the emulator with schemathesis.

Two passes against a real emulator process:

- REST: the public reference document (``reference/runpod-rest-v2.openapi.json``,
  or ``--reference``) with base URL = the emulator and ``Authorization: Bearer <key>``.
- queue: the emulator's own document of its queue routes (``GET /openapi/queue.json``).

Checks: no 5xx, status codes and content types as documented, responses valid against
their schema, schema-violating requests refused with a documented status (a problem+json
body on REST, ``{"error": ...}`` on the queue), a missing key refused with 401. Where the
reference and podbook part ways (the seed wins, or a rule its schema cannot express) those
checks are turned off per operation, each with its reason, as ``reference/DEVIATIONS.md``
lists them (the one list of deviations; ``DEVIATIONS`` below is read from it).

Without ``--url`` the script starts its own emulator (temporary home and database, fast
lifecycle, rate limits raised so that fuzzing is not throttled) and seeds one resource of
each kind, so operations on ``{id}`` reach a real record. Exit status 0 when both passes
found nothing.

    .venv/bin/python scripts/conformance.py --max-examples 50
    make conformance CONFORMANCE_ARGS="--max-examples 200 --max-time 600"
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "runpod-rest-v2.openapi.json"
QUEUE_DOC_PATH = "/openapi/queue.json"
CHAT_HANDLER = ROOT / "scripts" / "conformance_chat.py"
"""The handler of the endpoint that the ``/openai`` operations are fuzzed against."""
GPU = "NVIDIA GeForce RTX 4090"
DATA_CENTER = "US-KS-2"

DEVIATIONS_DOC = ROOT / "reference" / "DEVIATIONS.md"
_ROW = re.compile(r"^\|\s*(D\d+)\s*\|")


def load_deviations(path: Path = DEVIATIONS_DOC) -> dict[str, dict[str, str]]:
    """operationId -> {schemathesis check: why it is off}, from the table of deviations.

    Each row of ``reference/DEVIATIONS.md`` names its operations (second column, in
    backticks) and the checks turned off for them (last column, in backticks); the reason
    is the row's id and its "why" column.
    """
    deviations: dict[str, dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not _ROW.match(line):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        row_id, operations, why, checks = cells[0], cells[1], cells[4], cells[-1]
        for operation in re.findall(r"`(\w+)`", operations):
            for check in re.findall(r"`(\w+)`", checks):
                deviations.setdefault(operation, {})[check] = f"{row_id}: {why}"
    return deviations


# Where the reference and podbook part ways (the seed wins, or a rule the schema cannot
# express refuses a body the schema allows): those checks are off for that operation only.
DEVIATIONS = load_deviations()

GLOBALLY_OFF = (
    "ignored_auth",
    "use_after_free",
    "ensure_resource_availability",
    "object_level_authorization",
)

# Operations left out of the run: not in the seed (no route), or not fuzzable.
NOT_EMULATED = {
    # Log streams follow the pod (worker) until it ends, with a keep-alive comment every
    # 15 s, so a request never times out and a filter that matches nothing holds forever.
    # (The reference also types the text/event-stream body as one string, while each
    # parsed event is an object.) Their query rules are tested in tests/emulator/test_pod_logs.py.
    "getPodLogs": "an SSE log stream has no end while the pod lives",
    "getWorkerLogs": "an SSE log stream has no end while the worker lives",
}


@dataclass
class PassResult:
    """What one schemathesis pass reported."""

    name: str
    exit_code: int
    seconds: float
    operations: int = 0
    cases: int = 0
    failures: int = 0
    output: str = ""
    summary: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the pass found nothing."""
        return self.exit_code == 0


# --- the emulator -------------------------------------------------------------------------


def _bench_common() -> Any:
    """``bench/_common.py`` (its emulator helper), loaded by file path."""
    if "_common" not in sys.modules:
        spec = importlib.util.spec_from_file_location("_common", ROOT / "bench" / "_common.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["_common"] = module
        spec.loader.exec_module(module)
    return sys.modules["_common"]


@contextmanager
def own_emulator(workdir: Path) -> Iterator[tuple[str, str]]:
    """Start an emulator for this run (fast lifecycle, rate limits out of the way); yield
    ``(url, api_key)``; stop it and its workers afterwards."""
    fast = ["--provision-seconds", "0.2", "--start-seconds", "0.2"]
    quota = ["--rate-limit", "minute=1000000", "--rate-limit", "hour=10000000"]
    quota += ["--rate-limit", "day=100000000"]
    with _bench_common().emulator(workdir, [*fast, *quota]) as emu:
        yield emu.url, emu.api_key


# --- seeded resources ---------------------------------------------------------------------


def _created(response: httpx.Response, what: str) -> dict[str, Any]:
    if response.status_code not in (200, 201):
        raise SystemExit(f"error: could not create {what}: {response.status_code} {response.text}")
    return response.json()


def seed(url: str, key: str) -> dict[str, dict[str, str]]:
    """Create one record of each kind; path parameters per operationId."""
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as http:

        def pod() -> str:
            body = {"name": "conformance", "image": "runpod/pytorch:latest", "gpu": {"id": GPU}}
            return _created(http.post("/v2/pods", json=body), "a pod")["id"]

        def cluster() -> str:
            body = {
                "name": "conformance",
                "type": "SLURM",
                "image": "runpod/pytorch:latest",
                "ports": ["22/tcp"],
                "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
            }
            return _created(http.post("/v2/clusters", json=body), "a cluster")["id"]

        def template() -> str:
            body = {"name": f"conformance-{os.urandom(3).hex()}", "image": "me/image:1"}
            return _created(http.post("/v2/templates", json=body), "a template")["id"]

        def volume() -> str:
            body = {"name": "conformance", "size": 10, "dataCenter": DATA_CENTER}
            return _created(http.post("/v2/network-volumes", json=body), "a volume")["id"]

        def registry() -> str:
            body = {"name": f"conformance-{os.urandom(3).hex()}", "username": "u", "password": "p"}
            return _created(http.post("/v2/registries", json=body), "a registry")["id"]

        def endpoint() -> str:
            body = {"name": f"conformance-{os.urandom(3).hex()}", "type": "QUEUE"}
            body["scaling"] = {"type": "QUEUE_DELAY", "queueDelay": 4}
            return _created(http.post("/v2/serverless", json=body), "an endpoint")["id"]

        job = _created(http.post("/v2/echo/runsync", json={"input": {"hi": 1}}), "a job")
        params: dict[str, dict[str, str]] = {}
        for op in ("getPod", "updatePod", "podAction"):
            params[op] = {"id": pod()}
        params["deletePod"] = {"id": pod()}
        for op in ("getCluster", "updateCluster", "listClusterPods"):
            params[op] = {"id": cluster()}
        params["deleteCluster"] = {"id": cluster()}
        for op in ("getTemplate", "updateTemplate"):
            params[op] = {"id": template()}
        params["deleteTemplate"] = {"id": template()}
        for op in ("getNetworkVolume", "updateNetworkVolume"):
            params[op] = {"id": volume()}
        params["deleteNetworkVolume"] = {"id": volume()}
        params["getRegistry"] = {"id": registry()}
        params["deleteRegistry"] = {"id": registry()}
        for op in ("getEndpoint", "updateEndpoint", "listEndpointWorkers", "listEndpointReleases"):
            params[op] = {"id": endpoint()}
        params["deleteEndpoint"] = {"id": endpoint()}
        params["getGpuType"] = {"id": GPU}
        params["getDataCenter"] = {"id": DATA_CENTER}
        params["getCpuType"] = {"id": _first(http, "/v2/catalog/cpus", "cpus")}
        for op in ("run", "runsync", "purgeQueue", "health"):
            params[op] = {"endpoint_id": "echo"}
        for op in ("status", "statusPost", "statusSync", "stream", "streamPost", "cancel", "retry"):
            params[op] = {"endpoint_id": "echo", "job_id": job["id"]}
        params["requests"] = {"endpoint_id": "echo"}
        body = {"name": f"conformance-chat-{os.urandom(3).hex()}", "handler": str(CHAT_HANDLER)}
        chat = _created(http.post("/v2/serverless", json=body), "an OpenAI endpoint")["id"]
        for op in ("openaiChatCompletions", "openaiCompletions", "openaiModels"):
            params[op] = {"endpoint_id": chat}
    return params


def _first(http: httpx.Client, path: str, key: str) -> str:
    return http.get(path).json()[key][0]["id"]


# --- schemathesis -------------------------------------------------------------------------


def _toml(value: Any) -> str:
    """A TOML value (inline tables) for the small config written below."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(type(value))


def write_config(path: Path, params: dict[str, dict[str, str]]) -> None:
    """The schemathesis.toml: per-operation deviations and seeded path parameters."""
    lines = [
        "# written by scripts/conformance.py",
        "",
        "# Every check, except the stateful ones that need links the reference does not",
        "# declare, and cross-account probing (issue 5 section 4 covers it with two accounts).",
        "[checks]",
        *(f"{check}.enabled = false" for check in GLOBALLY_OFF),
        "",
    ]
    for op in sorted(set(DEVIATIONS) | set(params)):
        lines.append("[[operations]]")
        lines.append(f"include-operation-id = {_toml(op)}")
        if op in DEVIATIONS:
            for check, why in DEVIATIONS[op].items():
                lines.append(f"# {check} off: {why}")
            lines.append("checks = " + _toml({c: {"enabled": False} for c in DEVIATIONS[op]}))
        if op in params:
            lines.append("parameters = " + _toml(params[op]))
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


_COUNTS = re.compile(r"(\d+) generated, (\d+) found (\d+) unique failures")
_NO_FAILURES = re.compile(r"(\d+) generated, (\d+) passed")
_TESTED = re.compile(r"Tested: (\d+)")


def run_pass(
    name: str, schema: str, url: str, key: str, config: Path, args: argparse.Namespace
) -> PassResult:
    """One ``schemathesis run``; its figures parsed from the summary."""
    exe = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
    command = [
        exe,
        "--no-color",
        "--config-file",
        str(config),
        "run",
        schema,
        "--url",
        url,
        "--header",
        f"Authorization: Bearer {key}",
        "--phases",
        args.phases,
        "--max-examples",
        str(args.max_examples),
        "--workers",
        str(args.workers),
        "--request-timeout",
        str(args.request_timeout),
        "--suppress-health-check",
        "all",
        "--warnings",
        "off",
        "--generation-database",
        "none",
    ]
    if args.seed is not None:
        command += ["--seed", str(args.seed)]
    if args.max_time:
        command += ["--max-time", str(args.max_time)]
    for op in NOT_EMULATED:
        command += ["--exclude-operation-id", op]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, cwd=config.parent)
    output = (proc.stdout + proc.stderr).replace(key, "[key]")
    result = PassResult(name, proc.returncode, time.monotonic() - started, output=output)
    if match := _TESTED.search(output):
        result.operations = int(match.group(1))
    if match := _COUNTS.search(output):
        result.cases, result.failures = int(match.group(1)), int(match.group(3))
    elif match := _NO_FAILURES.search(output):
        result.cases = int(match.group(1))
    result.summary = [line for line in output.splitlines() if re.match(r"^_{3,} .* _{3,}$", line)]
    return result


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an emulator already running (default: start one)")
    parser.add_argument("--api-key", help="its key (default: $RUNPOD_API_KEY)")
    parser.add_argument("--reference", default=str(REFERENCE), help="the REST reference document")
    parser.add_argument("--only", choices=("rest", "queue"), help="run one pass only")
    parser.add_argument("--max-examples", type=int, default=50, help="per operation and phase")
    parser.add_argument("--max-time", type=int, default=0, help="seconds per pass (0: no bound)")
    parser.add_argument("--phases", default="examples,coverage,fuzzing")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--request-timeout", type=float, default=60.0)
    parser.add_argument("--seed", type=int, help="reproduce an earlier run")
    parser.add_argument("--keep", help="directory for the config, outputs and emulator log")
    parser.add_argument("-q", "--quiet", action="store_true", help="figures only, no details")
    return parser.parse_args(argv)


def run(args: argparse.Namespace, url: str, key: str, workdir: Path) -> list[PassResult]:
    """Seed, write the config, run the selected passes."""
    config = workdir / "schemathesis.toml"
    write_config(config, seed(url, key))
    passes = []
    if args.only in (None, "rest"):
        if not Path(args.reference).is_file():
            raise SystemExit(
                f"error: reference document {args.reference} not found; pass --reference"
            )
        passes.append(run_pass("REST (reference)", args.reference, url, key, config, args))
    if args.only in (None, "queue"):
        passes.append(run_pass("queue (emulator)", url + QUEUE_DOC_PATH, url, key, config, args))
    for result in passes:
        (workdir / f"{result.name.split()[0].lower()}.txt").write_text(result.output)
    return passes


def main(argv: list[str] | None = None) -> int:
    """Run the passes; print one figure line per pass; 0 when nothing failed."""
    args = parse_args(argv)
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="podbook-conformance-"))
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if args.url:
        key = args.api_key or os.environ.get("RUNPOD_API_KEY")
        if not key:
            raise SystemExit("error: --url needs --api-key or RUNPOD_API_KEY")
        passes = run(args, args.url.rstrip("/"), key, workdir)
    else:
        with own_emulator(workdir) as (url, key):
            passes = run(args, url, key, workdir)
    for result in passes:
        verdict = "ok" if result.ok else f"FAILED (exit {result.exit_code})"
        print(
            f"{result.name}: {result.operations} operations, {result.cases} test cases, "
            f"{result.failures} failures, {result.seconds:.1f} s — {verdict}"
        )
        if not result.ok and not args.quiet:
            print(result.output[-20000:])
    print(
        f"conformance: {len(DEVIATIONS)} operations with documented deviations, "
        f"{len(NOT_EMULATED)} left out; total {time.monotonic() - started:.1f} s; "
        f"outputs in {workdir}"
    )
    return 0 if all(result.ok for result in passes) else 1


if __name__ == "__main__":
    sys.exit(main())
