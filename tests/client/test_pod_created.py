"""What ``client.pods.create`` tells besides the pod (issue 18): a ``GuardWarning`` line for a
guard that may not work as asked, and the pod-created hooks (the notebook's kernel-exit watch
uses them), against the session's real emulator."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from podbook import AsyncClient
from podbook.client import on_pod_created
from podbook.errors import BadRequest, GuardWarning

GPU = {"id": "NVIDIA GeForce RTX 4090"}


def guard_notes(client: Any, **fields: Any) -> list[str]:
    """The GuardWarning lines of one guarded create."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client.pods.create(name="noted", gpu=GPU, idle_stop="30m", **fields)
    assert all(w.filename == __file__ for w in caught), "the warning points at the caller"
    return [str(w.message) for w in caught if issubclass(w.category, GuardWarning)]


def test_a_bare_image_and_a_missing_start_command_are_one_line_each(client: Any) -> None:
    bare, own_command = guard_notes(client, image="ubuntu:22.04")
    assert bare.startswith("note: image 'ubuntu:22.04' usually has neither curl nor python3")
    assert own_command == (
        "note: the guarded pod runs no command of its own: with the guard, image "
        "'ubuntu:22.04' starts /start.sh if it has one, else it only stays up, and its own "
        "command does not run (give args with the command it should run)"
    )
    assert guard_notes(client, image="ubuntu:22.04", args="sleep infinity") == [bare]


def test_a_service_image_or_an_unguarded_pod_has_nothing_to_say(client: Any) -> None:
    assert guard_notes(client, image="runpod/pytorch:2.4") == []
    assert guard_notes(client, image="nvidia/cuda:12.4.1-base", args="python serve.py") == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client.pods.create(name="plain", gpu=GPU, image="ubuntu:22.04")


def test_the_hooks_hear_of_every_pod_created_and_of_nothing_refused(
    client: Any, emulator: Any
) -> None:
    heard: list[tuple[str, str]] = []
    remove = on_pod_created(lambda pod, settings: heard.append((pod.id, settings.rest_url)))
    broken = on_pod_created(lambda pod, settings: 1 / 0)  # logged, never the caller's error
    try:
        made = client.pods.create(name="heard", gpu=GPU, image="x")

        async def create_async() -> str:
            async with AsyncClient(
                api_key=emulator.api_key, rest_url=emulator.url, queue_url=emulator.url
            ) as aclient:
                return (await aclient.pods.create(name="heard-async", gpu=GPU, image="x")).id

        made_async = asyncio.run(create_async())
        with pytest.raises(BadRequest, match="unknown GPU type"):
            client.pods.create(name="refused", gpu={"id": "no such GPU"}, image="x")
    finally:
        remove()
        broken()
    client.pods.create(name="unheard", gpu=GPU, image="x")
    assert heard == [(made.id, emulator.url), (made_async, emulator.url)]
