"""Run ``notebooks/quickstart.ipynb`` end to end, headless, against the embedded emulator.

Used by ``make quickstart``. The run is sealed off from the user's own set-up: a temporary
``PODBOOK_HOME`` (so the emulator the notebook starts has its own database and key),
``RUNPOD_API_KEY`` and the ``PODBOOK_*`` URL variables removed, and ``PODBOOK_LOCAL=1`` so a
key in ``~/.runpod/config.toml`` is ignored too. The executed copy is saved under
``artifacts/`` and the emulator the notebook started is stopped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"
ARTIFACTS = ROOT / "artifacts"

# Anything that could point the run at a real account or at the user's own podbook home.
CLEARED_ENV = (
    "RUNPOD_API_KEY",
    "RUNPOD_PROFILE",
    "PODBOOK_URL",
    "PODBOOK_REST_URL",
    "PODBOOK_QUEUE_URL",
    "PODBOOK_V1_URL",
    "PODBOOK_HOME",
)


def sealed_environment(home: Path) -> dict[str, str]:
    """The kernel's environment: the local emulator only, with its files under ``home``."""
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    env["PODBOOK_HOME"] = str(home / "podbook")
    env["PODBOOK_LOCAL"] = "1"
    env["IPYTHONDIR"] = str(home / "ipython")
    return env


def stop_embedded_emulator(podbook_home: Path) -> None:
    """Stop the emulator the notebook started in ``podbook_home`` (it outlives the kernel)."""
    info_file = podbook_home / "emulator.json"
    if not info_file.exists():
        return
    try:
        pid = int(json.loads(info_file.read_text())["pid"])
    except (ValueError, KeyError, TypeError):
        return
    if not _is_podbook_emulator(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def _is_podbook_emulator(pid: int) -> bool:
    """Whether ``pid`` still runs ``podbook emulator`` (guards against a reused pid)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return True  # no procfs to ask: trust emulator.json
    cmdline = proc / str(pid) / "cmdline"
    if not cmdline.exists():
        return False
    words = cmdline.read_bytes().decode(errors="replace").split("\0")
    return "podbook" in " ".join(words) and "emulator" in words


def first_error(nb: nbformat.NotebookNode) -> str | None:
    """``"cell N (first line): Name: value"`` for the first error output in ``nb``, if any."""
    for index, cell in enumerate(nb.cells, start=1):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                first_line = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
                return (
                    f"cell {index} ({first_line[:60]}): "
                    f"{output.get('ename')}: {output.get('evalue')}"
                )
    return None


def run(notebook: Path, output: Path, timeout: int) -> int:
    """Execute ``notebook``, save it to ``output``, print a summary; return an exit code."""
    nb = nbformat.read(notebook, as_version=4)
    home = Path(tempfile.mkdtemp(prefix="podbook-quickstart-"))
    env = sealed_environment(home)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(notebook.parent)}},
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    kernel_log = output.with_suffix(".kernel.log")
    started = time.monotonic()
    failure: str | None = None
    try:
        with kernel_log.open("wb") as log:
            client.execute(env=env, stderr=log)
    except CellTimeoutError as exc:
        failure = f"a cell ran longer than {timeout} s: {str(exc).splitlines()[0]}"
    except CellExecutionError:
        failure = first_error(nb) or "a cell failed"
    finally:
        elapsed = time.monotonic() - started
        stop_embedded_emulator(Path(env["PODBOOK_HOME"]))
        shutil.rmtree(home, ignore_errors=True)

    nbformat.write(nb, output)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    ran = sum(1 for c in code_cells if c.get("execution_count"))
    shown = output.relative_to(ROOT) if output.is_relative_to(ROOT) else output
    if failure:
        print(f"quickstart FAILED after {elapsed:.1f} s, {ran}/{len(code_cells)} cells run")
        print("  " + failure.replace("\n", "\n  "))
        print(f"  executed copy (with the error): {shown}; kernel log: {kernel_log.name}")
        return 1
    print(f"quickstart OK: {ran}/{len(code_cells)} code cells run in {elapsed:.1f} s")
    print(f"  against the embedded local emulator (no API key used); executed copy: {shown}")
    print("  open it in JupyterLab:  .venv/bin/jupyter lab notebooks/quickstart.ipynb")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", nargs="?", type=Path, default=DEFAULT_NOTEBOOK)
    parser.add_argument("--output", type=Path, help="where to save the executed copy")
    parser.add_argument("--timeout", type=int, default=180, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    notebook = args.notebook.resolve()
    if not notebook.exists():
        print(f"error: {notebook} not found; pass the path of a notebook", file=sys.stderr)
        return 2
    output = (args.output or ARTIFACTS / notebook.name).resolve()
    return run(notebook, output, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
