"""No secret reaches a saved notebook, its widget state, a repr, an error or the emulator's log.

Every notebook in ``notebooks/`` runs headless (nbclient, a real kernel) against a fresh
emulator process with known keys, followed by a probe notebook written here that handles
secrets on purpose: a registry credential whose password comes from the environment, a typed
``--password`` (refused), a pod with ``--jupyter`` (the emulator generates its
``JUPYTER_PASSWORD``) and secret env values, a job with an S3 secret, reprs of the client,
pods and jobs, and errors raised with a wrong key and an unreachable URL.

Afterwards the outputs and the widget state (``metadata.widgets``) of every executed notebook,
and the emulator's log and stdout, are searched for: the API keys (full, read-only, the
other account's, the wrong one), the registry passwords, the probe's secret values and every
generated ``JUPYTER_PASSWORD`` (seen through the API while the notebooks ran, and read from the
emulator's database at the end).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from kernels import ipc_kernel_manager
from nbclient import NotebookClient
from test_notebooks import (
    MIN_SECRET_LENGTH,
    NOTEBOOKS,
    PodWatcher,
    error_outputs,
    kernel_env,
    private_notebooks,
)

from podbook.api.secrets import is_secret_name

REGISTRY_PASSWORD = "reg-pw-" + secrets.token_hex(12)
TYPED_PASSWORD = "typed-pw-" + secrets.token_hex(12)
HF_TOKEN = "hf_" + secrets.token_hex(16)
API_SECRET = "sec-" + secrets.token_hex(16)
S3_SECRET = "s3-" + secrets.token_hex(16)
WRONG_KEY = "pbk_wrong_" + secrets.token_hex(16)

PROBE_CELLS = [
    "%load_ext podbook",
    "import podbook\n"
    "client = podbook.Client()\n"
    "print(repr(client)); print(client.settings); print(client.target)\n"
    "client",
    "reg = %registry create --name probe-registry --username probe-user "
    "--password-env PROBE_REGISTRY_PASSWORD\n"
    "print(repr(reg)); print(reg)\n"
    "reg",
    "%registry list",
    f"%registry create --name typed --username someone --password {TYPED_PASSWORD}",
    'pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image private/image:1 '
    "--registry {reg.id} --ports 8888/http --jupyter "
    f"--env HF_TOKEN={HF_TOKEN} --env API_SECRET={API_SECRET} --name probe-secrets\n"
    "print(repr(pod)); print(pod)",
    "pod = client.pods.wait_for(pod, 'RUNNING', timeout=120)\nprint(repr(pod))\npod",
    "%pod show {pod.id}",
    "%pod list",
    "%pod logs {pod.id} --tail 20",
    "job = client.endpoint('echo').run({'x': 1}, s3_config={'accessId': 'probe-id', "
    f"'accessSecret': '{S3_SECRET}', 'bucketName': 'b', 'endpointUrl': 'https://s3.example'}})\n"
    "print(repr(job)); print(job.output(timeout=60)); print(repr(job.status()))\n"
    "job",
    "from podbook.errors import PodbookError\n"
    f"bad = podbook.Client(api_key='{WRONG_KEY}')\n"
    "try:\n"
    "    bad.pods.list()\n"
    "except PodbookError as exc:\n"
    "    print('wrong key:', exc); print(repr(exc))\n"
    "gone = podbook.Client(rest_url='http://127.0.0.1:9', queue_url='http://127.0.0.1:9', "
    "v1_url='http://127.0.0.1:9')\n"
    "try:\n"
    "    gone.pods.list()\n"
    "except PodbookError as exc:\n"
    "    print('unreachable:', exc); print(repr(exc))\n"
    "print(repr(bad), repr(gone))",
    "bad.pods.list()",
    "%pod terminate {pod.id}\n%registry delete {reg.id}",
]
# Cells that are meant to fail (their error outputs are expected, and scanned like the rest).
PROBE_FAILING_CELLS = {4, 12}


def probe_notebook() -> nbformat.NotebookNode:
    """The notebook that handles secrets on purpose."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in PROBE_CELLS]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


class Run:
    """One executed notebook: the node and what it exposed."""

    def __init__(self, name: str, nb: nbformat.NotebookNode) -> None:
        self.name = name
        self.nb = nb

    def exposed_text(self) -> str:
        """Everything a reader of the saved notebook sees except the cells' own sources:
        every output (text, HTML, JSON, widget views, errors) and the notebook metadata
        (widget state included)."""
        outputs = [cell.get("outputs", []) for cell in self.nb.cells]
        return json.dumps({"outputs": outputs, "metadata": self.nb.metadata}, ensure_ascii=False)


@pytest.fixture(scope="module")
def notebook_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this module's notebooks run: a copy of ``notebooks/`` of its own."""
    return private_notebooks(tmp_path_factory)


@pytest.fixture(scope="module")
def secret_emulator(start_emulator: Any, notebook_folder: Path) -> Any:
    """A fresh emulator (its own log) with accounts A (full + read-only) and B, whose pods
    really run (their Jupyter gets the generated password); its workers see the notebooks'
    folder."""
    return start_emulator(extra_args=("--runtime", "local", "--share-ro", str(notebook_folder)))


@pytest.fixture(scope="module")
def runs(
    secret_emulator: Any, notebook_folder: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[list[Run], set[str]]]:
    """Execute every notebook and the probe; yield the runs and the Jupyter passwords seen."""
    notebooks = [(p.name, nbformat.read(p, as_version=4), notebook_folder) for p in NOTEBOOKS]
    notebooks.append(("secrets_probe.ipynb", probe_notebook(), notebook_folder))
    done: list[Run] = []
    with PodWatcher(secret_emulator.url, secret_emulator.api_key) as watcher:
        for name, nb, folder in notebooks:
            home = tmp_path_factory.mktemp(Path(name).stem)
            env = kernel_env(secret_emulator, home)
            env["PROBE_REGISTRY_PASSWORD"] = REGISTRY_PASSWORD
            NotebookClient(
                nb,
                km=ipc_kernel_manager(),
                timeout=180,
                kernel_name="python3",
                allow_errors=True,
                resources={"metadata": {"path": str(folder)}},
            ).execute(env=env)
            nbformat.write(nb, home / name)  # kept for a look when a test fails
            done.append(Run(name, nb))
    yield done, watcher.secrets | stored_secret_env(secret_emulator.db)


def stored_secret_env(db: Path) -> set[str]:
    """Secret-looking env values of every pod still in the emulator's database."""
    found: set[str] = set()
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        for (doc,) in conn.execute("SELECT doc FROM pods"):
            for name, value in (json.loads(doc).get("env") or {}).items():
                if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH:
                    found.add(value)
    return found


def known_secrets(emulator: Any) -> dict[str, str]:
    """Every secret the test put in play, by a name to report it under."""
    return {
        "API key": emulator.api_key,
        "read-only API key": emulator.readonly_key,
        "account B's API key": emulator.other_key,
        "wrong API key": WRONG_KEY,
        "registry password": REGISTRY_PASSWORD,
        "typed registry password": TYPED_PASSWORD,
        "HF_TOKEN value": HF_TOKEN,
        "API_SECRET value": API_SECRET,
        "S3 accessSecret": S3_SECRET,
    }


def leaks(text: str, emulator: Any, generated: set[str]) -> list[str]:
    """The names of the secrets found in ``text``."""
    found = [name for name, value in known_secrets(emulator).items() if value in text]
    found += [
        f"a generated JUPYTER_PASSWORD ({value[:2]}…)" for value in generated if value in text
    ]
    return found


def test_the_probe_saw_what_it_should(runs: Any) -> None:
    done, generated = runs
    probe = next(run for run in done if run.name == "secrets_probe.ipynb")
    failing = {
        index
        for index, cell in enumerate(probe.nb.cells)
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
        or (out.get("output_type") == "stream" and out.get("name") == "stderr")
    }
    assert failing <= PROBE_FAILING_CELLS, error_outputs(probe.nb)
    assert all(cell.execution_count for cell in probe.nb.cells)
    assert generated, "no JUPYTER_PASSWORD was generated: the scan would prove nothing"
    text = probe.exposed_text()
    assert "probe-registry" in text and "probe-secrets" in text
    assert "--password is refused" in text  # the typed password met a one-line refusal
    assert "widgets" in probe.nb.metadata, "no widget state was saved: nothing to scan there"


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS] + ["secrets_probe.ipynb"])
def test_no_secret_in_outputs_or_widget_state(runs: Any, secret_emulator: Any, name: str) -> None:
    done, generated = runs
    run = next(r for r in done if r.name == name)
    found = leaks(run.exposed_text(), secret_emulator, generated)
    assert not found, f"{name}: secrets in the saved outputs or widget state: {found}"
    widgets = json.dumps(run.nb.metadata.get("widgets", {}), ensure_ascii=False)
    assert not leaks(widgets, secret_emulator, generated)


def test_no_secret_in_the_emulator_log_or_stdout(runs: Any, secret_emulator: Any) -> None:
    _, generated = runs
    log = secret_emulator.log_path.read_text(errors="replace")
    stdout = secret_emulator.stdout_path.read_text(errors="replace")
    assert "listening on" in stdout
    found = leaks(log + "\n" + stdout, secret_emulator, generated)
    assert not found, f"secrets in the emulator's log or stdout: {found}"
