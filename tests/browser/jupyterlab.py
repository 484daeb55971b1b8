"""A throw-away JupyterLab (or Jupyter Notebook 7) server for browser tests, and helpers to
drive it with Playwright.

Everything the server writes (config, runtime, settings, workspaces, IPython profile) lives in
one temporary folder, so a test run never touches the user's Jupyter set-up. The recipe is the
one in ``TESTING.md`` §4: loopback only, token auth, ``expose_app_in_browser`` so that the test
can reach ``window.jupyterapp``, and a kernel-readiness wait before running cells.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import httpx
import nbformat
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from typing_extensions import Self

# Variables that would point a kernel at the user's real cloud or real podbook home.
_LEAKY_ENV = (
    "RUNPOD_API_KEY",
    "RUNPOD_PROFILE",
    "PODBOOK_URL",
    "PODBOOK_REST_URL",
    "PODBOOK_QUEUE_URL",
    "PODBOOK_V1_URL",
    "PODBOOK_LOCAL",
    "PODBOOK_HOME",
    "JUPYTER_TOKEN",
    "JUPYTER_PASSWORD",
)

KERNEL_READY_JS = """() => {
  const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = widget && widget.sessionContext && widget.sessionContext.session
    && widget.sessionContext.session.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LabServer:
    """A running ``jupyter lab`` process bound to loopback, rooted at ``root_dir``."""

    base: Path
    kernel_env: Mapping[str, str] = field(default_factory=dict)
    port: int = 0
    token: str = ""
    process: subprocess.Popen[bytes] | None = None

    module: ClassVar[str] = "jupyterlab"
    """What ``python -m`` runs."""
    app_class: ClassVar[str] = "LabApp"
    """The Jupyter app class whose ``expose_app_in_browser`` sets ``window.jupyterapp``."""

    @property
    def root_dir(self) -> Path:
        """The folder the lab serves; notebooks written here can be opened."""
        return self.base / "root"

    @property
    def url(self) -> str:
        """Base URL of the server (no token)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        """Where the server's stdout and stderr go."""
        return self.base / "jupyterlab.log"

    def notebook_url(self, name: str) -> str:
        """URL that opens ``name`` (relative to the root) in a fresh workspace."""
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until ``/api/status`` answers."""
        dirs = {
            "JUPYTER_CONFIG_DIR": self.base / "config",
            "JUPYTER_RUNTIME_DIR": self.base / "runtime",
            "JUPYTERLAB_SETTINGS_DIR": self.base / "lab-settings",
            "JUPYTERLAB_WORKSPACES_DIR": self.base / "lab-workspaces",
            "IPYTHONDIR": self.base / "ipython",
            "PODBOOK_HOME": self.base / "podbook-home",
        }
        for path in [self.root_dir, *dirs.values()]:
            path.mkdir(parents=True, exist_ok=True)
        self._write_settings(dirs["JUPYTERLAB_SETTINGS_DIR"])

        env = {k: v for k, v in os.environ.items() if k not in _LEAKY_ENV}
        env.update({k: str(v) for k, v in dirs.items()})
        env.update(self.kernel_env)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            self.command(), env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        self._wait_ready(timeout)

    def command(self) -> list[str]:
        """The server's command line: loopback, token auth, the app exposed to the page."""
        return [
            sys.executable,
            "-m",
            self.module,
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--port-retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--{self.app_class}.expose_app_in_browser=True",
        ]

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the server (and its kernels) started by :meth:`start`."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server log, for failure messages."""
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        status_url = f"{self.url}/api/status?token={self.token}"
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited early:\n{self.log_tail()}")
            try:
                if httpx.get(status_url, timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"jupyter lab not ready after {timeout:.0f} s:\n{self.log_tail()}")

    @staticmethod
    def _write_settings(settings_dir: Path) -> None:
        """No news pop-up; every cell rendered (no windowing), so the DOM holds all outputs."""
        settings = {
            "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
            "notebook-extension/tracker": {"windowingMode": "none"},
        }
        for plugin, values in settings.items():
            package, name = plugin.split("/")
            target = settings_dir / "@jupyterlab" / package
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{name}.jupyterlab-settings").write_text(json.dumps(values))


@dataclass
class NotebookServer(LabServer):
    """A running Jupyter Notebook 7 (``python -m notebook``), set up like :class:`LabServer`.

    Notebook 7 is built from JupyterLab's parts: the same settings folder and plugins, the
    same output DOM, and with ``expose_app_in_browser`` the same ``window.jupyterapp``, whose
    ``shell.currentWidget`` is the open notebook. It opens a notebook at ``/notebooks/<path>``
    (its file browser is at ``/tree``).
    """

    module: ClassVar[str] = "notebook"
    app_class: ClassVar[str] = "JupyterNotebookApp"

    def notebook_url(self, name: str) -> str:
        """URL that opens ``name`` (relative to the root) in Notebook 7's notebook page."""
        return f"{self.url}/notebooks/{name}?token={self.token}"


WIDGET_VIEWS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  let expected = 0;
  for (const cell of panel.content.widgets) {
    if (cell.model.type !== 'code') continue;
    const outputs = cell.model.outputs;
    for (let i = 0; i < outputs.length; i++) {
      const data = outputs.get(i).data || {};
      if (data['application/vnd.jupyter.widget-view+json']) expected += 1;
    }
  }
  // A widget output is an output panel without a MIME type; the view's root is in its widget.
  const selector = '.jp-OutputArea-output:not([data-mime-type]) > .lm-Widget > [class*="podbook-"]';
  const kind = (node) => [...node.classList].find((c) => c.startsWith('podbook-'));
  return {expected, kinds: [...panel.node.querySelectorAll(selector)].map(kind)};
}"""


def every_view_rendered(page: Any, timeout_ms: int = 30_000) -> list[str]:
    """Wait until every output of the open notebook that carries a widget view shows its
    podbook view (not a fallback); the kind of each (``podbook-pod``, ``podbook-job``...)."""
    check = f"() => {{ const r = ({WIDGET_VIEWS_JS})(); return r.kinds.length === r.expected; }}"
    with contextlib.suppress(PlaywrightTimeout):  # the assertion below says what is missing
        page.wait_for_function(check, timeout=timeout_ms, polling=250)
    found = page.evaluate(WIDGET_VIEWS_JS)
    assert len(found["kinds"]) == found["expected"], found
    return [str(kind) for kind in found["kinds"]]


def kernel_env(emulator: Any) -> dict[str, str]:
    """Environment that points a server's kernels at ``emulator`` (no key in any notebook)."""
    return {"PODBOOK_URL": emulator.url, "RUNPOD_API_KEY": emulator.api_key}


def write_notebook(root: Path, name: str, cells: list[str | tuple[str, str]]) -> Path:
    """Write a notebook of code cells (or ``("markdown", text)`` pairs) under ``root``."""
    nb = nbformat.v4.new_notebook()
    for cell in cells:
        if isinstance(cell, tuple):
            kind, source = cell
            assert kind == "markdown", kind
            nb.cells.append(nbformat.v4.new_markdown_cell(source))
        else:
            nb.cells.append(nbformat.v4.new_code_cell(cell))
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = root / name
    nbformat.write(nb, path)
    return path


def open_and_run_all(page: Any, lab: LabServer, name: str, timeout_ms: int = 60_000) -> None:
    """Open notebook ``name``, wait until its kernel is really idle, then run every cell."""
    page.goto(lab.notebook_url(name))
    page.wait_for_function(KERNEL_READY_JS, timeout=timeout_ms, polling=100)
    # Fire and forget: the caller waits on what the cells render, each wait with a timeout.
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def on_a_fresh_node(action: Any, tries: int = 3) -> Any:
    """Run a locator ``action``, again when its element was replaced meanwhile (a panel's
    displays are sent once more after its cell ends, replacing its output node)."""
    from playwright.sync_api import Error

    for attempt in range(tries):
        try:
            return action()
        except Error as err:
            if "not attached to the DOM" not in str(err) or attempt == tries - 1:
                raise
    return None


@contextlib.contextmanager
def pod_under_test(
    page: Any, emulator: Any, pod_id: str, evidence: Path, console: list[str]
) -> Any:
    """The block's assertions on a pod's panel: on a failure, a screenshot (``evidence``) and
    the browser console's last lines; the pod is deleted afterwards in any case."""
    try:
        yield
    except AssertionError:
        page.screenshot(path=str(evidence))
        print("\n".join(console[-30:]))
        raise
    finally:
        with emulator.http() as http:
            http.delete(f"/v2/pods/{pod_id}")
