"""Every notebook in ``notebooks/`` runs headless against an emulator, cleanly and secret-free.

Each notebook is executed with nbclient in a real kernel pointed at an emulator whose pods
really run (``--runtime local``, as the embedded one) through ``PODBOOK_URL`` and
``RUNPOD_API_KEY``. While it runs, a watcher reads the account's pods over
HTTP and remembers every secret-looking env value (a generated ``JUPYTER_PASSWORD``, say);
afterwards none of them, nor the API key, may appear anywhere in the saved notebook: outputs,
widget state or metadata.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import psutil
import pytest
from kernels import ipc_kernel_manager
from nbclient import NotebookClient

from podbook.api.secrets import is_secret_name

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
CLEARED_ENV = (
    "RUNPOD_API_KEY",
    "RUNPOD_PROFILE",
    "PODBOOK_URL",
    "PODBOOK_REST_URL",
    "PODBOOK_QUEUE_URL",
    "PODBOOK_V1_URL",
    "PODBOOK_LOCAL",
    "PODBOOK_HOME",
)
# Values shorter than this are too common to search for meaningfully.
MIN_SECRET_LENGTH = 8

by_name = pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])


class PodWatcher:
    """Polls ``GET /v2/pods?includeClusterPods=true`` in a thread while a notebook runs."""

    def __init__(self, url: str, api_key: str, interval: float = 0.1) -> None:
        self._http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {api_key}"}, timeout=5
        )
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.secrets: set[str] = set()
        self.pod_ids: set[str] = set()

    def pods(self) -> list[dict[str, Any]]:
        """The account's pods now, cluster members included."""
        response = self._http.get("/v2/pods", params={"includeClusterPods": "true"})
        response.raise_for_status()
        body = response.json()
        return body["pods"] if isinstance(body, dict) else body

    def _record(self) -> None:
        for pod in self.pods():
            self.pod_ids.add(pod["id"])
            for name, value in (pod.get("env") or {}).items():
                if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH:
                    self.secrets.add(value)

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(httpx.HTTPError):
                self._record()
            self._stop.wait(self._interval)

    def __enter__(self) -> PodWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._http.close()


def kernel_env(emulator: Any, home: Path) -> dict[str, str]:
    """The kernel's environment: podbook pointed at the test emulator, nothing of the user's."""
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    env.update(
        PODBOOK_URL=emulator.url,
        RUNPOD_API_KEY=emulator.api_key,
        PODBOOK_HOME=str(home / "podbook"),
        IPYTHONDIR=str(home / "ipython"),
    )
    return env


def error_outputs(nb: nbformat.NotebookNode) -> list[str]:
    """One line per error output or stderr stream in the notebook."""
    found = []
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"cell {index}: {out.get('ename')}: {out.get('evalue')}")
            elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                found.append(f"cell {index} stderr: {out.get('text', '').strip()[:200]}")
    return found


def private_notebooks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of ``notebooks/`` to run them in: the files a notebook writes beside itself (the
    streaming notebook's handler file) never land in the repository, where another module's
    run of the same notebook, at the same time, would meet them."""
    folder = tmp_path_factory.mktemp("notebooks")
    shutil.copytree(NOTEBOOKS[0].parent, folder, dirs_exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def notebook_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this module's notebooks run (:func:`private_notebooks`)."""
    return private_notebooks(tmp_path_factory)


@pytest.fixture(scope="module")
def notebook_emulator(start_emulator: Any, notebook_folder: Path) -> Any:
    """An emulator whose pods run for real, as the embedded one's (SSH, logs, volumes). Its
    serverless workers see the notebooks' folder, as the embedded emulator's see the folder
    of the notebook that started it."""
    return start_emulator(extra_args=("--runtime", "local", "--share-ro", str(notebook_folder)))


@pytest.fixture(scope="module")
def executed(
    request: pytest.FixtureRequest,
    notebook_emulator: Any,
    notebook_folder: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Any]:
    """Run the notebook at ``request.param`` once; yield (saved text, nb, watcher, before, after)."""
    path: Path = request.param
    emulator = notebook_emulator
    tmp_path = tmp_path_factory.mktemp(path.stem)
    nb = nbformat.read(path, as_version=4)
    with PodWatcher(emulator.url, emulator.api_key) as watcher:
        before = {pod["id"] for pod in watcher.pods()}
        client = NotebookClient(
            nb,
            km=ipc_kernel_manager(),
            timeout=120,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(notebook_folder)}},
        )
        client.execute(env=kernel_env(emulator, tmp_path))
        after = {pod["id"] for pod in watcher.pods()}
    saved = tmp_path / path.name
    nbformat.write(nb, saved)
    yield saved.read_text(), nb, watcher, before, after


@by_name
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    dirty = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"{path.name}: clear the outputs of cells {dirty} before committing"
    assert "widgets" not in nb.metadata, f"{path.name}: saved widget state; clear it"


@pytest.mark.parametrize("executed", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS], indirect=True)
def test_notebook_runs_without_errors_or_secrets(executed: Any, notebook_emulator: Any) -> None:
    text, nb, watcher, before, after = executed
    emulator = notebook_emulator
    assert error_outputs(nb) == []
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code_cells), "some code cells did not run"

    sources = "\n".join(c.source for c in code_cells)
    if "%pod create" in sources:
        assert watcher.pod_ids - before, "the watcher never saw the notebook's pods"
    if "--jupyter" in sources:
        assert watcher.secrets, "the watcher never saw the generated JUPYTER_PASSWORD"

    assert emulator.api_key not in text, "the API key reached the saved notebook"
    leaked = sorted(s for s in watcher.secrets if s in text)
    assert not leaked, f"{len(leaked)} secret env value(s) reached the saved notebook"
    # The notebook cleans up after itself: nothing it created is left running.
    assert after <= before, f"pods left behind: {sorted(after - before)}"


@pytest.mark.parametrize("executed", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS], indirect=True)
def test_notebook_panels_are_saved_as_widgets(executed: Any) -> None:
    text, nb, *_ = executed
    views = [
        out
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
    ]
    assert views, "no widget view was saved: the panels did not display"
    # Without a live kernel (nbviewer, GitHub, a closed kernel) the static forms are shown.
    for view in views:
        plain = view["data"].get("text/plain", "")
        assert view["data"].get("text/html"), "a panel was saved without its static HTML"
        assert plain and "Panel(" not in plain and "Widget(" not in plain, plain[:80]
    state = json.dumps(nb.metadata.get("widgets", {}))
    assert "podbook" in state or "anywidget" in state, "widget state missing from the metadata"


def cell_text(nb: nbformat.NotebookNode, marker: str) -> str:
    """The text output of the code cell whose source holds ``marker``."""
    cell = next(c for c in nb.cells if c.cell_type == "code" and marker in c.source)
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", "") or out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


@pytest.mark.parametrize("executed", [NOTEBOOKS[0].parent / "quickstart.ipynb"], indirect=True)
def test_quickstart_pods_really_run(executed: Any, notebook_emulator: Any) -> None:
    """SSH from a cell lands in the pod, the log is the pod's command, the volume is shared
    (at ``/data`` itself in the sandbox, as on the service; at the folder the process runtime
    maps where there is none)."""
    _, nb, watcher, *_ = executed
    over_ssh = cell_text(nb, "!{direct.command}").split()
    assert over_ssh and over_ssh[0] in watcher.pod_ids, over_ssh  # printenv RUNPOD_POD_ID
    assert "Linux" in over_ssh and "Permission denied" not in over_ssh
    log = cell_text(nb, "%pod logs {pod.id}")
    assert log.count("[container] hello from the main process") == 2  # created, then started
    assert "[system]" not in log
    read = cell_text(nb, "reader = %pod create").strip().splitlines()[-1]
    sandbox = httpx.get(f"{notebook_emulator.url}/healthz").json()["pods"]["sandbox"]
    if sandbox == "bwrap":
        assert read.startswith("read /data/hello.txt: "), read
    else:  # the folder the process runtime maps, not the service's path
        assert read.startswith("read /") and "/hello.txt: " in read, read
        assert not read.startswith("read /data/"), read


@pytest.mark.parametrize(
    "executed", [NOTEBOOKS[0].parent / "streaming_inference.ipynb"], indirect=True
)
def test_streaming_scales_from_zero_and_back(executed: Any, notebook_folder: Path) -> None:
    """The "Scale from zero" section: 20 jobs served by workers the emulator started from the
    endpoint's start command (a runpod-SDK handler file), and the health panel's timeline saw
    each worker start (its cold start) and go; the saved widget state keeps the timeline."""
    _, nb, *_ = executed
    squares = cell_text(nb, "scale_jobs = [").strip()
    assert squares == str([n * n for n in range(20)]), squares
    summary = cell_text(nb, "def scaled_to_zero").strip()
    seen = re.match(
        r"worker timeline, last [\d.]+ (?:s|min): (\d+) worker\(s\) seen \((\d+) gone\); "
        r"cold start\(s\) [\d.]+ s",
        summary,
    )
    assert seen and seen[1] == seen[2] and int(seen[1]) >= 1, summary
    assert "queue peak " in summary, summary
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    timelines = [
        model["state"]["timeline"]
        for model in state.values()
        if (model.get("state") or {}).get("timeline", {}).get("lanes")
    ]
    assert timelines, "no health panel with worker lanes in the saved widget state"
    lanes = timelines[-1]["lanes"]
    assert all(lane["points"][-1][1] == "GONE" for lane in lanes), lanes
    assert any(lane["coldStart"] is not None for lane in lanes), lanes
    assert not (notebook_folder / "scale_handler.py").exists(), "its clean-up left the file"


def test_make_quickstart_runs_sealed_against_the_embedded_emulator(tmp_path: Path) -> None:
    """The main job: ``scripts/run_quickstart.py`` ignores any configured key and cleans up."""
    fake_key = "rp_FAKE" + "x" * 30
    home = tmp_path / "home"
    (home / ".runpod").mkdir(parents=True)
    (home / ".runpod" / "config.toml").write_text(f'[default]\napi_key = "{fake_key}"\n')
    output = tmp_path / "quickstart.ipynb"
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    # The runner's temporary PODBOOK_HOME lands under our own TMPDIR, so the check below for
    # an emulator left running sees only this run's (not one of a quickstart run beside it).
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env.update(HOME=str(home), RUNPOD_API_KEY=fake_key, TMPDIR=str(scratch))

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, str(root / "scripts" / "run_quickstart.py"), "--output", str(output)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=root,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "quickstart OK" in done.stdout
    assert "jupyter lab notebooks/quickstart.ipynb" in done.stdout

    nb = nbformat.read(output, as_version=4)
    assert error_outputs(nb) == []
    load_cell = next(c for c in nb.cells if c.source.startswith("%load_ext podbook"))
    loaded = "".join(out.get("text", "") for out in load_cell.outputs)
    assert "local emulator" in loaded, loaded
    assert fake_key not in output.read_text() + done.stdout + done.stderr
    leftovers = [
        p.info["pid"]
        for p in psutil.process_iter(["pid", "cmdline"])
        if any(str(scratch / "podbook-quickstart-") in part for part in p.info["cmdline"] or [])
    ]
    assert not leftovers, f"the embedded emulator was left running: {leftovers}"
