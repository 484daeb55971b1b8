"""Files both ways over a pod's SFTP (``podbook.remote.files``): a 200 MB file beside ``scp``
of the same file, transfers killed halfway that resume, folders with missing folders
created, progress, and one-line errors.

Real pods of ``podbook emulator --runtime local``; what lands in the pod is also checked on
the host, in the pod's tree (``<home>/podruntime/pods/<id>/container``).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from transfer_helpers import (  # noqa: F401 - fixtures, used by name
    client_fixture,
    conn_fixture,
    key_fixture,
    pod_fixture,
    random_file,
    sha256,
    tree_fixture,
)

from podbook.api.pods import Pod
from podbook.remote.files import META_SUFFIX, PART_SUFFIX, pull, push
from podbook.remote.keys import SshKeyPair
from podbook.remote.progress import Progress, ProgressPrinter
from podbook.remote.ssh import PodConnection, RemoteError

pytestmark = pytest.mark.timeout(180)

BIG = 200 * 1000 * 1000
"""The size of the big file: 200 MB."""


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 200 MB file of random bytes."""
    return random_file(tmp_path_factory.mktemp("big") / "weights.bin", BIG)


def test_a_200_mb_file_both_ways_keeps_its_sha256(
    conn: PodConnection, big: Path, tree: Path, tmp_path: Path
) -> None:
    # its speed beside scp's is bench/remote.py's to measure: a test asserting throughput on a
    # shared 2-core machine fails whenever the rest of the suite runs beside it
    digest = sha256(big)
    pushed = push(conn, big, "models/weights.bin")
    assert pushed.files == 1 and pushed.bytes == BIG and pushed.resumed_bytes == 0
    assert sha256(tree / "models" / "weights.bin") == digest
    pulled = pull(conn, "models/weights.bin", tmp_path / "back.bin")
    assert pulled.files == 1 and pulled.bytes == BIG
    assert sha256(tmp_path / "back.bin") == digest
    assert os.stat(tmp_path / "back.bin").st_mtime == int(big.stat().st_mtime)
    print(
        f"200 MB: push {BIG / 1e6 / pushed.seconds:.0f} MB/s, pull {BIG / 1e6 / pulled.seconds:.0f} MB/s"
    )


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from podbook.api.pods import Pod
    from podbook.remote.files import pull, push

    pod = Pod.model_validate_json(os.environ["POD"])
    direction, source, dest, key = sys.argv[1:5]

    def progress(snapshot):
        if snapshot.bytes_done >= snapshot.bytes_total // 4:
            print(snapshot.bytes_done, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, as a crash or kill -9

    (push if direction == "push" else pull)(pod, source, dest, key=key, progress=progress)
    print("finished", flush=True)
    """
)


def killed_halfway(pod: Pod, key: SshKeyPair, direction: str, source: str, dest: str) -> int:
    """Run a push or pull in a child process that SIGKILLs itself at a quarter of the bytes
    (it gets further before the signal lands); the bytes it had reported."""
    env = {**os.environ, "POD": pod.model_dump_json(by_alias=True)}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, direction, source, dest, str(key.private)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == -signal.SIGKILL, result.stdout + result.stderr
    assert "finished" not in result.stdout
    return int(result.stdout.split()[0])


def test_a_push_killed_halfway_resumes_and_moves_less_than_the_whole(
    conn: PodConnection, pod: Pod, key: SshKeyPair, big: Path, tree: Path
) -> None:
    old = tree / "resume" / "weights.bin"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_bytes(b"the old version\n")
    killed_halfway(pod, key, "push", str(big), "resume/weights.bin")
    part = old.with_name(old.name + PART_SUFFIX)
    assert old.read_bytes() == b"the old version\n", "the final name was written before the end"
    assert 0 < part.stat().st_size < BIG
    on_disk = part.stat().st_size
    summary = push(conn, big, "resume/weights.bin")
    print(
        f"push killed with {on_disk:,} bytes in its part file: resumed "
        f"{summary.resumed_bytes:,} bytes, moved {summary.bytes:,} of {BIG:,}"
    )
    assert summary.resumed_bytes > 0
    assert summary.bytes < BIG
    assert summary.bytes + summary.resumed_bytes == BIG
    assert sha256(old) == sha256(big)
    assert not part.exists() and not old.with_name(old.name + META_SUFFIX).exists()


def test_a_pull_killed_halfway_resumes_and_moves_less_than_the_whole(
    conn: PodConnection, pod: Pod, key: SshKeyPair, big: Path, tree: Path, tmp_path: Path
) -> None:
    remote = tree / "pull-resume" / "weights.bin"
    remote.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(big, remote)
    dest = tmp_path / "weights.bin"
    killed_halfway(pod, key, "pull", "pull-resume/weights.bin", str(dest))
    part = dest.with_name(dest.name + PART_SUFFIX)
    assert not dest.exists()
    assert 0 < part.stat().st_size <= BIG
    on_disk = part.stat().st_size
    summary = pull(conn, "pull-resume/weights.bin", dest)
    print(
        f"pull killed with {on_disk:,} bytes in its part file: resumed "
        f"{summary.resumed_bytes:,} bytes, moved {summary.bytes:,} of {BIG:,}"
    )
    assert summary.resumed_bytes > 0 and summary.bytes < BIG
    assert summary.bytes + summary.resumed_bytes == BIG
    assert sha256(dest) == sha256(big)
    assert not part.exists() and not dest.with_name(dest.name + META_SUFFIX).exists()


class Stop(Exception):
    """Raised by a progress callback to interrupt a transfer."""


def test_an_interrupted_push_records_how_far_it_got_and_resumes_exactly_there(
    conn: PodConnection, big: Path, tree: Path
) -> None:
    def stop_at_half(snapshot: Progress) -> None:
        if snapshot.bytes_done >= BIG // 2:
            raise Stop

    with pytest.raises(Stop):
        push(conn, big, "interrupted/weights.bin", progress=stop_at_half)
    meta = tree / "interrupted" / f"weights.bin{META_SUFFIX}"
    done = json.loads(meta.read_text())["done"]
    assert BIG // 2 <= done < BIG
    summary = push(conn, big, "interrupted/weights.bin")
    assert summary.resumed_bytes == done
    assert summary.bytes == BIG - done
    assert sha256(tree / "interrupted" / "weights.bin") == sha256(big)


@pytest.mark.parametrize(
    ("case", "resumed"),
    [("same source", 4 << 20), ("source changed since", 0), ("part damaged", 0)],
)
def test_a_part_resumes_only_for_the_same_source_and_intact_bytes(
    conn: PodConnection, tree: Path, tmp_path: Path, case: str, resumed: int
) -> None:
    source = random_file(tmp_path / "data.bin", 8 << 20)
    data = source.read_bytes()
    folder = tree / "parts" / case.replace(" ", "-")
    folder.mkdir(parents=True)
    part = folder / f"data.bin{PART_SUFFIX}"
    prefix = bytearray(data[: 5 << 20])  # more than "done": the rest is not trusted
    if case == "part damaged":
        prefix[(4 << 20) - 10] ^= 0xFF
    part.write_bytes(bytes(prefix))
    mtime = int(source.stat().st_mtime) + (7 if case == "source changed since" else 0)
    meta = {"v": 1, "size": 8 << 20, "mtime": mtime, "block": 262144, "done": 4 << 20}
    (folder / f"data.bin{META_SUFFIX}").write_text(json.dumps(meta))
    summary = push(conn, source, f"parts/{folder.name}/data.bin")
    assert summary.resumed_bytes == resumed
    assert summary.bytes == (8 << 20) - resumed
    assert (folder / "data.bin").read_bytes() == data
    assert not part.exists()


def make_tree(root: Path) -> dict[str, bytes]:
    """A small folder tree (nested, an empty folder, an executable); its files' contents."""
    files = {
        "a.txt": b"alpha\n",
        "sub/b.txt": b"bravo\n" * 1000,
        "sub/deeper/c.bin": os.urandom(3 << 20),
        "sub/deeper/run.sh": b"#!/bin/sh\necho run\n",
    }
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "sub" / "deeper" / "run.sh").chmod(0o755)
    (root / "empty").mkdir()
    return files


def test_folders_both_ways_create_missing_folders(
    conn: PodConnection, tree: Path, tmp_path: Path
) -> None:
    local = tmp_path / "project"
    files = make_tree(local)
    pushed = push(conn, local, "not/yet/there")  # the folder itself, parents created
    assert pushed.files == len(files) and pushed.folders >= 3
    there = tree / "not" / "yet" / "there"
    for rel, data in files.items():
        assert (there / rel).read_bytes() == data
        assert int((there / rel).stat().st_mtime) == int((local / rel).stat().st_mtime)
    assert (there / "empty").is_dir()
    assert os.access(there / "sub" / "deeper" / "run.sh", os.X_OK)

    push(conn, local, "not/yet/there/")  # a trailing / (or an existing folder): inside it
    assert (there / "project" / "a.txt").read_bytes() == files["a.txt"]

    back = tmp_path / "missing" / "parent" / "copy"
    pulled = pull(conn, "not/yet/there", back)
    assert pulled.files == len(files) + len(files)  # with the nested project/ copy
    for rel, data in files.items():
        assert (back / rel).read_bytes() == data
        assert int((back / rel).stat().st_mtime) == int((local / rel).stat().st_mtime)
    assert (back / "empty").is_dir()
    assert os.access(back / "sub" / "deeper" / "run.sh", os.X_OK)
    assert not list(back.rglob(f"*{PART_SUFFIX}*"))


def test_default_and_relative_destinations(
    conn: PodConnection, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("hello\n")
    push(conn, note)  # default: the pod's working directory
    assert (tree / "note.txt").read_text() == "hello\n"
    (tree / "inbox").mkdir(exist_ok=True)
    push(conn, note, "inbox")  # an existing folder: inside it
    assert (tree / "inbox" / "note.txt").read_text() == "hello\n"
    push(conn, note, "~/renamed.txt")
    assert (tree / "renamed.txt").read_text() == "hello\n"
    monkeypatch.chdir(tmp_path / "..")
    here = Path.cwd()
    pull(conn, "renamed.txt")  # default: this process's current directory
    assert (here / "renamed.txt").read_text() == "hello\n"
    (here / "renamed.txt").unlink()


def test_progress_snapshots_are_throttled_and_end_complete(
    conn: PodConnection, tmp_path: Path
) -> None:
    local = tmp_path / "many"
    for i in range(30):
        random_file(local / f"f{i:02d}.bin", 1 << 20)
    seen: list[Progress] = []
    started = time.monotonic()
    summary = push(conn, local, "progress-test", progress=seen.append)
    seconds = time.monotonic() - started
    assert summary.files == 30 and summary.bytes == 30 << 20
    assert seen[-1].final and seen[-1].files_done == seen[-1].files_total == 30
    assert seen[-1].bytes_done == seen[-1].bytes_total == 30 << 20
    assert [s.bytes_done for s in seen] == sorted(s.bytes_done for s in seen)
    assert len(seen) <= seconds * 10 + 3, f"{len(seen)} snapshots in {seconds:.2f} s"
    printed = io.StringIO()
    printer = ProgressPrinter(printed, every=0.0)
    for snapshot in seen:
        printer(snapshot)
    lines = printed.getvalue().splitlines()
    assert len(lines) == len(seen)
    assert lines[-1].startswith("push  30/30 files  31.5 MB/31.5 MB")
    assert "pushed 30 files, 31.5 MB" in str(summary)


def test_missing_paths_fail_in_one_line(conn: PodConnection, tmp_path: Path) -> None:
    with pytest.raises(RemoteError) as info:
        pull(conn, "no/such/file.bin", tmp_path)
    assert info.value.reason == "remote"
    assert "has no file or folder" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(RemoteError) as info:
        push(conn, tmp_path / "absent.bin")
    assert info.value.reason == "local" and "\n" not in str(info.value)
    (tmp_path / "x").write_text("x")
    push(conn, tmp_path / "x", "a-file")
    with pytest.raises(RemoteError) as info:
        push(conn, tmp_path / "x", "a-file/inside")  # a file where a folder is needed
    assert info.value.reason == "remote" and "\n" not in str(info.value)
    assert "a-file/inside" in str(info.value)
