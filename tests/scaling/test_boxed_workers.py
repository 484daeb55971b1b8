"""Scaled workers in the sandbox (``--sandbox bwrap``): each worker runs in a box of its own,
with the endpoint's network volume at ``/runpod-volume`` as on the service, the emulator's
working directory read-only (where a start command finds its handler file), and nothing of
the user's home or the emulator's files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from podbook.emulator.podruntime.box import usable
from podbook.emulator.podruntime.boxplan import python_paths

pytestmark = pytest.mark.timeout(120)

HANDLER = """\
import os, socket

def handler(job):
    home = os.path.expanduser("~")
    return {
        "cwd": os.getcwd(),
        "volume": open("/runpod-volume/note.txt").read().strip(),
        "host": socket.gethostname(),
        "home": home,
        "user_home_seen": os.listdir(job["input"]["home"]),
    }
"""


def python_in_home() -> set[str]:
    """The entries of your home a box shows again: where the emulator's Python lives."""
    home = Path.home()
    return {p.relative_to(home).parts[0] for p in python_paths() if home in p.parents}


def test_a_boxed_worker_sees_its_volume_and_start_folder_only(
    emulator_class: Any, tmp_path: Path
) -> None:
    assert usable() is None, "the sandbox tests need bwrap (make setup installs it)"
    emu = emulator_class(tmp_path / "emu", extra_args=("--runtime", "local", "--sandbox", "bwrap"))
    emu.start()
    try:
        with httpx.Client(base_url=emu.url, headers=emu.headers(None), timeout=60) as http:
            volume = http.post(
                "/v2/network-volumes", json={"name": "models", "size": 10, "dataCenter": "EU-RO-1"}
            ).json()
            folder = Path(emu.home) / "podruntime" / "volumes" / volume["id"]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "note.txt").write_text("from the volume\n")
            (folder / "handler.py").write_text(HANDLER)
            body = {
                "name": "boxed",
                "args": f"{sys.executable} -m podbook worker /runpod-volume/handler.py",
                "networkVolumes": [volume["id"]],
                "workers": {"min": 0, "max": 1, "idleTimeout": 2},
            }
            created = http.post("/v2/serverless", json=body)
            assert created.status_code in (200, 201), created.text
            endpoint_id = created.json()["id"]
            done = http.post(
                f"/v2/{endpoint_id}/runsync", json={"input": {"home": str(Path.home())}}
            ).json()
            assert done["status"] == "COMPLETED", done
            out = done["output"]
            assert out["volume"] == "from the volume"
            assert out["host"] == done["workerId"]  # its own box
            assert out["home"] == "/root"
            assert set(out["user_home_seen"]) <= python_in_home()  # the rest of it is hidden
            assert out["cwd"] == str(Path.cwd().resolve())  # where the emulator started
            http.delete(f"/v2/serverless/{endpoint_id}")
    finally:
        emu.stop()
