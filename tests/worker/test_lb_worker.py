"""``podbook worker --lb``: what a user gets wrong, each said in one line with the fix and
exit code 2 (1 when the emulator refused the registration), and the user's key kept from
the app. Real processes against the session emulator."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lb_helpers import SAMPLE_APP, WSGI_APP, create_lb_endpoint, worker_env
from lb_helpers import worker_key as new_worker_key


def worker_key(broker: Any, endpoint_id: str) -> str:
    """A fresh worker key of ``endpoint_id``."""
    with broker.http() as http:
        return new_worker_key(http, endpoint_id)


def run_worker(args: list[str], env: dict[str, str], timeout: float = 30) -> tuple[int, str]:
    """Run ``podbook worker --lb ARGS`` to its end; ``(exit code, stderr)``."""
    done = subprocess.run(
        [sys.executable, "-m", "podbook", "worker", "--lb", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    return done.returncode, done.stderr.decode()


@pytest.fixture
def lb(broker: Any) -> str:
    """A fresh load-balancing endpoint of the session emulator."""
    with broker.http() as http:
        return create_lb_endpoint(http)


@pytest.fixture
def env(broker: Any, lb: str) -> dict[str, str]:
    """A worker's environment with a worker key of ``lb``."""
    return worker_env(worker_key(broker, lb))


def one_line(stderr: str) -> str:
    """The single line a refused start printed (no traceback)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("podbook worker: ")
    return lines[0]


@pytest.mark.parametrize(
    ("app", "fragment"),
    [
        (f"{SAMPLE_APP}:nothing", "has no 'nothing'; name the app with"),
        (f"{SAMPLE_APP}:state", "is of type dict, not an ASGI or WSGI app"),
        (f"{SAMPLE_APP}:NAME", "is of type str, not an ASGI or WSGI app"),
        (f"{WSGI_APP}:StartResponse", "not an ASGI or WSGI app"),
        ("/no/such/app.py", "app file /no/such/app.py not found"),
        ("no_such_module:app", "no module named 'no_such_module'"),
    ],
)
def test_not_an_app(broker: Any, lb: str, env: dict[str, str], app: str, fragment: str) -> None:
    code, stderr = run_worker([app, "--endpoint", lb, "--url", broker.url], env)
    assert code == 2
    assert fragment in one_line(stderr)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--concurrency", "2"], "--concurrency applies to queue handlers"),
        (["--refresh-worker"], "--refresh-worker applies to queue handlers"),
    ],
)
def test_queue_options_are_refused(
    broker: Any, lb: str, env: dict[str, str], extra: list[str], fragment: str
) -> None:
    code, stderr = run_worker([str(SAMPLE_APP), "--endpoint", lb, "--url", broker.url, *extra], env)
    assert code == 2
    assert fragment in one_line(stderr)


def test_endpoint_is_required(env: dict[str, str]) -> None:
    code, stderr = run_worker([str(SAMPLE_APP)], env)
    assert code == 2
    assert "--lb needs --endpoint ID" in one_line(stderr)


def test_queue_endpoint_is_refused_by_the_emulator(broker: Any) -> None:
    code, stderr = run_worker(
        [str(SAMPLE_APP), "--endpoint", "echo", "--url", broker.url],
        worker_env(worker_key(broker, "echo")),
    )
    assert code == 1
    line = one_line(stderr)
    assert "endpoint 'echo' is a QUEUE endpoint" in line
    assert "podbook worker handler.py --endpoint echo" in line


def test_unknown_endpoint_with_the_user_key(broker: Any, tmp_path: Path) -> None:
    env = worker_env("")
    env.pop("RUNPOD_AI_API_KEY")
    env.update(RUNPOD_API_KEY=broker.api_key, PODBOOK_URL=broker.url, HOME=str(tmp_path))
    code, stderr = run_worker([str(SAMPLE_APP), "--endpoint", "no-such-lb"], env)
    assert code == 2
    line = one_line(stderr)
    assert "endpoint 'no-such-lb' does not exist" in line
    assert '"type": "LOAD_BALANCER"' in line
    assert broker.api_key not in stderr


@pytest.mark.parametrize(
    ("variables", "fragment"),
    [
        ({"PORT": "http"}, "PORT='http' is not a TCP port"),
        ({"PORT": "70000"}, "PORT='70000' is not a TCP port"),
        ({"HEALTH_CHECK_PATH": "ping"}, "HEALTH_CHECK_PATH='ping' must start with '/'"),
    ],
)
def test_bad_port_variables(
    broker: Any, lb: str, env: dict[str, str], variables: dict[str, str], fragment: str
) -> None:
    code, stderr = run_worker(
        [str(SAMPLE_APP), "--endpoint", lb, "--url", broker.url], {**env, **variables}
    )
    assert code == 2
    assert fragment in one_line(stderr)


def test_port_in_use(broker: Any, lb: str, env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, stderr = run_worker(
            [str(SAMPLE_APP), "--endpoint", lb, "--url", broker.url], {**env, "PORT": str(port)}
        )
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port} (PORT)" in one_line(stderr)


def test_app_sees_the_worker_key_not_the_user_key(broker: Any, lb: str, tmp_path: Path) -> None:
    """Started with the user's key only, the app's environment holds a worker key."""
    app = tmp_path / "keyspy.py"
    app.write_text(
        "import os, sys\n"
        "print('user key seen:', 'RUNPOD_API_KEY' in os.environ, file=sys.stderr)\n"
        "print('worker key:', os.environ['RUNPOD_AI_API_KEY'][:3], file=sys.stderr)\n"
        "app = 42\n"
    )
    env = worker_env("")
    env.pop("RUNPOD_AI_API_KEY")
    env.update(RUNPOD_API_KEY=broker.api_key, PODBOOK_URL=broker.url, HOME=str(tmp_path))
    code, stderr = run_worker([str(app), "--endpoint", lb], env)
    assert code == 2  # 42 is no app; the module ran first
    assert "user key seen: False" in stderr
    assert "worker key: wk_" in stderr
    assert broker.api_key not in stderr
