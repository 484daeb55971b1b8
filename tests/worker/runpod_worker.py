"""An unmodified ``runpod`` worker: ``runpod.serverless.start`` with one of four handlers.

Run as ``python runpod_worker.py KIND`` (sync, generator, raises, slow) with the
``RUNPOD_*`` variables of ``podbook worker-env``; the handler of ``slow`` writes
``<marker>.done`` only if it runs to the end.
"""

import asyncio
import sys
from pathlib import Path

import runpod


def sync_handler(job):
    return {"echo": job["input"], "worker": "runpod"}


def generator_handler(job):
    for i in range(job["input"].get("n", 3)):
        yield f"t{i}"


def raising_handler(job):
    raise ValueError(f"sdk worker refuses {job['input']!r}")


async def slow_handler(job):
    await asyncio.sleep(job["input"].get("sleep", 5))
    Path(job["input"]["marker"] + ".done").write_text("done")
    return "late"


HANDLERS = {
    "sync": sync_handler,
    "generator": generator_handler,
    "raises": raising_handler,
    "slow": slow_handler,
}

if __name__ == "__main__":
    kind = sys.argv.pop(1)
    config = {"handler": HANDLERS[kind]}
    if kind == "generator":
        config["return_aggregate_stream"] = True
    runpod.serverless.start(config)
