"""The API key never appears in a repr, a str, a log line or an error."""

from __future__ import annotations

import logging

import pytest

from podbook import Client
from podbook.client import Call
from podbook.errors import PodbookError

GPU = "NVIDIA GeForce RTX 4090"


def test_key_absent_everywhere(emulator, caplog: pytest.LogCaptureFixture) -> None:
    key = emulator.api_key
    seen: list[str] = []
    caplog.set_level(logging.DEBUG)
    with Client(api_key=key, url=emulator.url) as client:
        seen += [repr(client), str(client), client.target, repr(client.settings)]
        seen += [str(client.settings), repr(vars(client)), repr(client._http.headers)]
        pod = client.pods.create(name="s", image="alpine", gpu=GPU, env={"API_TOKEN": "x"})
        seen += [repr(pod), str(pod.model_dump())]
        failures = [
            lambda: client.pods.get("missing"),
            lambda: client.pods.restart(pod),
            lambda: client.pods.create(name="x", image="alpine"),
            lambda: client.request(Call("POST", "/v2/pods", json={"bogus": 1})),
            lambda: client.request(Call("GET", "/v2/nowhere")),
        ]
        for action in failures:
            with pytest.raises(PodbookError) as info:
                action()
            seen += [str(info.value), repr(info.value), repr(vars(info.value))]
        client.pods.terminate(pod)
    seen += [record.getMessage() for record in caplog.records]
    assert any("/v2/pods" in line for line in seen)  # the log did record requests
    for text in seen:
        assert key not in text
