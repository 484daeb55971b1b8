"""Handlers the worker tests serve in real worker processes (a plain .py file, as users write).

Handlers that must be observed from the test write small files next to a ``marker`` path
given in their input: that is how a test sees what happened inside another process.
"""

import asyncio
import os
import threading
import time
from pathlib import Path

from podbook.worker import progress

_lock = threading.Lock()
_running = 0


def record(path: str, text: str) -> None:
    """Write ``text`` to ``path`` at once (a reader polling for the file never sees it empty)."""
    Path(path + ".part").write_text(text)
    os.replace(path + ".part", path)


def handler(job):
    """Sync: reports progress, waits a little, returns what it got."""
    data = job["input"]
    progress(job, {"step": 1, "of": 2})
    time.sleep(data.get("hold", 0.0))
    return {"got": data, "pid": os.getpid()}


async def async_handler(job):
    """Async: awaits, then returns; writes ``.done`` only if it ran to the end."""
    data = job["input"]
    progress(job, "halfway")
    await asyncio.sleep(data.get("sleep", 0.0))
    if data.get("marker"):
        Path(data["marker"] + ".done").write_text("done")
    return {"slept": data.get("sleep", 0.0)}


def tokens(job):
    """Generator: yields ``n`` tokens ``delay`` s apart; records how many it produced."""
    data = job["input"]
    produced = 0
    try:
        for i in range(data.get("n", 3)):
            time.sleep(data.get("delay", 0.0))
            produced += 1
            yield f"tok{i}"
    finally:
        if data.get("marker"):
            record(data["marker"] + ".produced", str(produced))


async def async_tokens(job):
    """Async generator: yields ``{"i": i}`` chunks; records when it was closed early."""
    data = job["input"]
    i = 0
    try:
        for i in range(data.get("n", 3)):
            await asyncio.sleep(data.get("delay", 0.0))
            yield {"i": i}
    finally:
        if data.get("marker"):
            record(data["marker"] + ".closed", str(i))


def raises(job):
    """Raises a ValueError naming its input."""
    raise ValueError(f"cannot handle {job['input']!r}")


def fails_softly(job):
    """Returns an ``error`` key: the job fails with that message, the rest is output."""
    return {"error": "the model is not loaded", "partial": 1}


def fails_mid_stream(job):
    """Streams two chunks, then raises."""
    yield "a"
    yield "b"
    raise RuntimeError("lost the GPU")


def refreshes(job):
    """Asks for a fresh worker after this job."""
    return {"pid": os.getpid(), "refresh_worker": True}


def overlap(job):
    """Sync: holds ``hold`` s and reports how many jobs ran at once in this worker."""
    global _running
    with _lock:
        _running += 1
        peak = _running
    started = time.time()
    time.sleep(job["input"].get("hold", 0.3))
    with _lock:
        peak = max(peak, _running)
        _running -= 1
    return {"start": started, "end": time.time(), "peak": peak}


def not_json(job):
    """Returns something that is not JSON."""
    return {"when": object()}


def environment(job):
    """What a handler can see of the keys in its environment."""
    return {name: os.environ.get(name) for name in ("RUNPOD_API_KEY", "RUNPOD_AI_API_KEY")}


def big_pieces(job):
    """Generator: yields ``count`` texts of ``size`` characters ``é`` (2 bytes each in UTF-8)."""
    data = job["input"]
    for _ in range(data.get("count", 2)):
        yield "é" * data["size"]


def ticking(job):
    """Sync: appends ``RUN tick I`` to ``marker`` every ``delay`` s until ``marker + ".go"``
    exists (or ``limit`` ticks), then returns ``{"run": RUN}``. RUN is ``PID.TOKEN`` (one per
    execution); a run stopped by an exception writes ``RUN stopped NAME`` first."""
    data = job["input"]
    marker = data["marker"]
    run = f"{os.getpid()}.{os.urandom(3).hex()}"

    def line(text: str) -> None:
        with open(marker, "a") as out:
            out.write(f"{run} {text}\n")

    line("start")
    try:
        tick = 0
        while tick < data.get("limit", 1200) and not os.path.exists(marker + ".go"):
            line(f"tick {tick}")
            tick += 1
            time.sleep(data.get("delay", 0.05))
    except BaseException as exc:
        line(f"stopped {type(exc).__name__}")
        raise
    line("end")
    return {"run": run}
