"""Local pod runtime benchmark: how soon a new pod takes SSH and Jupyter, and what running pods
cost, in the process runtime and in the sandbox (``--sandbox bwrap``) side by side.

Run: ``.venv/bin/python bench/podruntime.py`` (a few minutes). It starts three emulators on
free loopback ports, each with a temporary home and the default pod timings: ``--runtime
local`` (pods really run), the same with ``--sandbox bwrap`` (each pod in its box; left out,
with the reason, where bwrap cannot work) and ``--runtime none`` (simulated pods), and prints,
beside the targets (SSH ready p50 <= 1.0 s and 20 pods <= 300 MB in the sandbox, the sandbox
at most 1.5x the process runtime on both):

- from ``POST /v2/pods`` (a CPU pod with ``startSsh``, ``22/tcp`` and a sleeping ``args``) to
  the pod's SSH server accepting a connection (its ``SSH-2.0`` banner read on the port of the
  pod record's direct endpoint), and to a command run over SSH with the OpenSSH client and the
  pod record's own ``command`` (``ssh ... true``): p50, p90 over ``--pods`` pods, one at a time;
- from ``POST /v2/pods`` (with ``startJupyter`` and ``8888/http``) to the pod's Jupyter
  serving its login page on the public port: p50 over ``--jupyter-pods`` pods;
- the memory of 20 running pods with SSH and a sleeping ``args`` (the emulator and every
  process it started, proportional set sizes summed: a page shared by n processes counts 1/n
  in each), beside the same 20 pods on the ``--runtime none`` emulator in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
from _common import Emulator, account_quota, emulator, percentile_ms, verdict, wait_until

TARGET_SSH_P50_S = 1.0
TARGET_MEMORY_MB = 300.0
TARGET_RATIO = 1.5
HELD_PODS = 20
BIG_QUOTA = [*account_quota(1_000_000), "--max-running-pods", "64"]
SSH_FLAGS = [
    "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
    "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=5",
]  # fmt: skip


def pod_body(name: str) -> dict[str, Any]:
    """A small CPU pod that runs ``sleep`` and takes SSH on ``22/tcp``."""
    return {
        "name": name,
        "image": "runpod/base:latest",
        "cpu": {"id": "cpu3c", "vcpuCount": 2},
        "ports": ["22/tcp"],
        "startSsh": True,
        "args": "sleep 100000",
    }


def make_key(workdir: Path) -> tuple[Path, str]:
    """A fresh ed25519 key pair: (private key path, public key line)."""
    key = workdir / "id_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bench", "-f", str(key)], check=True
    )
    return key, key.with_suffix(".pub").read_text().strip()


def banner_read(host: str, port: int) -> bool:
    """Whether an SSH server answers on (host, port) with its version banner."""
    try:
        with socket.create_connection((host, port), timeout=1) as sock:
            sock.settimeout(1)
            return sock.recv(64).startswith(b"SSH-")
    except OSError:
        return False


def direct_endpoint(http: httpx.Client, pod_id: str) -> dict[str, Any] | None:
    """The pod record's direct SSH endpoint once it has one."""
    pod = http.get(f"/v2/pods/{pod_id}").json()
    ssh = pod.get("ssh") or {}
    return ssh.get("direct")


def time_to_ssh(emu: Emulator, key: Path, count: int) -> tuple[list[float], list[float]]:
    """Seconds from POST to the SSH banner, and to ``ssh ... true`` succeeding, per pod."""
    to_banner: list[float] = []
    to_command: list[float] = []
    with emu.http() as http:
        for index in range(count):
            started = time.perf_counter()
            created = http.post("/v2/pods", json=pod_body(f"bench-ssh-{index}"))
            created.raise_for_status()
            pod_id = created.json()["id"]
            endpoint: dict[str, Any] = {}

            def listening(pod_id: str = pod_id, endpoint: dict[str, Any] = endpoint) -> bool:
                found = direct_endpoint(http, pod_id)
                if found is None or not banner_read(found["host"], found["port"]):
                    return False
                endpoint.update(found)
                return True

            wait_until(listening, 60, f"SSH of pod {pod_id}", every=0.01)
            to_banner.append(time.perf_counter() - started)
            command = endpoint["command"].split() + ["-i", str(key), *SSH_FLAGS, "true"]
            wait_until(
                lambda command=command: (
                    subprocess.run(command, capture_output=True).returncode == 0
                ),
                30,
                f"a command over SSH in pod {pod_id}",
                every=0.01,
            )
            to_command.append(time.perf_counter() - started)
            http.delete(f"/v2/pods/{pod_id}").raise_for_status()
    return to_banner, to_command


def tree_mb(pid: int) -> tuple[float, int]:
    """Memory of a process and every descendant, MB (proportional set size: a page shared by
    n processes counts 1/n in each, so shared libraries and the interpreter's pages are not
    counted once per process; resident set size where PSS cannot be read); and how many."""
    root = psutil.Process(pid)
    processes = [root, *root.children(recursive=True)]
    total = 0
    for process in processes:
        try:
            info = process.memory_full_info()
            total += getattr(info, "pss", info.rss)
        except psutil.AccessDenied:
            total += process.memory_info().rss
        except psutil.Error:
            continue
    return total / 1e6, len(processes)


def hold_pods(emu: Emulator, count: int, local: bool) -> tuple[float, float, int]:
    """Memory (MB) before and with ``count`` RUNNING pods, and the processes then. "Before" is
    read once no pod process of the earlier steps is left."""
    wait_until(
        lambda: not psutil.Process(emu.proc.pid).children(recursive=True),
        60,
        "the earlier pods' processes to end",
        every=0.2,
    )
    before, _ = tree_mb(emu.proc.pid)
    with emu.http() as http:
        ids = []
        for index in range(count):
            created = http.post("/v2/pods", json=pod_body(f"bench-hold-{index}"))
            created.raise_for_status()
            ids.append(created.json()["id"])

        def all_running() -> bool:
            pods = http.get("/v2/pods").json()["pods"]
            running = [p for p in pods if p["id"] in ids and p["status"] == "RUNNING"]
            if len(running) < count:
                return False
            if not local:
                return True
            return all(
                (p.get("ssh") or {}).get("direct")
                and banner_read(p["ssh"]["direct"]["host"], p["ssh"]["direct"]["port"])
                for p in running
            )

        wait_until(all_running, 120, f"{count} pods running", every=0.1)
        time.sleep(1.0)  # let the processes settle after their start
        held, processes = tree_mb(emu.proc.pid)
        for pod_id in ids:
            http.delete(f"/v2/pods/{pod_id}")
    return before, held, processes


BARE_BOX = [
    "bwrap", "--unshare-all", "--die-with-parent",
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
]  # fmt: skip
"""The least a bubblewrap box is: its own namespaces (PID, network, user, IPC, UTS, cgroup)
around the host's system, and no init, relay or agent of podbook's."""


def bare_boxes(count: int) -> tuple[float, float]:
    """PSS (MB) of ``count`` processes running a pod's sleeping ``args`` as the runtime does
    (``sh -c``), unboxed and then each in a bare bubblewrap box: the floor of what any
    bubblewrap sandbox adds to a sleeping pod."""
    command = ["sh", "-c", "sleep 100000; true"]

    def held(argv: list[str]) -> float:
        started = [subprocess.Popen(argv) for _ in range(count)]
        try:
            wait_until(
                lambda: all(
                    any(c.name() == "sleep" for c in psutil.Process(p.pid).children(recursive=True))
                    for p in started
                ),
                30,
                "the sleeping commands",
                every=0.05,
            )
            time.sleep(1.0)
            return sum(tree_mb(p.pid)[0] for p in started)
        finally:
            for process in started:
                for child in psutil.Process(process.pid).children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        child.kill()
                process.kill()
                process.wait()

    return held(command), held([*BARE_BOX, *command])


def time_to_jupyter(emu: Emulator, count: int) -> list[float]:
    """Seconds from POST to the pod's Jupyter login page answering on the public port."""
    seconds: list[float] = []
    with emu.http() as http:
        for index in range(count):
            body = {**pod_body(f"bench-jupyter-{index}"), "ports": ["8888/http"]}
            body |= {"startSsh": False, "startJupyter": True}
            started = time.perf_counter()
            created = http.post("/v2/pods", json=body)
            created.raise_for_status()
            pod_id = created.json()["id"]

            def answers(pod_id: str = pod_id) -> bool:
                ports = (http.get(f"/v2/pods/{pod_id}").json().get("runtime") or {}).get("ports")
                public = next((p["public"] for p in ports or [] if p["private"] == 8888), None)
                if public is None:
                    return False
                try:
                    login = httpx.get(f"http://127.0.0.1:{public}/login", timeout=1)
                except httpx.HTTPError:
                    return False
                return login.status_code == 200

            wait_until(answers, 90, f"Jupyter of pod {pod_id}", every=0.02)
            seconds.append(time.perf_counter() - started)
            http.delete(f"/v2/pods/{pod_id}").raise_for_status()
    return seconds


def measure(
    emu: Emulator, key: Path, args: argparse.Namespace
) -> tuple[dict[str, list[float]], tuple[float, float, int]]:
    """The timings (seconds) and the memory of 20 pods of one local-runtime emulator."""
    banner, command = time_to_ssh(emu, key, args.pods)
    jupyter = time_to_jupyter(emu, args.jupyter_pods)
    before, held, processes = hold_pods(emu, HELD_PODS, local=True)
    return {"banner": banner, "command": command, "jupyter": jupyter}, (before, held, processes)


def p50(seconds: list[float]) -> float:
    """The median, in seconds."""
    return percentile_ms(seconds, 0.5) / 1000


def main() -> None:
    from podbook.emulator.podruntime.box import usable

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=10, help="pods timed to SSH (default 10)")
    parser.add_argument(
        "--jupyter-pods", type=int, default=4, help="pods timed to Jupyter (default 4)"
    )
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"podruntime bench: load average {load:.2f} at start, {os.cpu_count()} cores")
    no_box = usable()
    modes = {"process": ["--sandbox", "none"]}
    if no_box is None:
        modes["sandbox"] = ["--sandbox", "bwrap"]
    figures: dict[str, Any] = {}
    memory: dict[str, tuple[float, float, int]] = {}
    with tempfile.TemporaryDirectory(prefix="podbook-bench-runtime-") as tmp:
        root = Path(tmp)
        key, public = make_key(root)
        for name, flags in modes.items():
            (root / name).mkdir()
            with emulator(root / name, ["--runtime", "local", *flags, *BIG_QUOTA]) as emu:
                with emu.http() as http:
                    http.put("/v2/account/ssh-keys", json={"keys": [public]}).raise_for_status()
                figures[name], memory[name] = measure(emu, key, args)
        floor = bare_boxes(HELD_PODS) if "sandbox" in modes else None
        (root / "none").mkdir()
        with emulator(root / "none", ["--runtime", "none", *BIG_QUOTA]) as simulated:
            none_before, none_held, none_procs = hold_pods(simulated, HELD_PODS, local=False)

    print()
    print("POST /v2/pods -> ready, one pod at a time (default timings), p50 (p90):")
    for name, fig in figures.items():
        print(
            f"  {name:8s} SSH banner {p50(fig['banner']):.2f} s"
            f" ({percentile_ms(fig['banner'], 0.9) / 1000:.2f} s)"
            f" · `ssh ... true` {p50(fig['command']):.2f} s"
            f" · Jupyter login page {p50(fig['jupyter']):.2f} s"
        )
    print()
    print(f"{HELD_PODS} running pods with SSH and a sleeping args (PSS of the emulator's tree):")
    cost = {}
    for name, (before, held, processes) in memory.items():
        cost[name] = (held - before) - (none_held - none_before)
        print(
            f"  {name:8s} {before:.0f} MB -> {held:.0f} MB ({processes} processes):"
            f" {cost[name]:.0f} MB, {cost[name] / HELD_PODS:.1f} MB a pod"
        )
    print(f"  none     {none_before:.0f} MB -> {none_held:.0f} MB ({none_procs} processes)")
    if floor is not None:
        bare, boxed = floor
        print(
            f"  the floor: the same {HELD_PODS} sleeping commands alone {bare:.1f} MB, each in a"
            f" bare bubblewrap box (no init, relay or agent) {boxed:.1f} MB: {boxed / bare:.2f}x"
        )
    print()
    if "sandbox" not in figures:
        print(f"sandbox: not measured ({no_box})")
    else:
        ssh_box, ssh_proc = p50(figures["sandbox"]["banner"]), p50(figures["process"]["banner"])
        ssh_ratio = ssh_box / ssh_proc if ssh_proc else float("inf")
        mem_ratio = cost["sandbox"] / cost["process"] if cost["process"] > 0 else float("inf")
        print("targets (sandbox):")
        print(
            f"  SSH ready p50 {ssh_box:.2f} s (<= {TARGET_SSH_P50_S:.1f} s:"
            f" {verdict(ssh_box <= TARGET_SSH_P50_S)}); {ssh_ratio:.2f}x the process runtime"
            f" (<= {TARGET_RATIO}x: {verdict(ssh_ratio <= TARGET_RATIO)})"
        )
        print(
            f"  {HELD_PODS} pods {cost['sandbox']:.0f} MB (<= {TARGET_MEMORY_MB:.0f} MB:"
            f" {verdict(cost['sandbox'] <= TARGET_MEMORY_MB)}); {mem_ratio:.2f}x the process"
            f" runtime (<= {TARGET_RATIO}x: {verdict(mem_ratio <= TARGET_RATIO)})"
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
