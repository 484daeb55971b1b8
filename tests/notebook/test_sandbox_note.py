"""Where pods run without a sandbox (``--sandbox none``, or ``auto`` where bubblewrap cannot
work), the emulator's start line and the first ``%pod create`` of a kernel say so, once, with
the variables the process runtime maps; in a sandbox nothing is said."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import podbook_loaded, point_at, run_cell

pytestmark = pytest.mark.timeout(120)

NOT_INSTALLED = "bwrap is not installed (Debian: apt-get install bubblewrap)"
CREATE = '%pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/base --args "sleep 60"'


@pytest.fixture
def loaded(
    shell: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """``use(emulator)``: the shell with podbook loaded, pointed at ``emulator``."""

    def use(emulator: Any) -> InteractiveShell:
        point_at(monkeypatch, emulator, tmp_path / "home")
        return shell

    with podbook_loaded(shell, "PodMagics.show_panels = False"):
        yield use


def test_the_first_create_says_once_that_pods_run_without_a_sandbox(
    loaded: Any, start_emulator: Any
) -> None:
    emulator = start_emulator(extra_args=("--runtime", "local", "--sandbox", "none"))
    gip = loaded(emulator)
    first, second = run_cell(gip, CREATE), run_cell(gip, CREATE)
    assert first.success and second.success, first.text + second.text
    said = [line for line in first.stdout.splitlines() if "without a sandbox" in line]
    assert said == [
        "podbook: the emulator's pods run without a sandbox (--sandbox none): the process "
        "runtime maps a pod's paths and ports ($RUNPOD_MOUNT_WORKSPACE, "
        "$RUNPOD_HTTP_PORT_8000; see docs/local-runtime.md)"
    ]
    assert "without a sandbox" not in second.stdout


def test_nothing_is_said_of_pods_in_a_sandbox(loaded: Any, start_emulator: Any) -> None:
    emulator = start_emulator(extra_args=("--runtime", "local", "--sandbox", "bwrap"))
    cell = run_cell(loaded(emulator), CREATE)
    assert cell.success and "sandbox" not in cell.stdout, cell.text


def test_auto_falls_back_where_bwrap_is_missing_and_says_so_at_start(
    emulator_class: Any, tmp_path: Path
) -> None:
    # A PATH without bwrap: what a machine without bubblewrap looks like to the emulator.
    emulator = emulator_class(
        tmp_path,
        extra_args=("--runtime", "local", "--sandbox", "auto"),
        env={"PATH": os.path.dirname(sys.executable)},
    )
    emulator.start()
    try:
        pods = httpx.get(f"{emulator.url}/healthz").json()["pods"]
        assert pods == {
            "runtime": "local",
            "sandbox": "none",
            "sandboxNote": NOT_INSTALLED,
        }
        start_lines = Path(emulator.log_path).read_text().splitlines()
        assert [line for line in start_lines if "without a sandbox" in line] == [
            f"podbook emulator: pods run without a sandbox ({NOT_INSTALLED}): the process "
            "runtime maps a pod's paths and ports ($RUNPOD_MOUNT_WORKSPACE, "
            "$RUNPOD_HTTP_PORT_8000; see docs/local-runtime.md)"
        ]
    finally:
        emulator.stop()


def test_auto_is_the_default_and_picks_bwrap_where_it_works(
    emulator_class: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PODBOOK_SANDBOX", raising=False)  # the fallback stage sets it
    emulator = emulator_class(tmp_path, extra_args=("--runtime", "local"))
    emulator.start()
    try:
        pods = httpx.get(f"{emulator.url}/healthz").json()["pods"]
        assert pods == {"runtime": "local", "sandbox": "bwrap"}
        start = Path(emulator.log_path).read_text()
        assert "without a sandbox" not in start
    finally:
        emulator.stop()


def test_a_sandbox_that_cannot_work_or_does_not_exist_is_one_line_at_start(
    emulator_class: Any, tmp_path: Path
) -> None:
    no_bwrap = {"PATH": os.path.dirname(sys.executable)}
    cases = [
        (("--sandbox", "bwrap"), no_bwrap,
         f"podbook emulator: --sandbox bwrap cannot work here: {NOT_INSTALLED}"),
        ((), {"PODBOOK_SANDBOX": "docker"},
         "podbook emulator: no sandbox 'docker' (from $PODBOOK_SANDBOX); use one of auto, "
         "bwrap, none"),
    ]  # fmt: skip
    for number, (args, env, expected) in enumerate(cases):
        emulator = emulator_class(
            tmp_path / f"case{number}", extra_args=("--runtime", "local", *args), env=env
        )
        with pytest.raises(RuntimeError, match="emulator exited with 2") as caught:
            emulator.start()
        lines = str(caught.value).splitlines()
        said = [
            line[line.index("podbook emulator:") :] for line in lines if "podbook emulator:" in line
        ]
        assert said == [expected]
