"""Work on a pod benchmark: a trivial cell in the pod's kernel, and a 200 MB file both ways,
each beside the OpenSSH client doing the same against the same pod.

Run: ``.venv/bin/python bench/remote.py`` (25 s on a quiet machine, a minute on a busy one).
It starts one emulator with ``--runtime local`` on a free loopback port with a temporary home,
registers this machine's SSH key on the account
(``podbook.remote.ensure_key_registered(client, find_key(home=...))`` with a temporary podbook
home: the user's own ``~/.ssh/id_*`` when there is one, else a podbook key made there), creates
one pod with ``startJupyter``, ``startSsh`` and the ports ``8888/http`` and ``22/tcp``, and
prints, beside the targets:

- a trivial cell's round trip (``1+1``, its result checked): through the notebook path, a real
  IPython ``InteractiveShell`` with ``%load_ext podbook`` running ``%%pod exec POD`` cells
  (``shell.run_cell``, outputs captured as a notebook would get them), and through
  ``RemoteKernel.run`` directly; beside the same code run by the OpenSSH client with the pod
  record's direct command (``ssh root@127.0.0.1 -p PORT -i KEY ... python3 -c '1+1'``), and
  ``ssh ... true`` (SSH alone, the stricter floor: the pod's ``python3`` may be slow to start,
  a pyenv shim say; its path is printed): p50 and p95, in turns, so every leg meets the same
  load of a shared machine. The magic's own share is shown beside: the pod read it does per
  cell (``client.pods.get``) and IPython's cost of a local cell (``shell.run_cell("1+1")``);
- push and pull of a 200 MB random file (``podbook.remote.push``/``pull``, each call
  connecting as ``scp`` does) beside ``scp`` of the same file to and from the same pod: MB/s,
  best and median of 3 rounds, wall clock, connecting included; the SHA-256 is checked after
  every transfer (on the pod with ``sha256sum`` over SSH, here with hashlib).

Every figure comes from this run. The pod, the kernels and the temporary files are removed at
the end, also when a step fails.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import emulator, percentile_ms, verdict, wait_until

from podbook import Client
from podbook.api.pods import Pod
from podbook.remote import (
    ExecuteResult,
    PodConnection,
    RemoteError,
    RemoteKernel,
    SshKeyPair,
    connect,
    connect_kernel,
    ensure_key_registered,
    find_key,
    pull,
    push,
)

TARGET_EXEC_RATIO = 0.1  # %%pod exec p50 at most this fraction of the SSH round trip's p50
TARGET_EXEC_P50_MS = 20.0  # and at most this on loopback
TARGET_TRANSFER_RATIO = 0.8  # push and pull at least this fraction of scp's MB/s
BIG_BYTES = 200 * 1000 * 1000
CELL = "1+1"
SSH_FLAGS = [
    "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
    "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=5",
]  # fmt: skip


# --- the pod ---------------------------------------------------------------------------------


def running_pod(client: Client, key: SshKeyPair) -> Pod:
    """A RUNNING pod with Jupyter and SSH whose ports are mapped and whose SSH lets ``key`` in."""
    pod = client.pods.create(
        name="bench-remote",
        image="runpod/pytorch",
        gpu={"id": "NVIDIA GeForce RTX 4090"},
        ports=["8888/http", "22/tcp"],
        start_ssh=True,
        start_jupyter=True,
        args="exec sleep 900",
    )
    try:
        client.pods.wait_for(pod, "RUNNING", timeout=60, poll_interval=0.05)
        ready: list[Pod] = []

        def mapped() -> bool:
            record = client.pods.get(pod.id)
            if record.runtime and record.runtime.ports and record.ssh.direct is not None:
                ready.append(record)
                return True
            return False

        wait_until(mapped, 30, f"the ports of pod {pod.id}", every=0.05)

        def answers() -> bool:
            try:
                connect(ready[-1], key=key, timeout=5).close()
            except RemoteError as exc:
                if exc.reason != "unreachable":
                    raise
                return False
            return True

        wait_until(answers, 30, f"the SSH server of pod {pod.id}", every=0.1)
        return ready[-1]
    except BaseException:
        client.pods.terminate(pod.id)
        raise


def ssh_argv(pod: Pod, key: SshKeyPair) -> list[str]:
    """The pod record's direct command (``ssh root@127.0.0.1 -p PORT``), non-interactive."""
    direct = pod.ssh.direct
    assert direct is not None and direct.host == "127.0.0.1", "loopback only"
    return [*shlex.split(direct.command), "-i", str(key.private), *SSH_FLAGS]


def scp_base(pod: Pod, key: SshKeyPair) -> tuple[list[str], str]:
    """``scp -P PORT -i KEY`` with the same options, and ``root@127.0.0.1:``."""
    direct = pod.ssh.direct
    assert direct is not None and direct.host == "127.0.0.1", "loopback only"
    argv = ["scp", "-q", "-P", str(direct.port), "-i", str(key.private), *SSH_FLAGS]
    return argv, f"{direct.username}@{direct.host}:"


# --- a trivial cell --------------------------------------------------------------------------


@contextmanager
def notebook_shell(url: str, api_key: str, home: Path) -> Iterator[Any]:
    """A real IPython shell with ``%load_ext podbook``, pointed at the emulator through
    ``PODBOOK_URL``, ``RUNPOD_API_KEY`` and ``PODBOOK_HOME`` (panels off: no front end)."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    for name in [n for n in os.environ if n.startswith(("PODBOOK_", "RUNPOD_"))]:
        del os.environ[name]
    os.environ.update(PODBOOK_URL=url, RUNPOD_API_KEY=api_key, PODBOOK_HOME=str(home))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    with capture_output():
        shell.run_line_magic("load_ext", "podbook")
        shell.run_line_magic("config", "PodMagics.show_panels = False")
    try:
        yield shell
    finally:
        with capture_output():
            shell.run_line_magic("unload_ext", "podbook")


def magic_cell(shell: Any, pod_id: str) -> Callable[[], None]:
    """One ``%%pod exec POD`` cell of ``1+1`` through ``shell.run_cell``; checks it showed 2."""
    from IPython.utils.capture import capture_output

    source = f"%%pod exec {pod_id}\n{CELL}"

    def cell() -> None:
        with capture_output() as captured:
            result = shell.run_cell(source, store_history=False)
        shown = [o.data.get("text/plain") for o in captured.outputs]
        if not result.success or shown != ["2"]:
            raise RuntimeError(f"%%pod exec failed: {captured.stdout}{captured.stderr}{shown}")

    return cell


def local_cell(shell: Any) -> Callable[[], None]:
    """The same cell run here by ``shell.run_cell`` (IPython's own cost of a cell)."""
    from IPython.utils.capture import capture_output

    def cell() -> None:
        with capture_output():
            result = shell.run_cell(CELL, store_history=False)
        if result.result != 2:
            raise RuntimeError(f"a local cell of {CELL} gave {result.result!r}")

    return cell


def kernel_run(kernel: RemoteKernel) -> Callable[[], None]:
    """One ``kernel.run("1+1")``; checks its result is 2."""

    def call() -> None:
        outputs = kernel.run(CELL)
        results = [o.data.get("text/plain") for o in outputs if isinstance(o, ExecuteResult)]
        if results != ["2"]:
            raise RuntimeError(f"RemoteKernel.run gave {outputs!r}")

    return call


def ssh_command(argv: list[str], remote: str) -> Callable[[], str]:
    """One ``ssh ... REMOTE`` (a new process and connection, as a terminal runs it); its
    stdout."""
    command = [*argv, remote]

    def call() -> str:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"ssh exited {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    return call


def in_turns(
    calls: dict[str, tuple[Callable[[], object], int]], turns: int, warmup: int
) -> dict[str, list[float]]:
    """Each call ``warmup`` times untimed, then its count of timed runs spread over ``turns``
    turns (every call has its share in each turn, so all meet the same machine load)."""
    for call, _ in calls.values():
        for _ in range(warmup):
            call()
    clock = time.perf_counter
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    for turn in range(turns):
        for name, (call, count) in calls.items():
            share = count * (turn + 1) // turns - count * turn // turns
            for _ in range(share):
                started = clock()
                call()
                seconds[name].append(clock() - started)
    return seconds


# --- files -----------------------------------------------------------------------------------


def random_file(path: Path, size: int) -> Path:
    """``path`` filled with ``size`` random bytes."""
    with path.open("wb") as file:
        left = size
        while left:
            chunk = min(left, 8 << 20)
            file.write(os.urandom(chunk))
            left -= chunk
    return path


def sha256(path: Path) -> str:
    """The file's SHA-256 (hex)."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def remote_sha256(conn: PodConnection, path: str) -> str:
    """The SHA-256 of the pod's file ``path``, by ``sha256sum`` in the pod."""
    out: list[str] = []
    status = conn.run(f"sha256sum {shlex.quote(path)}", on_stdout=out.append, on_stderr=out.append)
    if status != 0:
        raise RuntimeError(f"sha256sum {path} in the pod: {''.join(out).strip()}")
    return "".join(out).split()[0]


@dataclass
class Leg:
    """Seconds per round of one transfer, wall clock."""

    name: str
    seconds: list[float]

    def rates(self) -> list[float]:
        """MB/s (10^6 bytes) per round."""
        return [BIG_BYTES / 1e6 / s for s in self.seconds]


def transfers(
    pod: Pod, key: SshKeyPair, conn: PodConnection, big: Path, work: Path, rounds: int
) -> tuple[dict[str, Leg], list[float]]:
    """``rounds`` rounds of podbook push, ``scp`` push, podbook pull and ``scp`` pull of
    ``big`` (who goes first alternates), every result's SHA-256 checked; the legs, and the
    seconds of each podbook transfer outside its summary (connecting, opening)."""
    digest = sha256(big)
    scp, where = scp_base(pod, key)
    legs = {name: Leg(name, []) for name in ("push", "scp push", "pull", "scp pull")}
    outside: list[float] = []
    back = work / "back.bin"

    def check_remote(path: str, what: str) -> None:
        if remote_sha256(conn, path) != digest:
            raise RuntimeError(f"{what}: the pod's {path} differs from the source")

    def check_local(what: str) -> None:
        try:
            if sha256(back) != digest:
                raise RuntimeError(f"{what}: the pulled file differs from the source")
        finally:
            back.unlink(missing_ok=True)

    def timed(leg: str, action: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        value = action()
        legs[leg].seconds.append(time.perf_counter() - started)
        return value

    def podbook_push() -> None:
        summary = timed("push", lambda: push(pod, big, "bench-podbook.bin", key=key))
        outside.append(legs["push"].seconds[-1] - summary.seconds)
        check_remote("bench-podbook.bin", "push")

    def scp_push() -> None:
        argv = [*scp, str(big), where + "bench-scp.bin"]
        timed("scp push", lambda: subprocess.run(argv, check=True, timeout=120))
        check_remote("bench-scp.bin", "scp push")

    def podbook_pull() -> None:
        summary = timed("pull", lambda: pull(pod, "bench-podbook.bin", back, key=key))
        outside.append(legs["pull"].seconds[-1] - summary.seconds)
        check_local("pull")

    def scp_pull() -> None:
        argv = [*scp, where + "bench-scp.bin", str(back)]
        timed("scp pull", lambda: subprocess.run(argv, check=True, timeout=120))
        check_local("scp pull")

    for index in range(rounds):
        pushes, pulls = [podbook_push, scp_push], [podbook_pull, scp_pull]
        if index % 2:
            pushes.reverse()
            pulls.reverse()
        for step in (*pushes, *pulls):
            step()
    return legs, outside


# --- report ----------------------------------------------------------------------------------


def report_cells(seconds: dict[str, list[float]], warmup: int, python: str) -> None:
    """The round trips, their ratio to SSH and the targets; ``python`` is the pod's
    ``python3``."""
    labels = {
        "magic": "%%pod exec (IPython run_cell)",
        "run": "RemoteKernel.run",
        "pod read": "  of it: the magic's pod read",
        "local": "  of it: a local cell (run_cell)",
        "ssh": "ssh ... python3 -c '1+1'",
        "ssh true": "  of it: ssh ... true",
    }
    print(f"A trivial cell ({CELL}, result checked), after {warmup} warm-up runs each, in turns:")
    for name, label in labels.items():
        taken = seconds[name]
        p50, p95 = percentile_ms(taken, 0.5), percentile_ms(taken, 0.95)
        print(f"  {label:<33} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  ({len(taken)} runs)")
    print(f"  (the pod's python3: {python}; SSH alone, ssh ... true, is the stricter floor)")
    ssh = percentile_ms(seconds["ssh"], 0.5)
    floor = percentile_ms(seconds["ssh true"], 0.5)
    for name in ("magic", "run"):
        p50 = percentile_ms(seconds[name], 0.5)
        ratio = p50 / ssh
        print(
            f"  {labels[name].split(' (')[0]}: {ratio:.3f}x the SSH round trip"
            f" (target <= {TARGET_EXEC_RATIO}: {verdict(ratio <= TARGET_EXEC_RATIO)}),"
            f" p50 {p50:.2f} ms (target <= {TARGET_EXEC_P50_MS:.0f} ms:"
            f" {verdict(p50 <= TARGET_EXEC_P50_MS)}); {p50 / floor:.3f}x ssh ... true"
        )


def report_transfers(legs: dict[str, Leg], outside: list[float], rounds: int) -> None:
    """MB/s best and median per leg, podbook/scp and the target."""
    print(
        f"A {BIG_BYTES / 1e6:.0f} MB random file, {rounds} rounds (wall clock, connecting"
        " included; SHA-256 equal after every transfer):"
    )
    for leg in legs.values():
        rates = leg.rates()
        print(
            f"  {leg.name:<9} best {max(rates):6.0f} MB/s  median {statistics.median(rates):6.0f}"
            f" MB/s  ({', '.join(f'{r:.0f}' for r in rates)})"
        )
    for name in ("push", "pull"):
        ours, theirs = legs[name].rates(), legs[f"scp {name}"].rates()
        best = max(ours) / max(theirs)
        median = statistics.median(ours) / statistics.median(theirs)
        print(
            f"  {name} / scp {name}: best {best:.2f}x, median {median:.2f}x"
            f" (target best >= {TARGET_TRANSFER_RATIO}x: {verdict(best >= TARGET_TRANSFER_RATIO)})"
        )
    print(
        f"  podbook's time outside the transfer itself (connecting, logging in):"
        f" median {statistics.median(outside) * 1000:.0f} ms"
    )


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50, help="timed cells of each kind (50)")
    parser.add_argument("--ssh-runs", type=int, default=20, help="timed ssh commands (20)")
    parser.add_argument("--rounds", type=int, default=3, help="transfer rounds (3)")
    args = parser.parse_args()
    warmup, turns = 5, 5
    print(f"remote bench: load average {os.getloadavg()[0]:.2f} at start, {os.cpu_count()} cores")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="podbook-bench-remote-") as tmp:
        root = Path(tmp)
        (root / "emu").mkdir()
        home = root / "podbook-home"
        with (
            emulator(root / "emu", ["--runtime", "local"]) as emu,
            Client(
                api_key=emu.api_key, rest_url=emu.url, queue_url=emu.url, v1_url=emu.url
            ) as client,
        ):
            key = ensure_key_registered(client, find_key(home=home)).key
            pod = running_pod(client, key)
            kernel: RemoteKernel | None = None
            try:
                kernel = connect_kernel(pod, server_timeout=60)
                argv, in_python = ssh_argv(pod, key), f"python3 -c {shlex.quote(CELL)}"
                python = ssh_command(argv, "command -v python3")().strip()
                with notebook_shell(emu.url, emu.api_key, home) as shell:
                    cells = in_turns(
                        {
                            "magic": (magic_cell(shell, pod.id), args.runs),
                            "run": (kernel_run(kernel), args.runs),
                            "pod read": (lambda: client.pods.get(pod.id), args.runs),
                            "local": (local_cell(shell), args.runs),
                            "ssh": (ssh_command(argv, in_python), args.ssh_runs),
                            "ssh true": (ssh_command(argv, "true"), args.ssh_runs),
                        },
                        turns,
                        warmup,
                    )
                kernel.close(shutdown=True)
                kernel = None
                big = random_file(root / "big.bin", BIG_BYTES)
                with connect(pod, key=key) as conn:
                    legs, outside = transfers(pod, key, conn, big, root, args.rounds)
                    conn.run("rm -f bench-podbook.bin bench-scp.bin")
            finally:
                if kernel is not None:
                    with suppress(Exception):
                        kernel.close(shutdown=True)
                client.pods.terminate(pod.id)
    print()
    report_cells(cells, warmup, python)
    print()
    report_transfers(legs, outside, args.rounds)
    print(
        f"load average {os.getloadavg()[0]:.2f} at the end;"
        f" {time.monotonic() - started:.0f} s in all"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
