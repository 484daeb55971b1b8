"""The emulator gives memory back after a long drain (podbook.emulator.memory).

The figures are bench/scale.py's (tests/reliability/test_scale_bench_short.py runs it small);
these check the parts: the allocator the emulator process runs with, the trim after a burst
of forgotten jobs, and the job tables released when they empty.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from podbook.emulator import memory


def environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    pairs = [item.decode(errors="replace").partition("=") for item in raw if item]
    return {name: value for name, _, value in pairs}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator only")
def test_the_emulator_process_runs_with_the_system_allocator(emulator: Any) -> None:
    if memory._malloc_trim() is None:
        pytest.skip("no malloc_trim in this C library")
    assert environment_of(emulator.proc.pid).get("PYTHONMALLOC") == "malloc"


def test_a_user_choice_of_allocator_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONMALLOC", "pymalloc")
    memory.use_system_allocator(["emulator"])  # returns: it does not start itself again


def test_children_of_the_emulator_get_the_users_environment_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """podbook chose the allocator (PODBOOK_SET_PYTHONMALLOC): the process keeps it, the
    workers and pods it starts do not inherit it."""
    monkeypatch.setenv("PYTHONMALLOC", "malloc")
    monkeypatch.setenv(memory.SET_BY_PODBOOK_VAR, "1")
    memory.use_system_allocator(["emulator"])
    assert "PYTHONMALLOC" not in os.environ
    assert memory.SET_BY_PODBOOK_VAR not in os.environ


def test_one_trim_after_a_burst_of_releases_once_it_is_quiet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trims: list[float] = []
    monkeypatch.setattr(memory, "trim", lambda: trims.append(asyncio.get_running_loop().time()))

    async def burst() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        releases = memory.TrimAfterRelease(every=100, quiet=0.1)
        for _ in range(5):  # 500 releases over 0.2 s: one burst
            releases.released(100)
            await asyncio.sleep(0.05)
        last = loop.time()
        releases.released(10)  # too few alone to arm a trim
        await asyncio.sleep(0.5)
        return last, loop.time()

    last, end = asyncio.run(burst())
    assert len(trims) == 1
    assert last < trims[0] < end


def test_no_trim_for_a_few_releases(monkeypatch: pytest.MonkeyPatch) -> None:
    trims: list[int] = []
    monkeypatch.setattr(memory, "trim", lambda: trims.append(1))

    async def few() -> None:
        releases = memory.TrimAfterRelease(every=100, quiet=0.05)
        releases.released(99)
        await asyncio.sleep(0.2)

    asyncio.run(few())
    assert trims == []


def test_an_emptied_table_is_released_and_a_full_one_kept() -> None:
    emptied = {str(i): i for i in range(100_000)}
    full = {"a": 1}
    grown_size = sys.getsizeof(emptied)
    for key in list(emptied):
        del emptied[key]
    assert sys.getsizeof(emptied) == grown_size  # CPython keeps the table of its largest size
    memory.release_if_empty(emptied, full)
    assert sys.getsizeof(emptied) < grown_size / 100
    assert full == {"a": 1}


def test_the_trim_after_a_burst_collects_first_only_when_little_is_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full collection empties the interpreter's free lists before the trim, but only on a
    small heap: on a large one it would stall the loop for seconds."""
    steps: list[str] = []
    monkeypatch.setattr(memory, "trim", lambda: steps.append("trim"))
    monkeypatch.setattr(memory.gc, "collect", lambda *_: steps.append("collect") or 0)
    held = {"jobs": 50_000}

    async def bursts() -> None:
        releases = memory.TrimAfterRelease(every=10, quiet=0.05, small=lambda: held["jobs"] < 10)
        releases.released(10)
        await asyncio.sleep(0.2)
        held["jobs"] = 0
        releases.released(10)
        await asyncio.sleep(0.2)

    asyncio.run(bursts())
    assert steps == ["trim", "collect", "trim"]
