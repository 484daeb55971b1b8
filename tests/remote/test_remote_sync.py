"""One-way sync of a local folder to a pod (``podbook.remote.dirsync``): only changed files
move, a no-change sync of 5,000 small files is quick, ignore rules (defaults, virtualenvs,
``.podbookignore``), ``delete``, and the watch loop.

Real pods of ``podbook emulator --runtime local``; the remote side is checked on the host, in
the pod's tree.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from processes import wait_for
from transfer_helpers import (  # noqa: F401 - fixtures, used by name
    client_fixture,
    conn_fixture,
    key_fixture,
    pod_fixture,
    tree_fixture,
)

from podbook import Client
from podbook.api.pods import Pod
from podbook.remote.dirsync import IgnoreRules, sync, watch
from podbook.remote.keys import SshKeyPair
from podbook.remote.progress import TransferSummary
from podbook.remote.ssh import PodConnection, RemoteError

pytestmark = pytest.mark.timeout(180)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def remote_files(root: Path) -> set[str]:
    """Relative paths of the files under ``root`` (the remote side, read on the host)."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_a_no_change_sync_of_5000_small_files_takes_under_2_s(
    conn: PodConnection, pod: Pod, key: SshKeyPair, client: Client, tree: Path, tmp_path: Path
) -> None:
    local = tmp_path / "many"
    for i in range(5000):
        path = local / f"pkg{i % 50:02d}" / f"mod{i % 4}" / f"file{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {i}\n")
    first = sync(conn, local, "many")
    assert first.files == 5000 and first.skipped == 0
    assert len(remote_files(tree / "many")) == 5000

    # Under 2 s; on a machine so loaded that even that fails, a sync with nothing to move must
    # still take at most a third of the first one, which moved every file.
    bound = max(2.0, first.seconds / 3)
    open_times, fresh_times = [], []
    for _ in range(3):  # best of three: a loaded shared machine stalls a single run
        started = time.monotonic()
        again = sync(conn, local, "many")
        open_times.append(time.monotonic() - started)
        started = time.monotonic()
        fresh = sync(pod.id, local, "many", client=client, key=key)  # connect, read, sync
        fresh_times.append(time.monotonic() - started)
        if min(open_times) < bound and min(fresh_times) < bound:
            break
    open_seconds, fresh_seconds = min(open_times), min(fresh_times)
    print(
        f"5,000 files: first sync {first.seconds:.2f} s; no-change sync {open_seconds:.2f} s "
        f"on an open connection, {fresh_seconds:.2f} s with connecting"
    )
    for summary in (again, fresh):
        assert summary.files == 0 and summary.bytes == 0 and summary.skipped == 5000
    assert open_seconds < bound
    assert fresh_seconds < bound


def test_only_files_whose_size_or_time_changed_move(
    conn: PodConnection, tree: Path, tmp_path: Path
) -> None:
    local = tmp_path / "proj"
    write(local, {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c = 1\n", "d/e.py": "e\n"})
    assert sync(conn, local, "proj").files == 4
    remote_mtime = (tree / "proj" / "a.py").stat().st_mtime
    assert remote_mtime == int((local / "a.py").stat().st_mtime)

    (local / "a.py").write_text("a = 22\n")  # another size
    later = time.time() + 10
    os.utime(local / "b.py", (later, later))  # same size, another time
    (local / "new").mkdir()  # an empty folder
    moved = sync(conn, local, "proj")
    assert sorted(moved.paths) == ["a.py", "b.py"]
    assert moved.skipped == 2
    assert (tree / "proj" / "a.py").read_text() == "a = 22\n"
    assert int((tree / "proj" / "b.py").stat().st_mtime) == int(later)
    assert (tree / "proj" / "new").is_dir()
    assert sync(conn, local, "proj").files == 0


def test_ignore_rules_defaults_virtualenvs_and_podbookignore(
    conn: PodConnection, tree: Path, tmp_path: Path
) -> None:
    local = tmp_path / "work"
    write(
        local,
        {
            "train.py": "print('train')\n",
            "run.log": "noise\n",
            "keep.log": "kept\n",
            "data/big.csv": "1,2,3\n",
            "src/util.py": "x = 1\n",
            "src/__pycache__/util.cpython-311.pyc": "bytecode",
            ".git/HEAD": "ref: refs/heads/main\n",
            ".ipynb_checkpoints/train-checkpoint.py": "old\n",
            ".venv/bin/python": "#!",
            "venv/lib/site.py": "#",
            "myenv/pyvenv.cfg": "home = /usr/bin\n",
            "myenv/lib/mod.py": "#",
            "notes/.git/config": "nested repo\n",
            ".podbookignore": "# comments are fine\n*.log\n!keep.log\ndata/\n",
        },
    )
    summary = sync(conn, local, "work")
    there = tree / "work"
    assert remote_files(there) == {
        "train.py",
        "keep.log",
        "src/util.py",
        ".podbookignore",
    }
    assert summary.files == 4

    # ignored paths on the pod are neither sent nor deleted
    write(there, {"run.log": "the pod's own log\n", "data/remote.csv": "9\n", "myenv/x": "1"})
    synced = sync(conn, local, "work", delete=True)
    assert synced.deleted == 0
    assert (there / "run.log").read_text() == "the pod's own log\n"
    assert (there / "data" / "remote.csv").exists() and (there / "myenv" / "x").exists()

    rules = IgnoreRules.for_folder(local)
    assert rules.skips(".git", is_dir=True) and rules.skips("a/b/__pycache__", is_dir=True)
    assert not rules.skips("keep.log") and rules.skips("deep/run.log")


def test_podbookignore_can_take_a_default_back(
    conn: PodConnection, tree: Path, tmp_path: Path
) -> None:
    local = tmp_path / "withgit"
    write(local, {"a.txt": "a\n", ".git/HEAD": "ref\n", ".podbookignore": "!.git/\n"})
    sync(conn, local, "withgit")
    assert (tree / "withgit" / ".git" / "HEAD").read_text() == "ref\n"


def test_delete_removes_what_the_local_folder_lacks(
    conn: PodConnection, tree: Path, tmp_path: Path
) -> None:
    local = tmp_path / "mirror"
    write(local, {"keep.txt": "k\n", "old.txt": "o\n", "gone/a.txt": "a\n", "gone/b/c.txt": "c\n"})
    sync(conn, local, "mirror")
    (local / "old.txt").unlink()
    for path in sorted((local / "gone").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (local / "gone").rmdir()

    kept = sync(conn, local, "mirror")  # without delete: nothing removed
    assert kept.deleted == 0
    assert remote_files(tree / "mirror") == {"keep.txt", "old.txt", "gone/a.txt", "gone/b/c.txt"}

    removed = sync(conn, local, "mirror", delete=True)
    assert removed.deleted == 2  # old.txt, and the folder gone/ with what it held
    assert remote_files(tree / "mirror") == {"keep.txt"}
    assert not (tree / "mirror" / "gone").exists()


def test_a_file_where_the_pod_has_a_folder_needs_delete(
    conn: PodConnection, tree: Path, tmp_path: Path
) -> None:
    local = tmp_path / "clash"
    write(local, {"thing": "now a file\n"})
    write(tree / "clash", {"thing/inside.txt": "was a folder\n"})
    with pytest.raises(RemoteError) as info:
        sync(conn, local, "clash")
    assert "is a folder there and a file here" in str(info.value)
    assert "\n" not in str(info.value)
    sync(conn, local, "clash", delete=True)
    assert (tree / "clash" / "thing").read_text() == "now a file\n"


def test_watch_syncs_each_change_until_stopped(
    conn: PodConnection, tree: Path, tmp_path: Path
) -> None:
    local = tmp_path / "live"
    write(local, {"app.py": "v = 1\n"})
    stop = threading.Event()
    rounds: list[TransferSummary] = []
    result: list[TransferSummary] = []
    watcher = threading.Thread(
        target=lambda: result.append(
            watch(conn, local, "live", interval=0.1, stop=stop, on_sync=rounds.append)
        ),
        daemon=True,
    )
    watcher.start()
    try:
        target = tree / "live" / "app.py"
        wait_for(lambda: target.exists(), timeout=15, what="the first sync")
        (local / "app.py").write_text("v = 2 and more\n")
        wait_for(
            lambda: target.read_text() == "v = 2 and more\n", timeout=15, what="the change synced"
        )
        write(local, {"pkg/new.py": "new\n"})
        wait_for(lambda: (tree / "live" / "pkg" / "new.py").exists(), timeout=15, what="new file")
    finally:
        stop.set()
        watcher.join(timeout=15)
    assert not watcher.is_alive()
    assert len(rounds) >= 2 and all(r.files >= 1 for r in rounds)  # a write seen half-done
    assert result[0].files == 1 + sum(r.files for r in rounds)  # adds a round
