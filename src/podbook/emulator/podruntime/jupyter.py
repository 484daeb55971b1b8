"""The Jupyter server of a local-runtime pod (``startJupyter``).

A real JupyterLab (``python -m jupyterlab``; a bare ``python -m jupyter_server`` when
JupyterLab is not installed) bound to a loopback address, rooted in the pod's working
directory, running with the pod's environment, and protected by the pod's
``JUPYTER_PASSWORD``: the password page is what the user meets at the ``8888/http`` link.

- The password is hashed (``jupyter_server.auth.passwd``, argon2) into a config file of the
  sandbox (mode 0600); the plain password is never on a command line, in a file or in a log.
  Token authentication is off, changing the password from the login page too.
- Every Jupyter folder (config, runtime, data, lab settings and workspaces, IPython) lives
  under ``<sandbox.root>/.jupyter``, so the server never reads or writes the user's own
  Jupyter set-up. JupyterLab's news, update checks and extension installs are off (loopback only);
  language-server discovery (``jupyter_lsp``) is off, it only slows the start.
- The server runs in its own process group and gets SIGTERM if the emulator dies
  (``PR_SET_PDEATHSIG``, as the emulator's supervised workers do). Kernels and terminals
  start sessions of their own, so :meth:`PodJupyterServer.stop` ends the server's whole
  process tree: SIGTERM (the server shuts its kernels down), then SIGKILL for whatever is
  left after the grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import ipaddress
import json
import os
import signal
import socket
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from podbook.emulator.podruntime.box import AsyncBoxProcess
from podbook.emulator.podruntime.children import detach_child
from podbook.emulator.podruntime.sandbox import Sandbox

LogFn = Callable[[str], None]

_TAIL_LINES = 20
_LINE_LIMIT = 1 << 20  # the longest output line read whole (a traceback line can be long)
_CONFIG_NAME = "jupyter_server_config.json"


def jupyter_module() -> str:
    """The module to run: ``jupyterlab`` if installed, else ``jupyter_server``.

    Raises:
        RuntimeError: neither is installed (a one-line message).
    """
    for name in ("jupyterlab", "jupyter_server"):
        if importlib.util.find_spec(name) is not None:
            return name
    raise RuntimeError(
        "startJupyter needs jupyter_server (pip install jupyterlab); no Jupyter server started"
    )


def hash_password(password: str) -> str:
    """The password hashed as Jupyter expects it in ``hashed_password`` (argon2)."""
    try:
        from jupyter_server.auth.security import passwd
    except ImportError as exc:  # pragma: no cover (jupyter_module() checked it first)
        raise RuntimeError(f"cannot hash the Jupyter password: {exc}") from None
    return str(passwd(password))


def jupyter_dirs(sandbox: Sandbox) -> dict[str, Path]:
    """The Jupyter folders of the pod's server, each under ``<root>/.jupyter`` (in a box:
    ``/root/.jupyter`` on its container disk, where the server in the box finds them)."""
    if sandbox.box is not None and sandbox.container is not None:
        base = sandbox.container / "root" / ".jupyter"
    else:
        base = sandbox.root / ".jupyter"
    return {
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "JUPYTER_DATA_DIR": base / "data",
        "JUPYTERLAB_SETTINGS_DIR": base / "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "lab-workspaces",
        "IPYTHONDIR": base / "ipython",
    }


PRIVATE_PORT = 8888
"""The port a pod's Jupyter listens on inside its box (``8888/http``)."""


def _seen_by_pod(sandbox: Sandbox, path: Path) -> str:
    """``path`` as the pod's processes see it (in a box, the container disk is ``/``)."""
    if sandbox.box is not None and sandbox.container is not None:
        return "/" + str(path.relative_to(sandbox.container))
    return str(path)


def write_config(config_dir: Path, *, host: str, port: int, root_dir: Path, hashed: str) -> Path:
    """Write the server's config file (0600, the hash only) and return its path."""
    config = {
        "ServerApp": {
            "ip": host,
            "port": port,
            "port_retries": 0,
            "root_dir": str(root_dir),
            "open_browser": False,
            "allow_root": True,
            "allow_remote_access": False,
            # Language-server discovery spawns npm and scans PATH at every start: not needed.
            "jpserver_extensions": {"jupyter_lsp": False},
        },
        # Nothing that reaches beyond loopback: no news feed, no update check, no installs.
        "LabApp": {
            "news_url": None,
            "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
            "extension_manager": "readonly",
        },
        "IdentityProvider": {"token": ""},
        "PasswordIdentityProvider": {
            "hashed_password": hashed,
            "password_required": True,
            "allow_password_change": False,
        },
    }
    path = config_dir / _CONFIG_NAME
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=1)
    return path


def _write_lab_settings(settings_dir: Path) -> None:
    """No news and no update check: the emulator contacts loopback addresses only."""
    target = settings_dir / "@jupyterlab" / "apputils-extension"
    target.mkdir(parents=True, exist_ok=True)
    settings = {"fetchNews": "false", "checkForUpdates": False}
    (target / "notification.jupyterlab-settings").write_text(json.dumps(settings))


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _check_loopback(host: str) -> None:
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"the pod's Jupyter server binds loopback addresses only, not {host!r}")


@dataclass(eq=False)
class PodJupyterServer:
    """A running Jupyter server of one pod; create it with :meth:`start`."""

    host: str
    port: int
    listen_port: int
    """The port the server itself listens on (in a box: the private 8888)."""
    process: asyncio.subprocess.Process
    config_path: Path
    log: LogFn | None
    """Where each line the server prints goes (``None``: only kept for :meth:`tail`)."""
    _tail: deque[str] = field(init=False, default_factory=lambda: deque(maxlen=_TAIL_LINES))
    _reader: asyncio.Task[None] | None = field(init=False, default=None)

    @property
    def url(self) -> str:
        """The server's address (``http://HOST:PORT/``); it answers with its login page."""
        return f"http://{self.host}:{self.port}/"

    @property
    def pid(self) -> int:
        """Process id of the server (also its process group id)."""
        return self.process.pid

    @classmethod
    async def start(
        cls,
        *,
        host: str,
        port: int,
        sandbox: Sandbox,
        password: str,
        log: LogFn | None = None,
        timeout: float = 60.0,
    ) -> PodJupyterServer:
        """Start the pod's Jupyter server and return once it answers HTTP.

        Args:
            host: loopback address to bind (``127.0.0.0/8``).
            port: port to bind; 0 picks a free one.
            sandbox: the pod's sandbox (root for the Jupyter folders, workdir, environment).
            password: the pod's ``JUPYTER_PASSWORD``; only its hash is written down.
            log: called with each line the server prints (none holds the password or its hash).
            timeout: seconds to wait for the login page (``GET /login``) to be served.

        Raises:
            RuntimeError: Jupyter is not installed, the server exited, or it did not answer
                within ``timeout``: one line when ``log`` got the server's lines, else with
                the last lines it printed.
            ValueError: ``host`` is not a loopback address or the password is empty.
        """
        _check_loopback(host)
        if not password:
            raise ValueError("the pod's Jupyter server needs a non-empty password")
        module = jupyter_module()
        dirs = jupyter_dirs(sandbox)
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        dirs["JUPYTER_CONFIG_DIR"].chmod(0o700)
        _write_lab_settings(dirs["JUPYTERLAB_SETTINGS_DIR"])
        sandbox.workdir.mkdir(parents=True, exist_ok=True)
        if port == 0:
            port = _free_port(host)
        box = sandbox.box
        # In a box the server listens on the private port; the box carries the public one.
        listen = PRIVATE_PORT if box is not None else port
        root_dir = sandbox.cwd
        config_path = write_config(
            dirs["JUPYTER_CONFIG_DIR"],
            host=box.private_host if box is not None else host,
            port=listen,
            root_dir=Path(root_dir),
            hashed=await asyncio.to_thread(hash_password, password),  # argon2: not on the loop
        )
        env = dict(sandbox.env)
        env.pop("JUPYTER_TOKEN", None)
        env.pop("JUPYTER_TOKEN_FILE", None)
        env.update({name: _seen_by_pod(sandbox, path) for name, path in dirs.items()})
        env["PYTHONUNBUFFERED"] = "1"
        # The emulator's interpreter has jupyter; pod processes may have a minimal PATH.
        env.setdefault("PATH", os.environ.get("PATH", "/usr/bin:/bin"))
        argv = [sys.executable, "-m", module, "--no-browser", "--allow-root"]
        process: Any
        if box is not None:
            process = await AsyncBoxProcess.start(
                box, argv, env=env, cwd=str(root_dir), limit=_LINE_LIMIT
            )
        else:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(sandbox.workdir),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                limit=_LINE_LIMIT,
                start_new_session=True,
                preexec_fn=sandbox.preexec or (detach_child if sys.platform == "linux" else None),
            )
        server = cls(host, port, listen, process, config_path, log)
        server._reader = asyncio.get_running_loop().create_task(server._read_output())
        try:
            await server._wait_ready(timeout)
        except BaseException:
            await server.stop()
            raise
        return server

    def _emit(self, line: str) -> None:
        self._tail.append(line)
        if self.log is not None:
            with contextlib.suppress(Exception):
                self.log(line)

    async def _read_output(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            try:
                raw = await stream.readline()
            except ValueError:  # a line over _LINE_LIMIT: what was read of it is dropped
                self._emit("(an over-long line of the Jupyter server left out)")
                continue
            if not raw:
                return
            self._emit(raw.decode("utf-8", "replace").rstrip("\r\n"))

    def tail(self) -> str:
        """The last lines the server printed (for error messages)."""
        return "\n".join(self._tail)

    def _tail_note(self) -> str:
        """Nothing when the lines went to ``log`` (the error is one line), else the tail."""
        return "" if self.log is not None else f":\n{self.tail()}"

    async def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        # The login page: what the user meets, and (unlike /api/status, 403) no warning line.
        login = f"{self.url}login"
        import httpx  # on first use: the emulator starts without it

        async with httpx.AsyncClient(timeout=2.0, trust_env=False) as client:
            while True:
                if self.process.returncode is not None:
                    await asyncio.sleep(0.1)  # let the reader catch the last lines
                    raise RuntimeError(
                        f"the pod's Jupyter server exited with {self.process.returncode} "
                        f"before answering on {self.url}{self._tail_note()}"
                    )
                # Only our process listening counts: another server on the port is not ours.
                if self._listening():
                    with contextlib.suppress(httpx.TransportError):
                        if (await client.get(login)).status_code == 200:
                            return
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the pod's Jupyter server did not answer on {self.url} within "
                        f"{timeout:.0f} s{self._tail_note()}"
                    )
                await asyncio.sleep(0.1)

    def _listening(self) -> bool:
        """Whether the server process itself listens on its port."""
        try:
            connections = psutil.Process(self.process.pid).net_connections("tcp")
        except psutil.Error:
            return False
        return any(
            c.status == psutil.CONN_LISTEN and c.laddr and c.laddr[1] == self.listen_port
            for c in connections
        )

    def _tree(self) -> list[psutil.Process]:
        """The server and every live descendant (kernels and terminals have own sessions)."""
        try:
            root = psutil.Process(self.process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def pids(self) -> list[int]:
        """The server's process while it runs (its kernels are its descendants)."""
        alive = self.process.returncode is None and self.process.pid > 0
        return [self.process.pid] if alive else []

    async def stop(self, grace: float = 5.0) -> None:
        """Stop the server and everything it started: SIGTERM, then SIGKILL after ``grace``."""
        tree = self._tree()
        if self.process.returncode is None and self.process.pid > 0:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.process.wait(), grace)
        # Whatever is still alive: the server's group while its leader is not yet reaped
        # (its id cannot have been reused), and every descendant seen before or now.
        tree.extend(self._tree())
        if self.process.returncode is None and self.process.pid > 0:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                proc.kill()  # psutil checks it is still the same process (no pid reuse)
        with contextlib.suppress(ProcessLookupError):
            await self.process.wait()
        with contextlib.suppress(psutil.Error):
            await asyncio.to_thread(psutil.wait_procs, tree, 2)
        if self._reader is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._reader, 1)
            if not self._reader.done():
                self._reader.cancel()
