"""``%%pod exec``, ``%pod attach|detach``, ``%%pod sh`` and ``%pod push|pull|sync`` in a real
IPython shell against pods that really run (an emulator with ``--runtime local``): the pod's
kernel keeps state, its outputs show here, variables travel both ways, files move."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from nbhelpers import assert_one_line_error, podbook_loaded, point_at, run_cell

pytestmark = pytest.mark.timeout(180)

# a 1x1 PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


@pytest.fixture(scope="module")
def local(start_emulator: Any) -> Any:
    """An emulator of the module whose pods really run (Jupyter, SSH)."""
    return start_emulator(extra_args=("--runtime", "local"))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The podbook home of the module's notebook (its SSH key is made there once)."""
    return tmp_path_factory.mktemp("remote-home")


@pytest.fixture
def rip(
    shell: InteractiveShell, local: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InteractiveShell]:
    """The shell with podbook loaded, pointed at the module's local-runtime emulator."""
    point_at(monkeypatch, local, home)
    with podbook_loaded(shell, "PodMagics.show_panels = False"):
        try:
            yield shell
        finally:
            with capture_output():
                shell.run_line_magic("pod", "detach")
            for name in [n for n in shell.user_ns if n.startswith("rt_")]:
                del shell.user_ns[name]


@pytest.fixture(scope="module")
def client(local: Any) -> Iterator[Any]:
    """The typed client of the module's emulator."""
    from podbook import Client

    with Client(
        api_key=local.api_key, rest_url=local.url, queue_url=local.url, v1_url=local.url
    ) as typed:
        yield typed


@pytest.fixture(scope="module")
def pod_id(client: Any, home: Path) -> Iterator[str]:
    """A RUNNING pod with Jupyter and SSH that accepts this machine's key."""
    from podbook.remote import ensure_key_registered, find_key

    ensure_key_registered(client, find_key(home=home))
    pod = client.pods.create(
        name="remote-magics",
        image="runpod/pytorch",
        gpu={"id": "NVIDIA GeForce RTX 4090"},
        ports=["8888/http", "22/tcp"],
        start_ssh=True,
        start_jupyter=True,
        args="exec sleep 600",
    )
    client.pods.wait_for(pod, "RUNNING", timeout=30)
    yield pod.id
    client.pods.terminate(pod.id)


def test_pod_create_ssh_registers_a_key_of_this_machine_once(
    rip: InteractiveShell, client: Any, pod_id: str
) -> None:
    keys = client.account.ssh_keys.get().keys
    client.account.ssh_keys.put([])
    try:
        made = run_cell(
            rip,
            'rt_pod = %pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/base '
            "--ssh --name key-probe",
        )
        assert made.success, made.text
        said = [line for line in made.stdout.splitlines() if "without a sandbox" not in line]
        assert len(said) == 1 and "registered SSH key" in said[0]  # and the fallback's note
        assert len(client.account.ssh_keys.get().keys) == 1
        assert rip.user_ns["rt_pod"].env["PUBLIC_KEY"].strip()
        again = run_cell(
            rip, '%pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/base --ssh -o rt_two'
        )
        assert again.success and "SSH key" not in again.stdout  # said once, not every time
    finally:
        for name in ("rt_pod", "rt_two"):
            if name in rip.user_ns:
                client.pods.terminate(rip.user_ns[name].id)
        client.account.ssh_keys.put(keys)


def test_a_cell_runs_in_the_pod_and_its_state_stays(rip: InteractiveShell, pod_id: str) -> None:
    first = run_cell(
        rip, f"%%pod exec {pod_id}\nx = 41\nimport os\nprint(os.environ['RUNPOD_POD_ID'])"
    )
    assert first.success, first.text
    assert first.stdout.strip() == pod_id
    second = run_cell(rip, f"%%pod exec {pod_id}\nprint(x + 1)")
    assert second.success and second.stdout.strip() == "42", second.text
    assert "x" not in rip.user_ns or rip.user_ns.get("x") != 41


def test_images_and_html_from_the_pod_are_displayed_here(
    rip: InteractiveShell, pod_id: str
) -> None:
    rip.user_ns["rt_png"] = PNG
    code = (
        "from IPython.display import HTML, Image, display\n"
        "display(Image(data=rt_png))\n"
        "display(HTML('<b>from the pod</b>'))\n"
        "40 + 2"
    )
    run = run_cell(rip, f"%%pod exec {pod_id} --in rt_png\n{code}")
    assert run.success, run.text
    kinds = [set(output.data) for output in run.outputs]
    assert any("image/png" in kind for kind in kinds), kinds
    html = [o.data["text/html"] for o in run.outputs if "text/html" in o.data]
    assert any("from the pod" in text for text in html)
    assert any(o.data.get("text/plain") == "42" for o in run.outputs)
    png = next(o.data["image/png"] for o in run.outputs if "image/png" in o.data)
    assert base64.b64decode(png) == PNG


def test_a_remote_error_shows_its_traceback_and_the_next_cell_runs(
    rip: InteractiveShell, pod_id: str
) -> None:
    from podbook.errors import RemoteExecutionError

    failed = run_cell(rip, f"%%pod exec {pod_id}\ndef boom():\n    1 / 0\nboom()")
    assert not failed.success
    assert isinstance(failed.error, RemoteExecutionError)
    assert "ZeroDivisionError" in failed.text and "boom" in failed.text
    again = run_cell(rip, f"%%pod exec {pod_id}\nprint('still here')")
    assert again.success and again.stdout.strip() == "still here"


def test_variables_travel_both_ways(rip: InteractiveShell, pod_id: str) -> None:
    rip.user_ns["rt_config"] = {"lr": 0.1, "layers": [1, 2, 3]}
    rip.user_ns["rt_blob"] = bytes(range(256)) * 40_000  # about 10 MB
    run = run_cell(
        rip,
        f"%%pod exec {pod_id} --in rt_config,rt_blob --out rt_back,rt_digest\n"
        "import hashlib\n"
        "rt_back = {**rt_config, 'seen': len(rt_blob)}\n"
        "rt_digest = hashlib.sha256(rt_blob).hexdigest()",
    )
    assert run.success, run.text
    assert rip.user_ns["rt_back"] == {"lr": 0.1, "layers": [1, 2, 3], "seen": 10_240_000}
    assert rip.user_ns["rt_digest"] == hashlib.sha256(rip.user_ns["rt_blob"]).hexdigest()


def test_attach_runs_the_following_cells_in_the_pod_until_detach(
    rip: InteractiveShell, pod_id: str
) -> None:
    attached = run_cell(rip, f"%pod attach {pod_id}")
    assert attached.success and "attached to pod" in attached.stdout, attached.text
    made = run_cell(rip, "rt_remote_only = 7")
    assert made.success, made.text
    assert "rt_remote_only" not in rip.user_ns
    shown = run_cell(rip, "print(rt_remote_only * 6)")
    assert shown.success and "42" in shown.stdout
    marks = [o.data.get("text/plain", "") for o in shown.outputs]
    assert any(f"ran in pod remote-magics ({pod_id})" in mark for mark in marks), marks
    local_magic = run_cell(rip, "%pod ssh " + pod_id)  # magics still run here
    assert local_magic.success
    assert any("ssh root@" in o.data.get("text/plain", "") for o in local_magic.outputs)
    detached = run_cell(rip, "%pod detach")
    assert "detached" in detached.stdout
    here = run_cell(rip, "rt_remote_only")
    assert not here.success and isinstance(here.error, NameError)


def test_a_shell_script_runs_in_the_pod_over_ssh(rip: InteractiveShell, pod_id: str) -> None:
    run = run_cell(rip, f"%%pod sh {pod_id}\nfor i in 1 2 3; do echo line $i; done\necho oops >&2")
    assert run.success, run.text
    assert run.stdout.splitlines() == ["line 1", "line 2", "line 3"]
    assert "oops" in run.stderr
    failed = run_cell(rip, f"%%pod sh {pod_id}\nexit 3")
    assert_one_line_error(failed, "exited with status 3")


def test_files_move_both_ways_with_a_summary(
    rip: InteractiveShell, pod_id: str, tmp_path: Path
) -> None:
    folder = tmp_path / "data"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("alpha")
    (folder / "sub" / "b.bin").write_bytes(b"\0" * 100_000)
    pushed = run_cell(rip, f"%pod push {folder} {pod_id}:inbox/data")
    assert pushed.success, pushed.text
    assert "pushed 2 files" in pushed.outputs[-1].data["text/plain"]
    back = tmp_path / "back"
    pulled = run_cell(rip, f"%pod pull {pod_id}:inbox/data {back}")
    assert pulled.success, pulled.text
    assert (back / "a.txt").read_text() == "alpha"
    assert (back / "sub" / "b.bin").read_bytes() == b"\0" * 100_000
    synced = run_cell(rip, f"%pod sync {folder} {pod_id}:inbox/data")
    assert synced.success and "2 unchanged" in synced.outputs[-1].data["text/plain"]


def test_mistakes_are_one_line(rip: InteractiveShell, pod_id: str, local: Any, client: Any) -> None:
    assert_one_line_error(run_cell(rip, f"%pod exec {pod_id}"), "needs a cell")
    assert_one_line_error(run_cell(rip, f"%%pod exec {pod_id}\n  \n"), "empty")
    assert_one_line_error(
        run_cell(rip, f"%%pod exec {pod_id} --in rt_nothing_here\nx"), "no variable rt_nothing"
    )
    assert_one_line_error(run_cell(rip, "%%pod list\nx"), "takes no cell")
    with local.http() as http:
        bare = http.post(
            "/v2/pods",
            json={
                "name": "bare",
                "image": "runpod/base:latest",
                "gpu": {"id": "NVIDIA GeForce RTX 4090"},
                "args": "exec sleep 300",
            },
        ).json()
    try:
        client.pods.wait_for(bare["id"], "RUNNING", timeout=30)
        assert_one_line_error(run_cell(rip, f"%%pod exec {bare['id']}\nx"), "--jupyter")
        assert_one_line_error(run_cell(rip, f"%%pod sh {bare['id']}\necho"), "--ssh")
        client.pods.stop(bare["id"])
        client.pods.wait_for(bare["id"], "EXITED", timeout=30)
        stopped = run_cell(rip, f"%%pod exec {bare['id']}\nx")
        assert_one_line_error(stopped, "EXITED, not RUNNING", f"%pod start {bare['id']}")
    finally:
        with local.http() as http:
            http.delete(f"/v2/pods/{bare['id']}")


def test_the_pod_panel_shows_the_kernel_and_the_last_transfer(
    rip: InteractiveShell, pod_id: str, comms: Any, tmp_path: Path
) -> None:
    rip.run_line_magic("config", "PodMagics.show_panels = True")
    with capture_output():
        panel_pod = rip.run_line_magic("pod", f"show {pod_id}")
    assert panel_pod.id == pod_id
    magics = rip.magics_manager.registry["PodMagics"]
    panel = next(p for p in magics.session.refresher.panels if getattr(p, "pod_id", "") == pod_id)
    assert run_cell(rip, f"%%pod exec {pod_id}\nimport time; time.sleep(0.5)").success
    assert panel.remote["kernel"] == "idle" and panel.remote["attached"] is False
    (tmp_path / "f.txt").write_text("x")
    assert run_cell(rip, f"%pod push {tmp_path / 'f.txt'} {pod_id}:f.txt").success
    assert panel.remote["transfer"]["state"] == "done"
    assert panel.remote["transfer"]["summary"].startswith("pushed 1 file")
    assert run_cell(rip, f"%pod attach {pod_id}").success
    assert panel.remote["attached"] is True


def test_a_widget_made_in_the_pod_shows_its_text_fallback(
    rip: InteractiveShell, pod_id: str
) -> None:
    run = run_cell(rip, f"%%pod exec {pod_id}\nimport ipywidgets\nipywidgets.IntSlider(value=7)")
    assert run.success, run.text
    shown = [o.data for o in run.outputs]
    assert not any("application/vnd.jupyter.widget-view+json" in data for data in shown)
    assert any("IntSlider(value=7)" in data.get("text/plain", "") for data in shown), shown


def test_a_pod_still_starting_is_told_to_wait_not_to_start() -> None:
    from podbook.errors import PodNotRunning

    for status in ("PROVISIONING", "STARTING"):
        message = str(PodNotRunning("p1", status))
        assert "not RUNNING yet" in message and "wait" in message and "%pod start" not in message
    assert "%pod start p1" in str(PodNotRunning("p1", "EXITED"))
