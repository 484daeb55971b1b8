"""Fixtures for browser tests: Debian's Chromium for Playwright, and a throw-away JupyterLab.

The lab's kernels talk to the test emulator (the ``emulator`` fixture of ``tests/conftest.py``)
through ``PODBOOK_URL`` and ``RUNPOD_API_KEY`` in their environment, so no key is ever written
into a notebook.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .jupyterlab import LabServer, NotebookServer, kernel_env

CHROMIUM = "/usr/lib/chromium/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "browser"
# The screenshots the README and the documentation site show, cropped to one panel: the
# browser tests write them at every run, so they show what the panels really look like.
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


# pytest-base-url (pulled in by pytest-playwright) still defines an instance-method fixture.
_BASE_URL_WARNING = "ignore:Session-scoped fixtures defined as instance methods"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder is a browser test."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.filterwarnings(_BASE_URL_WARNING))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch Debian's Chromium (``playwright install`` is never used here)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing; run `make setup-browser` (apt-get install chromium)")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    """A viewport large enough for a notebook and its panels."""
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}}


@pytest.fixture(scope="session")
def lab_kernel_env(emulator: Any) -> dict[str, str]:
    """Environment for the lab's kernels: podbook pointed at the test emulator."""
    return kernel_env(emulator)


@pytest.fixture(scope="session")
def jupyter_lab(
    tmp_path_factory: pytest.TempPathFactory, lab_kernel_env: dict[str, str]
) -> Iterator[LabServer]:
    """A JupyterLab on a free loopback port with every Jupyter dir in a temp folder."""
    with LabServer(base=tmp_path_factory.mktemp("jupyterlab"), kernel_env=lab_kernel_env) as lab:
        yield lab


@pytest.fixture(scope="session")
def local_emulator(start_emulator: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An emulator whose pods run for real (``--runtime local``, as the embedded one's), with an
    SSH key registered on the account (so ``--ssh`` pods have SSH servers and commands), and a
    folder every pod sees read-only (``slow_jupyter``: a Jupyter config that starts slowly, as
    the service's images do, for a pod whose ``JUPYTER_CONFIG_PATH`` names it)."""
    slow = tmp_path_factory.mktemp("slow-jupyter")
    (slow / "jupyter_server_config.py").write_text("import time\ntime.sleep(8)\n")
    emulator = start_emulator(extra_args=("--runtime", "local", "--share-ro", str(slow)))
    emulator.slow_jupyter = slow
    key = tmp_path_factory.mktemp("browser-ssh") / "id_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    with emulator.http() as http:
        public = key.with_suffix(".pub").read_text(encoding="utf-8").strip()
        assert http.put("/v2/account/ssh-keys", json={"keys": [public]}).status_code == 200
    return emulator


@pytest.fixture(scope="session")
def local_lab(tmp_path_factory: pytest.TempPathFactory, local_emulator: Any) -> Iterator[LabServer]:
    """A JupyterLab whose kernels use the ``--runtime local`` emulator (SSH that connects)."""
    base = tmp_path_factory.mktemp("lab-local")
    with LabServer(base=base, kernel_env=kernel_env(local_emulator)) as lab:
        yield lab


@pytest.fixture(scope="session")
def notebook7(
    tmp_path_factory: pytest.TempPathFactory, start_emulator: Any
) -> Iterator[NotebookServer]:
    """A Jupyter Notebook 7 whose kernels use an emulator of their own whose pods really run
    (``--runtime local``: the quickstart SSHes into its pod). Its own, so that the workers the
    notebooks serve by name (``demo``, ``flaky``...) never meet those of the lab's runs. Its
    serverless workers, boxed as its pods, see the notebooks' folder (``--share-ro``), as
    those of the embedded emulator see the folder of the notebook that started it: the
    streaming notebook's endpoint runs a handler file it writes there."""
    base = tmp_path_factory.mktemp("notebook7")
    root = NotebookServer(base=base).root_dir
    root.mkdir(parents=True, exist_ok=True)
    emulator = start_emulator(extra_args=("--runtime", "local", "--share-ro", str(root)))
    with NotebookServer(base=base, kernel_env=kernel_env(emulator)) as server:
        yield server


@pytest.fixture
def artifacts_dir() -> Path:
    """Where screenshots are saved (``artifacts/browser``)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def docs_images() -> Path:
    """Where the screenshots of the README and the docs are saved (``docs/images``)."""
    DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
    return DOCS_IMAGES


@pytest.fixture
def console_messages(page: Any) -> list[str]:
    """Browser console lines of the test's page, to print when a wait fails."""
    messages: list[str] = []
    page.on("console", lambda msg: messages.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda exc: messages.append(f"pageerror: {exc}"))
    return messages
