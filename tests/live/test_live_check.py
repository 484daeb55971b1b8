"""The live check's own code (``make test-live``, ``podbook live-check``) against local
emulators, never the real service: read-only and spend mode pass; a pod that never runs, a
Ctrl-C or a SIGTERM mid-run still ends with the pod terminated and leftovers swept; the key
never shows in any output."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from podbook import Client
from podbook.errors import NotFound
from podbook.livecheck import NAME_PREFIX, main
from podbook.livecheck.spend import CostMeter, cpu_candidates

ROOT = Path(__file__).resolve().parents[2]
SLOW = ("--provision-seconds", "60", "--start-seconds", "60")
READ_ONLY_CHECKS = (
    "catalog gpus",
    "catalog cpus",
    "catalog datacenters",
    "pods",
    "endpoints",
    "templates",
    "network volumes",
    "registries",
    "ssh keys",
    "billing",
    "queue health",
)
SPEND_CHECKS = (
    "cheapest CPU pod",
    "create pod",
    "wait RUNNING",
    "ssh",
    "logs",
    "stop",
    "start",
    "terminate",
    "sweep",
    "pod billing",
)


def live_env(emu: Any, **extra: str) -> dict[str, str]:
    """What a user sets to point the live check at ``emu`` (fast polling for tests)."""
    return {
        "RUNPOD_API_KEY": emu.api_key,
        "PODBOOK_URL": emu.url,
        "PODBOOK_LIVE_POLL": "0.02",
        **extra,
    }


def clean_environ(**values: str) -> dict[str, str]:
    """This process's environment without RUNPOD_/PODBOOK_ variables, plus ``values``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "PODBOOK_"))}
    return {**env, **values}


def make_test_live(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``make test-live`` as a user runs it (the set-up is taken as done)."""
    return subprocess.run(
        ["make", "-s", "--no-print-directory", "-o", ".venv/.podbook-installed", "test-live"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_in_process(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """``podbook live-check ARGS`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), env=env, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def marked(output: str, mark: str, name: str) -> str | None:
    """The check line ``<mark> <name> ...`` of ``output``, if there is one."""
    for line in output.splitlines():
        if re.match(rf"^{re.escape(mark)} {re.escape(name)}\s{{2,}}", line):
            return line
    return None


def leftovers(emu: Any) -> list[str]:
    """Names of the pods of ``emu`` that a live check would have to sweep."""
    with Client(api_key=emu.api_key, url=emu.url) as client:
        return [p.name for p in client.pods.list() if p.name.startswith(NAME_PREFIX)]


@pytest.fixture(scope="module")
def slow_emulator(start_emulator: Any) -> Any:
    """An emulator whose pods stay PROVISIONING for a minute."""
    return start_emulator(timings=SLOW)


# ---------------------------------------------------------------- no key, bad settings


def test_without_a_key_it_says_what_to_set_and_runs_nothing() -> None:
    code, out, err = run_in_process({"PODBOOK_URL": "http://127.0.0.1:9"})
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert "RUNPOD_API_KEY is not set" in err and "nothing was run" in err


def test_make_test_live_without_a_key_exits_2_with_the_same_line() -> None:
    result = make_test_live(clean_environ())
    assert result.returncode != 0
    assert "RUNPOD_API_KEY is not set; nothing was run" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("PODBOOK_LIVE_TIMEOUT", "soon", "PODBOOK_LIVE_TIMEOUT='soon' is not a number"),
        ("PODBOOK_LIVE_MAX_PRICE", "-1", "PODBOOK_LIVE_MAX_PRICE='-1' must be more than 0"),
        ("PODBOOK_LIVE_SPEND", "maybe", "PODBOOK_LIVE_SPEND='maybe' is not a boolean"),
    ],
)
def test_an_unusable_setting_is_one_line_naming_it(name: str, value: str, said: str) -> None:
    env = {"RUNPOD_API_KEY": "pbk_unused_key", "PODBOOK_URL": "http://127.0.0.1:9", name: value}
    code, out, err = run_in_process(env)
    assert code == 2
    assert out == ""
    assert err.startswith(f"podbook live-check: {said}")
    assert len(err.splitlines()) == 1


# ---------------------------------------------------------------- read-only


def test_read_only_mode_passes_every_check_and_creates_nothing(emulator: Any) -> None:
    before = leftovers(emulator)
    code, out, err = run_in_process(live_env(emulator, PODBOOK_LIVE_ENDPOINT="echo"))
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith(f"live check of service at {emulator.url} (key from RUNPOD_API_KEY)")
    assert "costs nothing" in lines[0]
    for name in READ_ONLY_CHECKS:
        line = marked(out, "✓", name)
        assert line is not None, f"no ✓ line for {name!r}:\n{out}"
        assert re.search(r"\(\d+\.\d\d s\)$", line), line
    assert marked(out, "✓", "create pod") is None
    # The emulator's endpoints carry fields the reference does not name: they are reported.
    assert "fields the models do not know: Endpoint.builtin, Endpoint.handler" in out
    assert re.fullmatch(r"live check OK \(read-only\): 11 passed, 0 failed, 0 skipped in [\d.]+ s",
                        lines[-1])  # fmt: skip
    assert leftovers(emulator) == before
    assert emulator.api_key not in out + err


def test_queue_health_is_skipped_with_a_note_without_an_endpoint(emulator: Any) -> None:
    code, out, _ = run_in_process(live_env(emulator))
    assert code == 0
    line = marked(out, "–", "queue health")
    assert line is not None and "set PODBOOK_LIVE_ENDPOINT=ID" in line
    assert out.splitlines()[-1].startswith("live check OK (read-only): 10 passed, 0 failed, 1 ")


def test_a_refused_key_fails_each_check_in_one_line_without_showing_it(emulator: Any) -> None:
    wrong = "pbk_wrong_" + "7" * 24
    code, out, err = run_in_process({**live_env(emulator), "RUNPOD_API_KEY": wrong})
    assert code == 1
    for name in READ_ONLY_CHECKS[:-1]:
        line = marked(out, "✗", name)
        assert line is not None and "401" in line, out
    assert "Traceback" not in out + err
    assert wrong not in out + err
    assert out.splitlines()[-1].startswith("live check FAILED (read-only): 0 passed, 10 failed")


# ---------------------------------------------------------------- spend


def test_make_test_live_with_spend_cycles_a_cpu_pod_and_leaves_nothing(emulator: Any) -> None:
    result = make_test_live(clean_environ(**live_env(emulator, PODBOOK_LIVE_SPEND="1")))
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    first, last = out.splitlines()[0], out.splitlines()[-1]
    assert "then creates the cheapest available CPU pod (podbook-live-*, at most $0.20/h)" in first
    assert "at most $0.05 if it lives its full 900 s" in first
    for name in SPEND_CHECKS:
        assert marked(out, "✓", name) is not None, f"no ✓ line for {name!r}:\n{out}"
    create = marked(out, "✓", "create pod") or ""
    match = re.search(rf"({NAME_PREFIX}[0-9a-f]{{8}}) \((\w+)\): cpu3c, 2 vCPU, \$0\.060/h", create)
    assert match, create
    assert "proxy: ssh " in (marked(out, "✓", "ssh") or "")
    assert re.search(r"\d+ lines, the last: ", marked(out, "✓", "logs") or "")
    assert re.fullmatch(
        r"live check OK \(with a pod\): 20 passed, 0 failed, 1 skipped in [\d.]+ s; "
        r"the pod cost (≈ \$\d+\.\d{4}|< \$0\.0001)",
        last,
    )
    assert emulator.api_key not in out + result.stderr
    with Client(api_key=emulator.api_key, url=emulator.url) as client, pytest.raises(NotFound):
        client.pods.get(match.group(2))
    assert leftovers(emulator) == []


def test_a_pod_that_never_runs_is_terminated_and_leftovers_are_swept(slow_emulator: Any) -> None:
    with Client(api_key=slow_emulator.api_key, url=slow_emulator.url) as client:
        old = client.pods.create(
            name=f"{NAME_PREFIX}left-over", image="img:1", cpu={"id": "cpu3c", "vcpuCount": 2}
        )
    env = live_env(slow_emulator, PODBOOK_LIVE_SPEND="1", PODBOOK_LIVE_TIMEOUT="0.3")
    code, out, err = run_in_process(env)
    assert code == 1, out + err
    failed = marked(out, "✗", "wait RUNNING") or ""
    assert "is not RUNNING within its 0.3 s (last status PROVISIONING)" in failed, out
    assert "raise PODBOOK_LIVE_TIMEOUT" in failed
    assert marked(out, "✓", "ssh") is None and marked(out, "✗", "ssh") is None
    assert re.search(
        r"terminated \w+ \(podbook-live-[0-9a-f]{8}\)", marked(out, "✓", "cleanup") or ""
    )
    sweep = marked(out, "✓", "sweep") or ""
    assert f"terminated 1 leftover pod: {NAME_PREFIX}left-over ({old.id})" in sweep, out
    assert out.splitlines()[-1].startswith("live check FAILED (with a pod): ")
    assert leftovers(slow_emulator) == []
    assert slow_emulator.api_key not in out + err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_mid_run_still_terminates_the_pod(slow_emulator: Any, signum: int) -> None:
    env = clean_environ(
        **live_env(slow_emulator, PODBOOK_LIVE_SPEND="1", PODBOOK_LIVE_TIMEOUT="60"),
        PYTHONUNBUFFERED="1",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "podbook", "live-check"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen.append(line)
        if "waiting for RUNNING: PROVISIONING" in line:
            break
    else:  # pragma: no cover - shown when the check never got to the wait
        proc.kill()
        pytest.fail("the live check never started waiting:\n" + "".join(seen))
    proc.send_signal(signum)
    rest, err = proc.communicate(timeout=60)
    out = "".join(seen) + rest
    assert proc.returncode == 130, out + err
    assert re.search(
        r"terminated \w+ \(podbook-live-[0-9a-f]{8}\)", marked(out, "✓", "cleanup") or ""
    )
    assert marked(out, "✓", "sweep") is not None
    assert out.splitlines()[-1].startswith("live check interrupted after ")
    assert "Traceback" not in out + err
    assert leftovers(slow_emulator) == []
    assert slow_emulator.api_key not in out + err


# ---------------------------------------------------------------- pure parts


class _Cpu:
    def __init__(self, cpu_id: str, low: int, high: int, per_vcpu: float, *dcs: tuple[str, str]):
        from types import SimpleNamespace

        self.id = cpu_id
        self.vcpu = SimpleNamespace(min=low, max=high)
        self.price = SimpleNamespace(secure_per_vcpu=per_vcpu)
        self.data_centers = [SimpleNamespace(id=i, availability=a) for i, a in dcs]
        self.availability = "NONE" if all(a == "NONE" for _, a in dcs) else "HIGH"


def test_the_cheapest_available_shape_within_the_price_comes_first() -> None:
    cpus = [
        _Cpu("dear", 2, 8, 0.50, ("EU-1", "HIGH")),
        _Cpu("gone", 2, 8, 0.01, ("EU-1", "NONE")),
        _Cpu("big-min", 3, 16, 0.02, ("US-1", "LOW"), ("US-2", "MEDIUM")),
        _Cpu("cheap", 2, 8, 0.03, ("US-3", "HIGH")),
    ]
    found = cpu_candidates(cpus, max_price=0.20)  # type: ignore[arg-type]
    assert [(c.flavor, c.vcpus, c.price, c.data_center) for c in found] == [
        ("cheap", 2, 0.06, "US-3"),
        ("big-min", 4, 0.08, "US-2"),
    ]
    assert found[0].describe() == "cheap, 2 vCPU at $0.060/h in US-3"


def test_the_cost_meter_integrates_each_rate_until_the_next_read() -> None:
    now = [0.0]
    meter = CostMeter(clock=lambda: now[0])
    meter.observe(0.36)  # $/h from t=0
    now[0] = 100.0
    meter.observe(0.0)  # stopped at t=100: 0.36 * 100 / 3600 = 0.01
    now[0] = 200.0
    meter.observe(0.72)
    now[0] = 250.0
    meter.stop()  # 0.72 * 50 / 3600 = 0.01
    now[0] = 999.0
    meter.stop()
    assert meter.usd == pytest.approx(0.02)
    assert meter.seconds == pytest.approx(250.0)


def test_an_answer_the_models_cannot_read_fails_its_check_naming_the_field() -> None:
    import httpx

    from podbook.livecheck.readonly import READ_ONLY_CHECKS
    from podbook.livecheck.report import Reporter

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"pods": [{"id": "p1", "name": "x", "status": "BOOTING"}]})

    out = io.StringIO()
    reporter = Reporter(out, secrets=("pbk_secret_key_1",))
    transport = httpx.MockTransport(answer)
    with Client(api_key="pbk_secret_key_1", url="http://127.0.0.1:9", transport=transport) as c:
        check = dict(READ_ONLY_CHECKS)["pods"]
        outcome = reporter.check("pods", lambda: check(c))
    assert not outcome.ok and reporter.failed == 1
    line = out.getvalue().strip()
    assert line.startswith("✗ pods ") and "cannot read the answer" in line, line
    assert "pods.0.status: Input should be 'PROVISIONING'" in line
    assert "BOOTING" not in line and len(line.splitlines()) == 1
