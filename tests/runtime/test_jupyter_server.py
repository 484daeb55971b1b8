"""The Jupyter server of a local-runtime pod, on its own (no emulator): a temporary sandbox,
a real JupyterLab process on a loopback port, its password page, a login with the right and
the wrong password, the files it writes, and no process left behind after ``stop()``."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from processes import BackgroundLoop

from podbook.emulator.podruntime.jupyter import PodJupyterServer, jupyter_dirs
from podbook.emulator.podruntime.sandbox import Sandbox

PASSWORD = "pod-pw-Zq81xVmc"


def make_sandbox(root: Path, password: str = PASSWORD) -> Sandbox:
    """A sandbox as the runtime makes one: a workdir, the pod's env with its password."""
    workdir = root / "workspace"
    workdir.mkdir(parents=True)
    (workdir / "hello.txt").write_text("from the pod\n")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "RUNPOD_POD_ID": "podjupytertest",
        "JUPYTER_PASSWORD": password,
    }
    return Sandbox(root=root, workdir=workdir, env=env, mounts={"/workspace": workdir})


class Running:
    """A started server, the lines it logged, and the loop its output reader runs on."""

    def __init__(self, server: PodJupyterServer, lines: list[str], loop: BackgroundLoop):
        self.server = server
        self.lines = lines
        self.loop = loop


def start_server(loop: BackgroundLoop, root: Path, **options: Any) -> PodJupyterServer:
    """A pod Jupyter server with a sandbox under ``root``: on 127.0.0.1, any free port, the
    pod password, unless ``options`` say otherwise (``host``, ``port``, ``password``, ``log``)."""
    settings = {"host": "127.0.0.1", "port": 0, "password": PASSWORD, **options}
    return loop.run(PodJupyterServer.start(sandbox=make_sandbox(root), **settings))


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """One pod Jupyter server for the module's tests (stopped at the end)."""
    loop = BackgroundLoop()
    lines: list[str] = []
    server = start_server(loop, tmp_path_factory.mktemp("podjupyter"), log=lines.append)
    try:
        yield Running(server, lines, loop)
    finally:
        loop.run(server.stop())
        loop.close()


def client_of(url: str) -> httpx.Client:
    """A cookie-keeping client of the server (no proxy from the environment)."""
    return httpx.Client(base_url=url, timeout=10, trust_env=False)


def login(client: httpx.Client, password: str) -> httpx.Response:
    """Post the login form as a browser does (the ``_xsrf`` cookie and field)."""
    page = client.get("/login")
    assert page.status_code == 200
    xsrf = client.cookies.get("_xsrf")
    assert xsrf, "the login page sets an _xsrf cookie"
    return client.post("/login", data={"password": password, "_xsrf": xsrf})


def test_the_link_is_a_password_page_on_loopback(running: Running) -> None:
    server = running.server
    assert server.url == f"http://127.0.0.1:{server.port}/"
    with httpx.Client(timeout=10, trust_env=False) as client:
        first = client.get(server.url, follow_redirects=True)
        api = client.get(f"{server.url}api/contents")
    assert first.status_code == 200
    assert first.url.path == "/login", "no token in the link: the password page is shown"
    assert 'name="password"' in first.text
    assert api.status_code == 403, "the API is closed without the password"
    listening = {
        c.laddr
        for c in psutil.Process(server.pid).net_connections("tcp")
        if c.status == psutil.CONN_LISTEN
    }
    assert listening and all(addr.ip == "127.0.0.1" for addr in listening), listening


def test_a_wrong_password_is_refused(running: Running) -> None:
    with client_of(running.server.url) as client:
        response = login(client, "not-the-password")
        assert response.status_code == 401
        assert "Invalid credentials" in response.text
        assert client.get("/api/contents").status_code == 403
    with client_of(running.server.url) as client:
        response = login(client, "")
        assert response.status_code == 401


def test_the_pod_password_opens_the_server_rooted_in_the_workdir(running: Running) -> None:
    with client_of(running.server.url) as client:
        response = login(client, PASSWORD)
        assert response.status_code == 302, response.text[:300]
        assert client.get("/api/status").status_code == 200
        names = {item["name"] for item in client.get("/api/contents").json()["content"]}
        assert "hello.txt" in names
        lab = client.get("/lab")
        assert lab.status_code == 200 and "JupyterLab" in lab.text


def test_a_kernel_runs_with_the_pod_environment(running: Running) -> None:
    """Kernels start in the workdir with the pod's env; stop() ends them (next test)."""
    with client_of(running.server.url) as client:
        response = login(client, PASSWORD)
        assert response.status_code == 302
        xsrf = client.cookies.get("_xsrf") or ""
        kernel = client.post(
            "/api/kernels", json={"name": "python3"}, headers={"X-XSRFToken": xsrf}
        )
        assert kernel.status_code == 201, kernel.text
    kernel_pids = [
        p.pid for p in psutil.Process(running.server.pid).children(recursive=True) if p.pid
    ]
    assert kernel_pids, "the kernel is a child of the server"
    env = psutil.Process(kernel_pids[0]).environ()
    assert env["RUNPOD_POD_ID"] == "podjupytertest"
    assert env["JUPYTER_CONFIG_DIR"].startswith(str(running.server.config_path.parents[2]))


def test_only_the_hash_is_written_and_nothing_secret_is_logged(running: Running) -> None:
    config_path = running.server.config_path
    assert stat.S_IMODE(config_path.stat().st_mode) == 0o600
    text = config_path.read_text()
    config = json.loads(text)
    assert PASSWORD not in text
    hashed = config["PasswordIdentityProvider"]["hashed_password"]
    assert hashed.startswith("argon2:")
    assert config["IdentityProvider"]["token"] == ""
    assert config["ServerApp"]["allow_remote_access"] is False
    cmdline = " ".join(psutil.Process(running.server.pid).cmdline())
    assert PASSWORD not in cmdline and hashed not in cmdline
    logged = "\n".join(running.lines)
    assert any("Jupyter Server" in line and "is running at" in line for line in running.lines)
    assert PASSWORD not in logged and hashed not in logged
    for path in config_path.parents[1].rglob("*"):
        if path.is_file() and path.stat().st_size < 1_000_000:
            assert PASSWORD not in path.read_text(errors="replace"), path


def test_the_user_jupyter_settings_are_not_touched(running: Running) -> None:
    sandbox_root = running.server.config_path.parents[2]
    env = psutil.Process(running.server.pid).environ()
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR"):
        assert Path(env[name]).is_relative_to(sandbox_root), name
    assert "JUPYTER_TOKEN" not in env


def test_stop_leaves_no_process(tmp_path: Path) -> None:
    """A server with a kernel and a terminal (sessions of their own) stops completely."""
    loop = BackgroundLoop()
    try:
        server = start_server(loop, tmp_path)
        with client_of(server.url) as client:
            response = login(client, PASSWORD)
            assert response.status_code == 302
            headers = {"X-XSRFToken": client.cookies.get("_xsrf") or ""}
            assert client.post("/api/kernels", json={}, headers=headers).status_code == 201
            assert client.post("/api/terminals", json={}, headers=headers).status_code == 200
        root = psutil.Process(server.pid)
        tree = [root, *root.children(recursive=True)]
        assert len(tree) >= 3, tree
        assert len({os.getpgid(p.pid) for p in tree}) >= 2, "kernels have their own group"
        loop.run(server.stop())
        gone, alive = psutil.wait_procs(tree, timeout=5)
        assert not alive, alive
        assert server.process.returncode is not None
    finally:
        loop.close()


def test_stop_kills_a_server_that_ignores_sigterm(tmp_path: Path) -> None:
    loop = BackgroundLoop()
    try:
        server = start_server(loop, tmp_path)
        os.kill(server.pid, 19)  # SIGSTOP: a hung server does not act on SIGTERM
        tree = [psutil.Process(server.pid)]
        loop.run(server.stop(grace=0.5))
        _, alive = psutil.wait_procs(tree, timeout=5)
        assert not alive
    finally:
        loop.close()


def test_a_port_in_use_is_a_clear_error(tmp_path: Path, running: Running) -> None:
    """Another server on the port is not taken for ours; the error says why."""
    loop = BackgroundLoop()
    try:
        with pytest.raises(RuntimeError, match="exited with") as info:
            start_server(loop, tmp_path / "a", port=running.server.port)
        assert "already in use" in str(info.value), "no log callback: the tail is in it"
        lines: list[str] = []
        with pytest.raises(RuntimeError) as info:
            start_server(loop, tmp_path / "b", port=running.server.port, log=lines.append)
        assert "\n" not in str(info.value), "one line for the pod log"
        assert any("already in use" in line for line in lines)
    finally:
        loop.close()


def test_loopback_only_and_a_password_required(tmp_path: Path) -> None:
    loop = BackgroundLoop()
    try:
        with pytest.raises(ValueError, match="loopback"):
            start_server(loop, tmp_path, host="0.0.0.0")
        with pytest.raises(ValueError, match="password"):
            start_server(loop, tmp_path / "b", password="")
    finally:
        loop.close()


def test_without_jupyter_a_one_line_error(monkeypatch: Any) -> None:
    import importlib.util

    from podbook.emulator.podruntime import jupyter

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(RuntimeError) as info:
        jupyter.jupyter_module()
    assert "\n" not in str(info.value) and "jupyter" in str(info.value)
    assert sys.modules["podbook.emulator.podruntime.jupyter"] is jupyter


def test_jupyter_dirs_live_under_the_sandbox(tmp_path: Path) -> None:
    dirs = jupyter_dirs(make_sandbox(tmp_path))
    assert all(path.is_relative_to(tmp_path / ".jupyter") for path in dirs.values())
