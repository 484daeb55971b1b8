"""An unmodified ``runpod`` worker: ``runpod.serverless.start`` with one of five handlers.

Run as ``python runpod_worker.py KIND`` (sync, generator, raises, slow, openai) with the
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


def openai_words(prompt_or_messages, params):
    yield from ["Served", " by", " the", " runpod", " SDK"]


HANDLERS = {
    "sync": sync_handler,
    "generator": generator_handler,
    "raises": raising_handler,
    "slow": slow_handler,
}
if len(sys.argv) > 1 and sys.argv[1] == "openai":  # podbook's helper, served by the SDK
    from podbook import openai_handler

    HANDLERS["openai"] = openai_handler(openai_words, model="sdk-words")

if __name__ == "__main__":
    kind = sys.argv.pop(1)
    config = {"handler": HANDLERS[kind]}
    if kind in ("generator", "openai"):
        config["return_aggregate_stream"] = True
    runpod.serverless.start(config)
