"""Shared fixtures: a real emulator process on loopback, and a client pointed at it.

``emulator`` (session): ``python -m podbook emulator`` on a free port with a temporary
database and home, fast lifecycle (provision and start 0.2 s each), simulated pods
(``--runtime none`` unless ``extra_args`` names a runtime: hundreds of tests create pods and
never delete them, past the local runtime's cap; tests/runtime runs them for real), and three keys:
``api_key`` (account A, full), ``readonly_key`` (account A, read-only) and ``other_key``
(account B, full). ``emulator.restart()`` stops it and starts it again on the same port and
database. ``start_emulator(...)`` starts further, independent instances (e.g. a tiny quota).
``emu`` is the emulator of a test (the shared one unless a folder or module overrides it) and
``http`` account A's raw client of it: the one definition of both for every test folder.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from processes import stop_process

from podbook.emulator.podruntime.ports import free_ports

FAST = ("--provision-seconds", "0.2", "--start-seconds", "0.2")

# ---------------------------------------------------------------- Hypothesis profiles

HYPOTHESIS_PROFILE_VAR = "PODBOOK_HYPOTHESIS_PROFILE"
"""Names the Hypothesis profile to load (``--hypothesis-profile NAME`` wins over it)."""

settings.register_profile(
    "deterministic",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
"""The default, and what ``make test`` runs: each property test draws the same examples on
every run and machine (seeded from the test's name; no example database), so the suite
passes or fails on the code, never on the draw. ``deadline=None``: on a loaded machine a
slow example is not a bug."""

settings.register_profile(
    "explore",
    # explicit: under CI=true Hypothesis's own defaults are derandomized with no database
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
"""Fresh randomness on every run, with the local example database (``.hypothesis/``) that
replays what failed before: ``make test-explore``. A failure prints the
``@reproduce_failure`` blob to pin it, and the example then belongs in an ``@example``."""

settings.load_profile(os.environ.get(HYPOTHESIS_PROFILE_VAR) or "deterministic")


class EmulatorProcess:
    """An emulator subprocess with its URL, keys and files."""

    def __init__(
        self,
        root: Path,
        *,
        extra_args: tuple[str, ...] = (),
        config_text: str | None = None,
        timings: tuple[str, ...] = FAST,
        env: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.env = env or {}
        self.home = root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.db = root / "emulator.db"
        self.api_key = "pbk_a_" + secrets.token_hex(16)
        self.readonly_key = "pbk_ro_" + secrets.token_hex(16)
        self.other_key = "pbk_b_" + secrets.token_hex(16)
        self.config = root / "accounts.toml"
        self.config.write_text(
            config_text
            if config_text is not None
            else (
                "[[accounts]]\n"
                'id = "default"\n'
                f'readonly_keys = ["{self.readonly_key}"]\n\n'
                "[[accounts.templates]]\n"
                'id = "tpl-own"\n'
                'name = "own template"\n'
                'image = "me/own-image:1"\n'
                'args = "--serve"\n'
                "disk = 33\n"
                'ports = ["8888/http", "22/tcp"]\n'
                'env = { FROM_TEMPLATE = "yes", SHARED = "template" }\n'
                "startJupyter = true\n"
                'allowedCudaVersions = ["12.8"]\n'
                'mounts = { persistent = { size = 25, path = "/workspace" } }\n\n'
                "[[accounts.templates]]\n"
                'id = "tpl-serverless"\n'
                'image = "me/worker:1"\n'
                "serverless = true\n\n"
                "[[accounts]]\n"
                'id = "account-b"\n'
                f'keys = ["{self.other_key}"]\n'
            ),
            encoding="utf-8",
        )
        self.stdout_path = root / "stdout.txt"
        self.log_path = root / "emulator.log"
        self.extra_args = extra_args
        self.timings = timings
        self.port = 0
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        """The command line that starts this emulator."""
        return [
            sys.executable,
            "-m",
            "podbook",
            "emulator",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--db",
            str(self.db),
            "--home",
            str(self.home),
            "--api-key",
            self.api_key,
            "--config",
            str(self.config),
            *self.timings,
            *(() if "--runtime" in self.extra_args else ("--runtime", "none")),
            *self.extra_args,
        ]

    def start(self, timeout: float = 20.0) -> None:
        """Start the process and wait until it announces its URL and answers /healthz.

        The first start takes a port outside the kernel's ephemeral range (as the local
        runtime's public ports do): ``restart`` needs the same port again, and a port of that
        range may meanwhile be the local end of any outgoing connection of a busy machine."""
        if self.port == 0:
            for attempt in range(3):
                self.port = free_ports("127.0.0.1", 1)[0]
                try:
                    return self._start(timeout)
                except RuntimeError as err:  # taken between the choice and the bind
                    if "Address already in use" not in str(err) or attempt == 2:
                        raise
        return self._start(timeout)

    def _start(self, timeout: float) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        with self.stdout_path.open("ab") as out, self.log_path.open("ab") as err:
            start_offset = out.tell()
            self.proc = subprocess.Popen(
                self.command(), stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env
            )
        deadline = time.monotonic() + timeout
        prefix = "podbook emulator listening on "
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"emulator exited with {self.proc.returncode}: "
                    f"{self.log_path.read_text(errors='replace')[-2000:]}"
                )
            text = self.stdout_path.read_bytes()[start_offset:].decode(errors="replace")
            for line in text.splitlines():
                if line.startswith(prefix):
                    self.url = line[len(prefix) :].strip()
                    self.port = int(self.url.rsplit(":", 1)[1])
                    if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                        return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("emulator did not announce itself in time")

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL)."""
        if self.proc is not None:
            stop_process(self.proc)

    def restart(self) -> None:
        """Stop and start again on the same port and database."""
        self.stop()
        self.start()

    def headers(self, key: str | None = None) -> dict[str, str]:
        """Authorization headers for ``key`` (default: account A's full key)."""
        return {"Authorization": f"Bearer {key or self.api_key}"}

    def http(self, key: str | None = None) -> httpx.Client:
        """A raw httpx client on the emulator's base URL with ``key``."""
        return httpx.Client(base_url=self.url, headers=self.headers(key), timeout=10)


@pytest.fixture(scope="session")
def start_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Factory: ``start_emulator(extra_args=(...), config_text=...)`` → a started process."""
    started: list[EmulatorProcess] = []

    def factory(**kwargs: object) -> EmulatorProcess:
        process = EmulatorProcess(tmp_path_factory.mktemp("emulator"), **kwargs)  # type: ignore[arg-type]
        process.start()
        started.append(process)
        return process

    yield factory
    for process in started:
        process.stop()


@pytest.fixture(scope="session")
def emulator_class() -> type[EmulatorProcess]:
    """The emulator process class, for a test that lays an emulator out itself (a home shared
    with another one, a database elsewhere) before it starts it."""
    return EmulatorProcess


@pytest.fixture(scope="session")
def emulator(start_emulator: object) -> EmulatorProcess:
    """A real emulator process shared by the session (fast lifecycle, accounts A and B)."""
    return start_emulator()  # type: ignore[operator]


@pytest.fixture
def emu(emulator: EmulatorProcess) -> EmulatorProcess:
    """The emulator of a test: the shared one, unless its folder or module overrides ``emu``
    (a module-scoped ``emu = start_emulator(...)`` with the flags it needs)."""
    return emulator


@pytest.fixture
def http(emu: EmulatorProcess) -> Iterator[httpx.Client]:
    """Account A's raw httpx client of ``emu``."""
    with emu.http() as raw:
        yield raw


@pytest.fixture
def client(emulator: EmulatorProcess) -> Iterator[object]:
    """A ``podbook.Client`` pointed at the session emulator with account A's full key."""
    from podbook import Client

    c = Client(
        api_key=emulator.api_key, rest_url=emulator.url, queue_url=emulator.url, v1_url=emulator.url
    )
    try:
        yield c
    finally:
        close = getattr(c, "close", None)
        if close is not None:
            close()


# ---------------------------------------------------------------- slow tests

SLOW = (
    "tests/reliability/",  # fault injection, kill -9, load: tens of seconds each
    "tests/property/",  # hypothesis over every wire model
    "tests/conformance/test_schemathesis_pass.py",
    "tests/notebook/test_refresher_outage.py",  # a minute-long outage, on purpose
    "tests/notebook/test_hostile_args.py",
    "tests/test_no_secrets.py",  # every notebook in a kernel
    "tests/test_notebooks.py",
    "tests/emulator/test_broker_performance.py",  # a thousand round trips, 10,000 stored jobs
    "tests/test_operations_table.py",  # every magic against an emulator of its own
    "tests/worker/test_runpod_sdk_js.py",  # the official JS SDK under node
    "tests/contract/test_prism_contract.py",  # 620 calls through two Prism mocks under node
    # real pods, workers and kernels for seconds each: the edit loop leaves them to make test
    "tests/guard/",  # the idle guard inside running pods
    "tests/runtime/",  # pod processes, sandboxes, SSH and Jupyter servers
    "tests/scaling/",  # autoscaled endpoints: cold starts, idle timeouts, FlashBoot
    "tests/remote/",  # kernels and file transfer on running pods
    "tests/worker/test_lb_worker.py",
    "tests/worker/test_runner_live.py",
    "tests/worker/test_broker_gone.py",
    "tests/worker/test_push_path.py",
    "tests/worker/test_runpod_sdk.py",
    "tests/worker/test_openai_workers.py",
    "tests/emulator/test_loadbalancer_passthrough.py",
    "tests/emulator/test_broker_workers.py",
    "tests/notebook/test_guard_magics.py",
    "tests/notebook/test_on_exit.py",
    "tests/emulator/test_loadbalancer_pool.py",
    "tests/emulator/test_broker_runpod_sdk.py",  # the runpod SDK's own worker processes
    "tests/notebook/test_health_timeline.py",  # workers the emulator starts and stops
    "tests/emulator/test_security.py",
    "tests/emulator/test_cli.py",
)
"""Test paths marked ``slow``: ``make test`` runs them, ``make test-fast`` does not."""

SLOW_TESTS = (
    # restarts, crashes, signals and lost messages: seconds each (their modules stay in test-fast)
    "tests/emulator/test_cross_account_probe.py::test_account_b_never_sees_or_changes_account_a",
    "tests/emulator/test_persistence.py::test_everything_survives_a_restart",
    "tests/emulator/test_broker_persistence.py::"
    "test_restored_jobs_of_a_handler_endpoint_run_without_a_new_submission",
    "tests/client/test_pod_logs_live.py::test_follow_rides_out_an_emulator_restart",
)
"""Single tests marked ``slow`` (node ids without parameters), in modules test-fast runs."""


LONGEST = (
    "tests/notebook/test_refresher_outage.py",
    "tests/reliability/test_network_faults.py",
    "tests/worker/test_runner_live.py",
    "tests/reliability/test_webhook_faults.py",
    "tests/property/test_wire_models.py",
    "tests/reliability/test_crash_recovery.py",
    "tests/contract/test_prism_contract.py",
    "tests/test_notebooks.py",
    "tests/emulator/test_loadbalancer_pool.py",
    "tests/test_no_secrets.py",
    "tests/worker/test_lb_worker.py",
    "tests/worker/test_runpod_sdk.py",
    "tests/worker/test_push_path.py",
    "tests/runtime/test_pod_jupyter_emulator.py",
    "tests/conformance/test_schemathesis_pass.py",
    "tests/runtime/test_pod_ssh.py",
    "tests/notebook/test_panels.py",
    "tests/runtime/test_runtime_lifecycle.py",
    "tests/emulator/test_cross_account_probe.py",
    "tests/client/test_pod_logs_live.py",
    "tests/runtime/test_runtime_pods.py",
    "tests/emulator/test_security.py",
    "tests/notebook/test_hostile_args.py",
)
"""The modules that take longest (15 s and more on six workers), longest first: they run
first, so that under pytest-xdist (``--dist loadfile``) no worker starts one of them while the
others are done."""


def pytest_configure(config: pytest.Config) -> None:
    """Keep the collection order for pytest-xdist's work queue (its own default runs the
    modules with most tests first, not the :data:`LONGEST`)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests under :data:`SLOW` and in :data:`SLOW_TESTS` as ``slow``; run the
    :data:`LONGEST` modules first."""
    root = Path(str(config.rootpath))
    order = {path: rank for rank, path in enumerate(LONGEST)}
    paths = {}
    for item in items:
        path = paths[item] = Path(str(item.path)).relative_to(root).as_posix()
        if path.startswith(SLOW) or f"{path}::{item.originalname}" in SLOW_TESTS:  # type: ignore[attr-defined]
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: order.get(paths[item], len(order)))  # stable: others keep theirs


# ---------------------------------------------------------------- skips

EXPECTED_SKIPS = (
    # The live-reload path of the views leans on a private anywidget module; when a new
    # anywidget moves it, podbook falls back to the plain ESM and this one test cannot run.
    "could not import 'anywidget._file_contents'",
)
"""Skip reasons a run may show (prefixes). Any other skip fails the run when ``CI`` is set."""

_skipped: list[tuple[str, str]] = []


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Note every skip with its reason."""
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append((report.nodeid, _skip_reason(report)))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Note modules skipped whole at collection."""
    if report.skipped:
        _skipped.append((report.nodeid, _skip_reason(report)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI, a skip whose reason is not in ``EXPECTED_SKIPS`` fails the run."""
    unexpected = [
        (nodeid, reason) for nodeid, reason in _skipped if not reason.startswith(EXPECTED_SKIPS)
    ]
    if not unexpected or not os.environ.get("CI"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"CI: {len(unexpected)} unexpected skip(s) fail this run:", red=True)
        for nodeid, reason in unexpected:
            reporter.write_line(f"  {nodeid}: {reason}", red=True)
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
