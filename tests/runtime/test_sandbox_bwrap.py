"""Pods in a bubblewrap box (``podbook emulator --sandbox bwrap``): scripts written for the
service run unchanged: a server on its *private* port answers on the public one, the volume is
at ``/workspace`` and keeps its files across stop/start while the container disk does not, the
pod sees only its own processes and none of the emulator's, another pod's or the user's files,
and the pod guard reaches the API from inside."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from runtime_helpers import BOXED, create_pod, log_lines, wait_for, wait_status
from ssh_helpers import Endpoint, forwarded, keygen, sftp, ssh

from podbook.emulator.podruntime.box import usable

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def boxed(start_emulator: Any) -> Any:
    """An emulator whose pods run in bubblewrap boxes."""
    reason = usable()
    assert reason is None, f"the sandbox tests need bwrap (make setup installs it): {reason}"
    return start_emulator(extra_args=BOXED)


@pytest.fixture
def http(boxed: Any) -> Any:
    with boxed.http() as client:
        yield client


def run_dir(emu: Any, pod_id: str) -> Path:
    """The host folder the pod's current box shows at /run/podbook (the emulator's log names
    it at each start)."""
    lines = Path(emu.log_path).read_text(errors="replace").splitlines()
    for line in reversed(lines):
        if f"box of {pod_id}: " in line:
            return Path(line.rsplit("run folder ", 1)[1].strip())
    raise AssertionError(f"no box of {pod_id} in the emulator's log")


def ssh_pod(client: Any, key: Path, args: str, **fields: Any) -> Any:
    """A pod with SSH (``22/tcp``) running ``args``, ``key`` the account's only SSH key."""
    client.account.ssh_keys.put([key.with_suffix(".pub").read_text().strip()])
    return client.pods.create(
        name="boxed-ssh",
        image="runpod/base",
        gpu={"id": "NVIDIA GeForce RTX 4090"},
        args=args,
        ports=["22/tcp"],
        start_ssh=True,
        **fields,
    )


def public_port(pod: dict[str, Any], private: int) -> int:
    return next(p["public"] for p in pod["runtime"]["ports"] if p["private"] == private)


def test_a_server_on_its_private_port_answers_on_the_public_one_in_two_pods(http: Any) -> None:
    server = "cd /workspace && echo hi from $RUNPOD_POD_ID > index.html && exec python3 -u -m http.server 8000"
    volume = {"persistent": {"size": 10, "path": "/workspace"}}
    pods = [create_pod(http, args=server, ports=["8000/http"], mounts=volume) for _ in range(2)]
    try:
        for pod in pods:
            running = wait_status(http, pod["id"], "RUNNING")
            log_lines(http, pod["id"], "Serving HTTP on")
            answer = httpx.get(f"http://127.0.0.1:{public_port(running, 8000)}/index.html")
            assert answer.status_code == 200 and answer.text.strip() == f"hi from {pod['id']}"
    finally:
        for pod in pods:
            http.delete(f"/v2/pods/{pod['id']}")


def test_the_volume_stays_the_container_disk_goes_and_the_pod_sees_only_itself(
    http: Any, boxed: Any, tmp_path: Path
) -> None:
    secret = Path.home() / f".podbook-test-{tmp_path.name}"  # a file of the user's home
    secret.write_text("private")
    script = (
        "echo boot >> /workspace/boots; echo kept > /root/note; "
        "echo boots=$(wc -l < /workspace/boots) root=$(ls /root | tr '\\n' ,) "
        "procs=$(ls /proc | grep -c '^[0-9]') host=$(hostname) home=$HOME pwd=$(pwd); "
        f"ls {boxed.home} > /dev/null 2>&1 && echo SAW-EMULATOR-HOME; "
        f"cat {secret} > /dev/null 2>&1 && echo SAW-USER-HOME; "
        "echo checked; exec sleep 600"
    )
    volume = {"persistent": {"size": 10, "path": "/workspace"}}
    pod = create_pod(http, args=script, mounts=volume)
    pod_id = pod["id"]
    try:
        wait_status(http, pod_id, "RUNNING")
        first = log_lines(http, pod_id, "checked")
        assert "boots=1 root=note, procs=" in "\n".join(first)
        report = next(line for line in first if line.startswith("boots="))
        fields = dict(part.split("=", 1) for part in report.split())
        assert int(fields["procs"]) <= 8, report  # the box's init and helper, this shell's
        assert (fields["host"], fields["home"], fields["pwd"]) == (pod_id, "/root", "/workspace")
        assert "SAW-EMULATOR-HOME" not in first and "SAW-USER-HOME" not in first
        http.post(f"/v2/pods/{pod_id}/action", json={"action": "stop"})
        wait_status(http, pod_id, "EXITED")
        http.post(f"/v2/pods/{pod_id}/action", json={"action": "start"})
        wait_status(http, pod_id, "RUNNING")
        again = log_lines(http, pod_id, "boots=2")
        assert "boots=2 root=note," in again[-1]  # /root was wiped: only this boot's note
    finally:
        http.delete(f"/v2/pods/{pod_id}")
        secret.unlink()


def test_the_pod_guard_reaches_the_api_from_the_box(boxed: Any) -> None:
    from podbook import Client

    with Client(api_key=boxed.api_key, url=boxed.url) as client:
        pod = client.pods.create(
            name="boxed-guard",
            image="runpod/base",
            gpu={"id": "NVIDIA GeForce RTX 4090"},
            args="exec sleep 600",
            idle_stop="3s",
        )
        try:
            client.pods.wait_for(pod, "EXITED", timeout=30, poll_interval=0.2)
            assert client.pods.guard(pod.id).describe() == "stopped after 3s idle"
        finally:
            client.pods.terminate(pod.id)


def test_openssh_and_sftp_work_inside_the_box(boxed: Any, tmp_path: Path) -> None:
    import subprocess

    from podbook import Client

    key = keygen(tmp_path, "id_ed25519")
    with Client(api_key=boxed.api_key, url=boxed.url) as client:
        volume = {"persistent": {"size": 10, "path": "/workspace"}}
        pod = ssh_pod(client, key, "exec sleep 600", mounts=volume)

        def endpoint() -> Endpoint:
            pod_ = client.pods.wait_for(pod, "RUNNING", ready="ssh", timeout=30, poll_interval=0.1)
            return Endpoint(pod_.ssh.direct.host, pod_.ssh.direct.port, "root")

        try:
            direct = endpoint()
            shell = ssh(
                direct,
                key,
                "pwd; hostname; echo $HOME; echo from-ssh > /workspace/s.txt; touch /root/gone; "
                "ls /proc | grep -c '^[0-9]'",
                timeout=60,
            )
            assert shell.returncode == 0, shell.stderr
            pwd, host, home, procs = shell.stdout.split()
            assert (pwd, host, home) == ("/workspace", pod.id, "/root")
            assert int(procs) <= 8  # the pod's processes only
            local = tmp_path / "up.txt"
            local.write_text("from-sftp\n")
            batch = f"put {local} /workspace/up.txt\nget /workspace/s.txt {tmp_path}/s.txt\n"
            transfer = sftp(direct, key, batch)
            assert transfer.returncode == 0, transfer.stderr
            assert (tmp_path / "s.txt").read_text() == "from-ssh\n"
            volume = Path(boxed.home) / "podruntime" / "pods" / pod.id / "persistent"
            assert (volume / "up.txt").read_text() == "from-sftp\n"
            client.pods.stop(pod.id)  # what SSH wrote on the volume survives a stop/start,
            client.pods.wait_for(pod, "EXITED", timeout=30, poll_interval=0.1)
            client.pods.start(pod.id)  # what it wrote on the container disk does not
            direct = endpoint()
            after = ssh(
                direct,
                key,
                "cat /workspace/s.txt /workspace/up.txt; ls -A /root | grep -vc '^[.]pyenv$'",
                timeout=60,
            )
            assert after.stdout.split() == ["from-ssh", "from-sftp", "0"], after.stderr
            for code in (0, 3, 0, 7, 0):  # commands that end at once keep their status
                assert ssh(direct, key, f"exit {code}").returncode == code
            # an SSH session is activity for the pod guard, though it ends outside the box
            session = subprocess.Popen(
                [*direct.base(key), "cat"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            try:
                count = run_dir(boxed, pod.id) / "ssh-direct"
                wait_for(
                    lambda: count.exists() and count.read_text().strip() == "1",
                    15,
                    what="one session noted",
                )
            finally:
                session.stdin.close()
                session.wait(10)
        finally:
            client.pods.terminate(pod.id)


def test_the_jupyter_server_and_its_kernels_run_in_the_box(boxed: Any) -> None:
    from podbook import Client
    from podbook.remote import StreamText, connect_kernel

    with Client(api_key=boxed.api_key, url=boxed.url) as client:
        pod = client.pods.create(
            name="boxed-jupyter",
            image="runpod/pytorch",
            gpu={"id": "NVIDIA GeForce RTX 4090"},
            args="exec sleep 600",
            ports=["8888/http"],
            start_jupyter=True,
            mounts={"persistent": {"size": 10, "path": "/workspace"}},
        )
        try:
            client.pods.wait_for(pod, "RUNNING", timeout=30, poll_interval=0.1)
            record = wait_for(
                lambda: (p := client.pods.get(pod.id)).runtime and p.runtime.ports and p, 15
            )
            kernel = connect_kernel(record, server_timeout=60)
            try:
                outputs = kernel.execute(
                    "import os, socket\n"
                    "print(os.getcwd(), socket.gethostname(), os.environ['HOME'], sum(n.isdigit() for n in os.listdir('/proc')) < 20)\n"
                    "print(os.environ['PATH'].split(':')[0])"  # the venv's bin: ``!python``
                )
                text = "".join(o.text for o in outputs if isinstance(o, StreamText))
                venv_bin = str(Path(sys.executable).parent)
                assert text.split() == ["/workspace", pod.id, "/root", "True", venv_bin], text
            finally:
                kernel.close(shutdown=True)
        finally:
            client.pods.terminate(pod.id)


def test_many_boxed_pods_run_at_once(http: Any) -> None:
    # more than the emulator's default thread pool: no box may hold a thread while it runs
    pods = [create_pod(http, args=f"echo up {i}; exec sleep 600") for i in range(10)]
    try:
        for i, pod in enumerate(pods):
            wait_status(http, pod["id"], "RUNNING", timeout=60)
            assert log_lines(http, pod["id"], f"up {i}", timeout=60)[-1] == f"up {i}"
    finally:
        for pod in pods:
            http.delete(f"/v2/pods/{pod['id']}")


def _pod_processes(pod_id: str) -> dict[int, float]:
    """The processes whose environment names ``pod_id``: host pid → start time."""
    import psutil

    found = {}
    for proc in psutil.process_iter(["pid", "environ", "create_time"], ad_value=None):
        if (proc.info["environ"] or {}).get("RUNPOD_POD_ID") == pod_id:
            found[proc.info["pid"]] = proc.info["create_time"]
    return found


def test_nothing_of_a_box_outlives_a_kill_9_of_the_emulator(
    emulator_class: Any, tmp_path: Path
) -> None:
    import signal

    emu = emulator_class(tmp_path, extra_args=BOXED)
    emu.start()
    try:
        with emu.http() as http:
            escapes = (
                "setsid sleep 1001 & (sleep 1002 &); nohup sleep 1003 > /dev/null 2>&1 & "
                "echo ready; exec sleep 1004"
            )
            pod = create_pod(http, args=escapes)
            wait_status(http, pod["id"], "RUNNING")
            log_lines(http, pod["id"], "ready")
            old = _pod_processes(pod["id"])
            assert len(old) >= 4  # the main process and three that left its session or group
        assert emu.proc is not None
        emu.proc.send_signal(signal.SIGKILL)
        emu.proc.wait(10)
        emu.start()
        with emu.http() as http:  # the next start runs the pod again: a boot of its own
            wait_status(http, pod["id"], "RUNNING")
        now = _pod_processes(pod["id"])
        assert not [pid for pid, started in old.items() if now.get(pid) == started]
    finally:
        emu.stop()


def test_a_network_volume_is_at_its_own_paths_in_two_boxes(http: Any, boxed: Any) -> None:
    volume = http.post(
        "/v2/network-volumes", json={"name": "shared", "size": 10, "dataCenter": "EU-RO-1"}
    )
    assert volume.status_code == 201, volume.text
    volume_id = volume.json()["id"]
    writer = create_pod(
        http,
        mounts={"network": [{"volumeId": volume_id, "path": "/data"}]},
        args="echo from-writer > /data/note.txt; echo wrote; exec sleep 600",
    )
    reader = None
    try:
        wait_status(http, writer["id"], "RUNNING")
        log_lines(http, writer["id"], "wrote")
        reader = create_pod(
            http,
            mounts={"network": [{"volumeId": volume_id, "path": "/mnt/shared"}]},
            args='cat /mnt/shared/note.txt; echo "cwd $(pwd)"; exec sleep 600',
        )
        wait_status(http, reader["id"], "RUNNING")
        lines = log_lines(http, reader["id"], "cwd ")
        assert lines[-2:] == ["from-writer", "cwd /mnt/shared"]
    finally:
        for pod in (writer, reader):
            if pod is not None:
                http.delete(f"/v2/pods/{pod['id']}")
    folder = Path(boxed.home) / "podruntime" / "volumes" / volume_id
    assert (folder / "note.txt").read_text() == "from-writer\n"
    assert http.delete(f"/v2/network-volumes/{volume_id}").status_code in (200, 204)


def test_quick_processes_keep_their_exit_codes_and_the_root_is_the_container_disk(
    http: Any,
) -> None:
    # A process that ends at once: its start and its end reach the emulator in one read, and
    # on a loaded machine it is gone before its host pid is looked up.
    quick = create_pod(http, args="echo bye; exit 3")
    wait_status(http, quick["id"], "EXITED")
    assert log_lines(http, quick["id"], "container exited with code 3", source="system")
    # A script that writes at the top of / (as root in a container) writes the container disk.
    script = "echo kept > /result.json && cat /result.json && ls /usr >/dev/null && exec sleep 600"
    pod = create_pod(http, args=script)
    try:
        wait_status(http, pod["id"], "RUNNING")
        assert log_lines(http, pod["id"], "kept")
    finally:
        for made in (quick, pod):
            http.delete(f"/v2/pods/{made['id']}")


# One thread per connection: a probe that ssh -L forwards and holds open never delays the next.
PONG = (
    "exec python3 -c \"import socket,threading;s=socket.create_server(('127.0.0.1',7000));"
    "print('pong ready',flush=True)\n"
    "def serve(c):\n c.sendall(b'pong:'+c.recv(64));c.close()\n"
    'while True:\n c,_=s.accept();threading.Thread(target=serve,args=(c,),daemon=True).start()"'
)


def test_ssh_forwarding_reaches_the_pods_own_loopback(boxed: Any, tmp_path: Path) -> None:
    from podbook import Client

    key = keygen(tmp_path, "id_ed25519")
    with Client(api_key=boxed.api_key, url=boxed.url) as client:
        pod = ssh_pod(client, key, PONG)  # a server on the pod's own 127.0.0.1:7000 only
        try:
            ready = client.pods.wait_for(pod, "RUNNING", ready="ssh", timeout=30)
            direct = Endpoint(ready.ssh.direct.host, ready.ssh.direct.port, "root")
            wait_for(lambda: "pong ready" in container_log(client, pod.id), 15, what="server")
            assert forwarded(direct, key, 7000) == b"pong:ping"  # ssh -L 7000 in the box
            assert forwarded(direct, key, 7000, "localhost") == b"pong:ping"
        finally:
            client.pods.terminate(pod.id)


def container_log(client: Any, pod_id: str) -> str:
    """What the pod's main process printed so far."""
    lines = client.pods.logs(pod_id, source="container", tail=50, idle=0.2)
    return "\n".join(line.line for line in lines)


def test_cluster_members_reach_each_other_at_their_cluster_address(http: Any) -> None:
    # Each member serves its rank on port 29500 of its cluster address (both on 29500, no
    # collision) and fetches every other member's, as a training job's workers do.
    member = (
        "cd /root && echo rank $RUNPOD_CLUSTER_RANK > rank && "
        "(python3 -m http.server 29500 --bind $RUNPOD_CLUSTER_IP >/dev/null 2>&1 &) && "
        'exec python3 -c "import os,time,urllib.request as u\n'
        "me=os.environ['RUNPOD_CLUSTER_IP']\n"
        "for _ in range(200):\n"
        " for i in range(2,12):\n"
        "  ip='127.0.0.%d'%i\n"
        "  try: print('reached',ip,u.urlopen('http://%s:29500/rank'%ip,timeout=1).read().decode().strip(),flush=True) if ip!=me else None\n"
        "  except OSError: pass\n"
        ' time.sleep(0.2)"'
    )
    body = {
        "name": "boxed-cluster",
        "type": "APPLICATION",
        "image": "runpod/base:latest",
        "args": member,
        "compute": {"gpuTypeId": "NVIDIA GeForce RTX 4090", "gpuCountPerPod": 1, "podCount": 2},
    }
    created = http.post("/v2/clusters", json=body)
    assert created.status_code == 201, created.text
    cluster_id = created.json()["id"]
    try:
        listed = http.get(f"/v2/clusters/{cluster_id}/pods").json()
        members = [wait_status(http, m["id"], "RUNNING") for m in listed.get("pods", listed)]
        for one in members:
            other = next(m for m in members if m["id"] != one["id"])
            seen = f"reached {other['cluster']['ip']} rank {other['cluster']['rank']}"
            assert log_lines(http, one["id"], seen)
    finally:
        http.delete(f"/v2/clusters/{cluster_id}")


BOX_OWN = (Path("/tmp"), Path("/var/tmp"), Path("/root"))
"""Where a box shows its container disk: an emulator home there is out of a pod's view
anyway, whatever the box hides (the other tests' homes are under /tmp)."""


def _outside_the_box_own() -> Path:
    """A folder for an emulator home that the box must hide itself: the user's home, else
    this checkout, else a system folder the user may write in (root's home is /root, which
    the box replaces, and a CI checkout may be under /tmp)."""
    checkout = Path(__file__).resolve().parents[2]
    for place in (Path.home(), checkout, Path("/var/cache"), Path("/srv"), Path("/opt")):
        place = place.resolve()
        outside = not any(place == top or top in place.parents for top in BOX_OWN)
        if outside and place.is_dir() and os.access(place, os.W_OK):
            return place
    raise AssertionError("no folder outside /tmp, /var/tmp and /root to put a home in")


def test_a_pod_reads_nothing_of_the_emulators_home_or_another_pods_volume(
    emulator_class: Any,
) -> None:
    import secrets
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix=".pb-isolation-", dir=_outside_the_box_own()))
    emu = emulator_class(root, extra_args=BOXED)
    emu.db = emu.home / "emulator.db"  # the default layout: the database in the home
    token = secrets.token_hex(8)
    name = f"secret-{token}"
    find = (  # every path of the pod's view
        "find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune "
        f"-o -name {name} -print 2>/dev/null | tr '\\n' ,"
    )
    volume = {"persistent": {"size": 10, "path": "/workspace"}}
    try:
        emu.start()
        key = (emu.home / "emulator.key").read_text()
        with emu.http() as http:
            owner = create_pod(
                http,
                mounts=volume,
                args=f"echo {token} > /workspace/{name}; echo found=[$({find})]; exec sleep 600",
            )
            wait_status(http, owner["id"], "RUNNING", timeout=30)
            # the owner sees its file where it wrote it (so the search finds what is there)
            assert log_lines(http, owner["id"], "found=", timeout=90)[-1] == (
                f"found=[/workspace/{name},]"
            )
            folder = emu.home / "podruntime" / "pods" / owner["id"] / "persistent"
            assert (folder / name).read_text().strip() == token
            home, db = emu.home, emu.db
            probe = (
                f'echo "home=[$(ls -A {home} 2>&1 | tr "\\n" ,)]"; '
                f"cat {home}/emulator.key {db} {emu.config} {folder}/{name} 2>/dev/null; "
                f'echo "db=[$(head -c 16 {db} 2>/dev/null | tr -dc "A-Za-z0-9 ")]"; '
                f"ls -A {folder} 2>/dev/null; "
                f"echo found=[$({find})]; echo checked; exec sleep 600"
            )
            other = create_pod(http, mounts=volume, args=probe)
            wait_status(http, other["id"], "RUNNING", timeout=30)
            lines = log_lines(http, other["id"], "checked", timeout=90)
            for pod in (owner, other):
                http.delete(f"/v2/pods/{pod['id']}")
        seen = "\n".join(lines)
        # the home is an empty folder (no key, no database, no placeholder names), the
        # database and the --config file (beside the home) reveal nothing, the other pod's
        # volume is nowhere in this pod's view
        assert lines[:2] == ["home=[]", "db=[]"], lines
        assert lines[2:] == ["found=[]", "checked"], lines
        assert key.strip() not in seen and token not in seen
        assert emu.other_key not in seen and "[[accounts]]" not in seen  # the --config file
    finally:
        emu.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_the_port_variables_in_a_box_are_the_services(http: Any) -> None:
    # RUNPOD_TCP_PORT_<n>: the public port, as on the service; no RUNPOD_HTTP_PORT_<n> (an
    # HTTP server listens on its private port)
    script = (
        'echo "tcp=${RUNPOD_TCP_PORT_5432-unset} http=${RUNPOD_HTTP_PORT_8000-unset}"; '
        "exec sleep 600"
    )
    pod = create_pod(http, args=script, ports=["8000/http", "5432/tcp"])
    try:
        wait_status(http, pod["id"], "RUNNING", timeout=30)
        line = log_lines(http, pod["id"], "tcp=", timeout=30)[-1]
        public = public_port(
            http.get(f"/v2/pods/{pod['id']}").json(), 5432
        )  # the record's public port of 5432/tcp
        assert public != 5432
        assert line == f"tcp={public} http=unset"
    finally:
        http.delete(f"/v2/pods/{pod['id']}")


def test_the_host_and_shared_folders_are_read_only_and_orphans_are_reaped(
    start_emulator: Any, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "hello.txt").write_text("from the host\n")
    emu = start_emulator(extra_args=(*BOXED, "--share-ro", str(shared)))
    script = (
        "touch /usr/podbook-probe 2>/dev/null && echo usr=writable || echo usr=read-only; "
        f"touch {shared}/made 2>/dev/null && echo shared=writable || echo shared=read-only; "
        f"cat {shared}/hello.txt; "
        # an orphan that ends: the box's first process must reap it (no zombie left)
        "(sh -c 'sleep 0.2' &); sleep 1.5; "
        "z=0; for f in /proc/[0-9]*/stat; do "
        'read -r _ _ st _ < "$f" 2>/dev/null && [ "$st" = Z ] && z=$((z+1)); done; '
        "echo zombies=$z; echo checked; exec sleep 600"
    )
    with emu.http() as http:
        pod = create_pod(http, args=script)
        try:
            wait_status(http, pod["id"], "RUNNING")
            lines = log_lines(http, pod["id"], "checked", timeout=60)
        finally:
            http.delete(f"/v2/pods/{pod['id']}")
    assert lines == [
        "usr=read-only",
        "shared=read-only",
        "from the host",
        "zombies=0",
        "checked",
    ], lines
    assert not (shared / "made").exists() and not Path("/usr/podbook-probe").exists()
