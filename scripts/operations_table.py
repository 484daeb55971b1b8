#!/usr/bin/env python3
"""Write ``docs/operations.md``: every operation of the REST v2 reference, with the client
method that performs it, the magics that send it, and the emulator route that serves it.

    .venv/bin/python scripts/operations_table.py           # write docs/operations.md
    .venv/bin/python scripts/operations_table.py --check   # exit 1 when it is out of date
    make operations-table                                   # the same as the first

Each column comes from the one place that knows it:

- operations: ``reference/runpod-rest-v2.openapi.json``;
- client methods: ``podbook.client._operations.CLIENT_METHODS`` (the coverage test checks
  that each operation really is sent from the method named there);
- emulator routes: ``podbook.emulator.app.build_routes()``, the first route that matches a
  request of the operation, as Starlette picks it;
- magics: observed. Every magic of ``SCENARIO`` below runs in a real IPython shell against a
  private emulator (temporary home, never a real service), and each request it sends is
  mapped to its operation. A subcommand of a magic that the scenario does not run fails the
  script by name, so a new subcommand cannot be left out of the table.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "runpod-rest-v2.openapi.json"
OUTPUT = ROOT / "docs" / "operations.md"
METHODS = ("get", "put", "post", "patch", "delete")
LIVE_PANELS = "live panels (refresher)"
REGENERATE = "`make operations-table` (or `.venv/bin/python scripts/operations_table.py`)"

SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZha2VrZXlmb3J0ZXN0c29ubHk ops-table"
ARN = "arn:aws:ecr:us-east-2:123456789012:repository/team/app"

# What runs, in order. (label, line[, cell]): a magic, recorded under ``label`` (what the table
# shows). ("", code): Python run in the shell's namespace and not recorded (set-up and
# waiting; ``ops_client`` is a plain client of the same emulator).
SCENARIO: list[tuple[str, ...]] = [
    ("%catalog gpus", "%catalog gpus"),
    ("%catalog cpus", "%catalog cpus"),
    ("%catalog datacenters", "%catalog datacenters"),
    ("%pod create", "%pod create --cpu cpu3c:2 --image ubuntu:22.04 --name ops -o ops_pod"),
    ("", "ops_client.pods.wait_for(ops_pod.id, 'RUNNING', timeout=30, poll_interval=0.02)"),
    ("%pod list", "%pod list"),
    ("%pod show", "%pod show {ops_pod.id}"),
    ("%pod ssh", "%pod ssh {ops_pod.id}"),
    ("%pod logs", "%pod logs {ops_pod.id} --tail 5"),
    ("%pod restart", "%pod restart {ops_pod.id}"),
    ("", "ops_client.pods.wait_for(ops_pod.id, 'RUNNING', timeout=30, poll_interval=0.02)"),
    ("%pod stop", "%pod stop {ops_pod.id}"),
    ("", "ops_client.pods.wait_for(ops_pod.id, 'EXITED', timeout=30, poll_interval=0.02)"),
    ("%pod start", "%pod start {ops_pod.id}"),
    ("%pod terminate", "%pod terminate {ops_pod.id}"),
    (
        "%pod create",
        "%pod create --cpu cpu3c:2 --image ubuntu:22.04 --ports 8888/http,22/tcp --ssh --jupyter"
        " --name ops-work -o ops_work",
    ),
    ("", "ops_client.pods.wait_for(ops_work.id, 'RUNNING', timeout=30, poll_interval=0.02)"),
    ("%%pod exec", "%%pod exec {ops_work.id}", "ops_x = 1"),
    ("%pod attach", "%pod attach {ops_work.id}"),
    ("%pod detach", "%pod detach"),
    ("%%pod sh", "%%pod sh {ops_work.id}", "echo ops"),
    ("", "ops_dir = __import__('tempfile').mkdtemp(); open(ops_dir + '/f.txt', 'w').write('x')"),
    ("%pod push", "%pod push {ops_dir}/f.txt {ops_work.id}:f.txt"),
    ("%pod pull", "%pod pull {ops_work.id}:f.txt {ops_dir}/back.txt"),
    ("%pod sync", "%pod sync {ops_dir} {ops_work.id}:ops-dir"),
    ("", "ops_client.pods.terminate(ops_work.id)"),
    (
        "",
        "ops_cluster = ops_client.clusters.create(name='ops', type='APPLICATION', image='alpine',"
        " compute={'gpu_type_id': 'NVIDIA GeForce RTX 4090', 'gpu_count_per_pod': 1,"
        " 'pod_count': 2})",
    ),
    ("%cluster show", "%cluster show {ops_cluster.id}"),
    ("%template create", "%template create --name ops --image me/app:1 -o ops_tpl"),
    ("%template list", "%template list"),
    ("%template list --public", "%template list --public"),
    ("%template show", "%template show {ops_tpl.id}"),
    ("%template update", "%template update {ops_tpl.id} --image me/app:2"),
    ("%template delete", "%template delete {ops_tpl.id}"),
    ("%volume create", "%volume create --name ops --size 10 --dc EU-RO-1 -o ops_vol"),
    ("%volume list", "%volume list"),
    ("%volume show", "%volume show {ops_vol.id}"),
    ("%volume update", "%volume update {ops_vol.id} --size 20"),
    ("%volume delete", "%volume delete {ops_vol.id}"),
    (
        "%registry create",
        "%registry create --name ops --username u --password-env OPS_PW -o ops_reg",
    ),
    ("%registry list", "%registry list"),
    ("%registry delete", "%registry delete {ops_reg.id}"),
    ("%registry delegate", f"%registry delegate --resource {ARN} --name ops -o ops_dlg"),
    ("%registry delegations", "%registry delegations"),
    ("%registry revoke", "%registry revoke {ops_dlg.id}"),
    ("%sshkey list", "%sshkey list"),
    ("%sshkey add", f"%sshkey add --key '{SSH_KEY}'"),
    ("%sshkey remove", "%sshkey remove ops-table"),
    ("%sshkey set", f"%sshkey set --key '{SSH_KEY}'"),
    ("%billing", "%billing --last 2d"),
    *(
        (f"%billing --kind {kind}", f"%billing --last 2d --kind {kind}")
        for kind in ("pods", "serverless", "endpoints", "network-volumes", "clusters")
    ),
    ("%endpoint create", "%endpoint create ops --image me/worker:1 -o ops_ep"),
    ("%endpoint list", "%endpoint list"),
    ("%endpoint show", "%endpoint show {ops_ep.id}"),
    ("%endpoint update", "%endpoint update {ops_ep.id} --workers-max 2"),
    ("%endpoint health", "%endpoint health {ops_ep.id}"),
    ("%%runjob", "%%runjob {ops_ep.id} --async -o ops_job", '{"n": 1}'),
    ("%job status", "%job status {ops_job.id} --endpoint {ops_ep.id}"),
    ("%job cancel", "%job cancel {ops_job.id} --endpoint {ops_ep.id}"),
    ("%endpoint purge", "%endpoint purge {ops_ep.id}"),
    ("%endpoint delete", "%endpoint delete {ops_ep.id}"),
    ("%endpoint serve", "%endpoint serve ops_handler --name ops-serve -o ops_served"),
    ("%%runjob", "%%runjob ops-serve --sync -o ops_failed", '{"fail": true}'),
    ("%job retry", "%job retry {ops_failed.id} --endpoint ops-serve"),
    ("%endpoint logs", "%endpoint logs ops-serve"),
    ("", "ops_served.stop()"),
    ("%%chat", "%%chat chat-demo --max-tokens 4", "Hi"),
    ("%chat history", "%chat history chat-demo"),
    ("%chat reset", "%chat reset chat-demo"),
]


# --- the reference --------------------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    """One operation of the reference document."""

    operation_id: str
    method: str
    path: str
    tag: str
    summary: str

    def matches(self, method: str, path: str) -> bool:
        """Whether a request (``method``, concrete ``path``) is this operation."""
        pattern = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(self.path)) + "$"
        return method == self.method and re.match(pattern, path) is not None


def reference_operations(document: Path = REFERENCE) -> list[Operation]:
    """Every operation of the reference, in the document's order."""
    data = json.loads(document.read_text(encoding="utf-8"))
    return [
        Operation(
            op["operationId"],
            method.upper(),
            path,
            (op.get("tags") or ["Other"])[0],
            op.get("summary", ""),
        )
        for path, item in data["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def operation_of(method: str, path: str, operations: list[Operation]) -> Operation | None:
    """The operation a request reached (literal segments beat ``{placeholders}``)."""
    found = [op for op in operations if op.matches(method, path)]
    return min(found, key=lambda op: op.path.count("{")) if found else None


# --- emulator routes ------------------------------------------------------------------------


def emulator_route(operation: Operation, routes: list[Any]) -> str:
    """``module.handler`` of the first emulator route that serves a request of ``operation``."""
    import inspect

    from starlette.routing import Match

    concrete = re.sub(r"\{[^/]+?\}", "x1", operation.path)
    scope = {"type": "http", "path": concrete, "root_path": "", "method": operation.method}
    for route in routes:
        match, _ = route.matches(scope)
        if match == Match.FULL:
            handler = inspect.unwrap(route.endpoint)
            module = handler.__module__.removeprefix("podbook.emulator.")
            return f"{module}.{handler.__qualname__.split('.<locals>')[0]}"
    return ""


# --- magics, observed -----------------------------------------------------------------------


class Recorder:
    """Notes every HTTP request the main thread sends while a label is set."""

    def __init__(self) -> None:
        self.label = ""
        self.sent: list[tuple[str, str, str, int]] = []

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Wrap httpx's transport for the duration."""
        import httpx

        original = httpx.HTTPTransport.handle_request
        recorder = self

        def handle_request(transport: Any, request: Any) -> Any:
            response = original(transport, request)
            if recorder.label and threading.current_thread() is threading.main_thread():
                recorder.sent.append(
                    (recorder.label, request.method, request.url.path, response.status_code)
                )
            return response

        httpx.HTTPTransport.handle_request = handle_request  # type: ignore[method-assign]
        try:
            yield
        finally:
            httpx.HTTPTransport.handle_request = original  # type: ignore[method-assign]


def magic_subcommands() -> dict[str, list[str]]:
    """Every magic of the extension with its subcommands (empty: the magic has none)."""
    from podbook.notebook.account.commands import SUBCOMMANDS
    from podbook.notebook.catalog.commands import build_subcommands as build_catalog_subcommands
    from podbook.notebook.endpoints import manage
    from podbook.notebook.endpoints.commands import (
        build_endpoint_subcommands,
        build_job_subcommands,
    )
    from podbook.notebook.magics import PodMagics
    from podbook.notebook.pods.commands import build_cluster_subcommands, build_pod_subcommands

    subcommands: dict[str, list[str]] = {
        "pod": list(build_pod_subcommands()),
        "cluster": list(build_cluster_subcommands()),
        "catalog": list(build_catalog_subcommands()),
        "endpoint": [*manage.build_subcommands(), *build_endpoint_subcommands()],
        "job": list(build_job_subcommands()),
        **{magic: list(build()) for magic, build in SUBCOMMANDS.items()},
    }
    names = {**PodMagics.magics["line"], **PodMagics.magics["cell"]}
    return {name: subcommands.get(name, []) for name in sorted(names)}


def _unrun(subcommands: dict[str, list[str]]) -> list[str]:
    """Magic subcommands the scenario does not run."""
    run = {step[1].split()[0].lstrip("%") + " " + (step[1].split() + [""])[1] for step in SCENARIO}
    missing = []
    for magic, subs in subcommands.items():
        for sub in subs or [""]:
            if sub and f"{magic} {sub}" not in run:
                missing.append(f"%{magic} {sub}")
            if not sub and not any(item.startswith(magic + " ") for item in run):
                missing.append(f"%{magic}")
    return missing


def ops_handler(job: dict[str, Any]) -> dict[str, Any]:
    """The handler ``%endpoint serve`` serves in the scenario: it fails a job whose input
    says ``fail`` (so that ``%job retry`` has a FAILED job), and echoes any other."""
    if job["input"].get("fail"):
        return {"error": "asked to fail"}
    return {"echo": job["input"]}


def observe_magics(operations: list[Operation]) -> dict[str, set[str]]:
    """operationId → labels of the magics that sent it (2xx), from running the scenario."""
    missing = _unrun(magic_subcommands())
    if missing:
        raise SystemExit(
            "error: the scenario in scripts/operations_table.py runs no "
            + ", ".join(missing)
            + "; add a line for each to SCENARIO"
        )
    recorder = Recorder()
    with tempfile.TemporaryDirectory(prefix="podbook-ops-") as tmp, own_emulator(Path(tmp)) as emu:
        env = {
            "PODBOOK_URL": emu.url,
            "RUNPOD_API_KEY": emu.api_key,
            "PODBOOK_HOME": str(Path(tmp) / "podbook-home"),
            "OPS_PW": "ops-table-password",
            "HOME": str(Path(tmp) / "home"),
        }
        with _environment(env), recorder.installed():
            _run_scenario(recorder, emu)
    used: dict[str, set[str]] = {}
    for label, method, path, status in recorder.sent:
        operation = operation_of(method, path, operations)
        if operation is not None and 200 <= status < 300:
            used.setdefault(operation.operation_id, set()).add(label)
    return used


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """This process's environment pointed at the private emulator only."""
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.startswith(("RUNPOD_", "PODBOOK_")):
            del os.environ[name]
    os.environ.update(values)
    Path(values["HOME"]).mkdir(parents=True, exist_ok=True)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _run_scenario(recorder: Recorder, emu: Any) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    from podbook import Client

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    with capture_output(), Client(api_key=emu.api_key, url=emu.url) as helper:
        shell.user_ns.update(ops_client=helper, ops_handler=ops_handler)
        shell.run_line_magic("load_ext", "podbook")
        # Panels on (as in a notebook), so the reads a panel makes when shown count; the
        # refresher's own thread is not recorded: one tick runs below, on this thread.
        shell.run_line_magic("config", "PodMagics.refresh_interval = 3600")
        try:
            for step in SCENARIO:
                _run_step(shell, recorder, step)
            _refresher_tick(shell, recorder)
        finally:
            shell.run_line_magic("unload_ext", "podbook")


def _run_step(shell: Any, recorder: Recorder, step: tuple[str, ...]) -> None:
    label, code, *cell = step
    if not label:
        exec(code, shell.user_ns)  # set-up and waits of the scenario itself
        return
    magic, _, line = code.partition(" ")
    line = shell.var_expand(line)
    recorder.label = label
    try:
        if magic.startswith("%%"):
            shell.run_cell_magic(magic[2:], line, cell[0])
        else:
            shell.run_line_magic(magic[1:], line)
    except Exception as exc:
        raise SystemExit(f"error: scenario step {code!r} failed: {exc}") from None
    finally:
        recorder.label = ""


def _refresher_tick(shell: Any, recorder: Recorder) -> None:
    """One poll of the live panels the scenario left open, as the refresher thread does it."""
    session = shell._podbook_magics.session
    recorder.label = LIVE_PANELS
    try:
        session.refresher._fetch(session.client, session.refresher.panels)
    finally:
        recorder.label = ""


@contextmanager
def own_emulator(workdir: Path) -> Iterator[Any]:
    """A private emulator (fast lifecycle) for this run, stopped afterwards."""
    sys.path.insert(0, str(ROOT / "bench"))
    from _common import emulator  # bench/_common.py: a real emulator process on loopback

    # pods really run: the scenario works in one (its kernel, SSH and files)
    fast = ["--provision-seconds", "0.05", "--start-seconds", "0.05", "--runtime", "local"]
    with emulator(workdir, fast) as emu:
        yield emu


# --- the table ------------------------------------------------------------------------------


def _client_cell(operation_id: str) -> str:
    from podbook.client._operations import ALSO_SENT_BY, CLIENT_METHODS

    path = CLIENT_METHODS.get(operation_id)
    if path is None:
        return "**none**"
    cell = f"`client.{path}`"
    also = ALSO_SENT_BY.get(operation_id, ())
    if also:
        cell += " (also " + ", ".join(f"`client.{p}`" for p in also) + ")"
    return cell


def render(
    operations: list[Operation],
    magics: dict[str, set[str]],
    routes: dict[str, str],
    queue_only: list[str],
) -> str:
    """The Markdown of ``docs/operations.md``."""
    lines = [
        "# Operations of the REST v2 reference",
        "",
        "<!-- Written by scripts/operations_table.py; do not edit. Regenerate with",
        "     `make operations-table` (a test fails while this file is out of date). -->",
        "",
        "Every operation of `reference/runpod-rest-v2.openapi.json`, with the client method",
        "that performs it (`podbook.client._operations.CLIENT_METHODS`; the `AsyncClient` has",
        "the same names), the magics that send it (observed by running each magic against the",
        "emulator, panels shown), and the emulator handler that serves it (module under",
        f"`podbook.emulator`). `{LIVE_PANELS}` is the one background poll that keeps the",
        "shown panels current. `–`: no magic sends it; use the client.",
        f"{len(operations)} operations.",
    ]
    for tag in dict.fromkeys(op.tag for op in operations):
        lines += [
            "",
            f"## {tag}",
            "",
            "| Operation | Request | Client method | Magics | Emulator route |",
            "|---|---|---|---|---|",
        ]
        for op in (o for o in operations if o.tag == tag):
            used = ", ".join(f"`{label}`" for label in sorted(magics.get(op.operation_id, ())))
            route = routes.get(op.operation_id)
            lines.append(
                f"| `{op.operation_id}` | `{op.method} {op.path}` | "
                f"{_client_cell(op.operation_id)} | {used or '–'} | "
                f"{f'`{route}`' if route else '**none**'} |"
            )
    lines += [
        "",
        "## Magics that use no REST v2 operation",
        "",
        "These speak the queue API (`/v2/{endpoint_id}/...`, see",
        "`reference/queue-and-worker-protocol.md`) or the worker protocol only: "
        + ", ".join(f"`{label}`" for label in queue_only)
        + ".",
        "",
    ]
    return "\n".join(lines)


def build() -> str:
    """Gather every column and render the file."""
    from podbook.emulator.app import build_routes

    operations = reference_operations()
    table = build_routes()
    routes = {op.operation_id: emulator_route(op, table) for op in operations}
    magics = observe_magics(operations)
    labels = {step[0] for step in SCENARIO if step[0]}
    rest = {label for used in magics.values() for label in used}
    queue_only = sorted(labels - rest)
    return render(operations, magics, routes, queue_only)


def stale_message(path: Path, current: str, expected: str) -> str | None:
    """None when ``current`` is ``expected``; else what differs and how to regenerate."""
    if current == expected:
        return None
    diff = difflib.unified_diff(
        current.splitlines(), expected.splitlines(), str(path), "expected", lineterm="", n=0
    )
    shown = list(diff)[:40]
    return (
        f"{path} is out of date with what scripts/operations_table.py writes; regenerate it "
        f"with {REGENERATE} and commit it.\n" + "\n".join(shown)
    )


def main(argv: list[str] | None = None) -> int:
    """Write the table, or with ``--check`` compare it; the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="default docs/operations.md")
    args = parser.parse_args(argv)
    text = build()
    shown = args.output.resolve()
    shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        message = stale_message(shown, current, text)
        if message:
            print(message, file=sys.stderr)
            return 1
        print(f"{shown} is up to date")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
