"""What no process can be started with is refused up front (issue 16, ``podbook.api.container``).

An ``env`` name holding ``=`` or a NUL, a NUL in an ``env`` value or in ``args``, a port with
a trailing newline, ``args`` or a variable over Linux's ``MAX_ARG_STRLEN``, ``args`` and
``env`` together over 1 MiB, more than 64 ports or one port twice: each is a 422 with one line
naming what is wrong, from every request model that carries these fields, and so from the
client before anything is sent. The limits are checked against the kernel itself: a string of
the largest accepted size starts a process, one byte more does not.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from typing import Any

import pytest
from limit_helpers import filled_env

from podbook import Client
from podbook.api import (
    MAX_ARG_STRING_BYTES,
    MAX_PORTS,
    CreateClusterRequest,
    CreatePodRequest,
    RequestRejected,
    UpdatePodRequest,
    validate_request,
)
from podbook.api.endpoints import CreateEndpointRequest, UpdateEndpointRequest
from podbook.api.templates import CreateTemplateRequest, UpdateTemplateRequest
from podbook.errors import InvalidRequest

GPU = "NVIDIA GeForce RTX 4090"

# Every request model that carries args, env and ports, with the least body it takes.
CARRIERS: dict[str, tuple[type, dict[str, Any]]] = {
    "createPod": (CreatePodRequest, {"name": "p", "image": "i:1", "gpu": {"id": GPU}}),
    "updatePod": (UpdatePodRequest, {}),
    "createTemplate": (CreateTemplateRequest, {"name": "t", "image": "i:1"}),
    "updateTemplate": (UpdateTemplateRequest, {}),
    "createCluster": (
        CreateClusterRequest,
        {
            "name": "c",
            "type": "APPLICATION",
            "image": "i:1",
            "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
        },
    ),
    "createEndpoint": (CreateEndpointRequest, {"name": "e"}),
    "updateEndpoint": (UpdateEndpointRequest, {}),
}

NOT_STARTABLE: dict[str, tuple[dict[str, Any], str]] = {
    "env name with =": (
        {"env": {"A=B": "x"}},
        "$.env[\"A=B\"]: a variable name cannot contain '=' (the environment stores"
        " NAME=VALUE); rename the variable",
    ),
    "empty env name": (
        {"env": {"": "x"}},
        '$.env[""]: a variable name must not be empty; name the variable',
    ),
    "NUL in an env name": (
        {"env": {"A\x00B": "x"}},
        '$.env["A\\u0000B"]: must not contain a NUL character (\\u0000): an environment'
        " variable cannot hold one; remove it",
    ),
    "NUL in an env value": (
        {"env": {"A": "x\x00y"}},
        "$.env.A: must not contain a NUL character (\\u0000): an environment variable cannot"
        " hold one; remove it",
    ),
    "NUL in args": (
        {"args": "python -c 1\x00; rm -rf /"},
        "$.args: must not contain a NUL character (\\u0000): a process argument cannot hold"
        " one; remove it",
    ),
    "lone surrogate in args": (
        {"args": "echo \ud800"},
        "$.args: must be valid Unicode text: it holds a lone surrogate (\\ud800-\\udfff),"
        " which no process can be given; send the character it stands for",
    ),
    "port with a trailing newline": (
        {"ports": ["22/tcp\n"]},
        "$.ports[0]: must be 'port/protocol' with protocol http, tcp or udp (e.g. '8888/http')",
    ),
    "port in non-ASCII digits": (
        {"ports": ["\u0662\u0662/tcp"]},
        "$.ports[0]: must be 'port/protocol' with protocol http, tcp or udp (e.g. '8888/http')",
    ),
    "port listed twice": (
        {"ports": ["8888/http", "22/tcp", "8888/http"]},
        "$.ports: '8888/http' is listed twice; list each port/protocol once",
    ),
    "one port in two spellings": (
        {"ports": ["22/tcp", "022/tcp"]},
        "$.ports: '22/tcp' and '022/tcp' are the same port/protocol; list each port/protocol once",
    ),
    "too many ports": (
        {"ports": [f"{port}/tcp" for port in range(1000, 1000 + MAX_PORTS + 1)]},
        "$.ports: has 65 ports; at most 64 can be exposed: remove some",
    ),
    "args over MAX_ARG_STRLEN": (
        {"args": "x" * (MAX_ARG_STRING_BYTES + 1)},
        "$.args: is 131,072 bytes in UTF-8; the single argument of /bin/sh -c holds at most"
        " 131,071 (Linux's MAX_ARG_STRLEN): pass larger data in a file or a volume",
    ),
    "variable over MAX_ARG_STRLEN": (
        {"env": {"BIG": "é" * 65_535}},  # 2 bytes each in UTF-8: 3 + 1 + 131,070
        '$.env: variable "BIG" is, as NAME=VALUE, 131,074 bytes in UTF-8; one environment'
        " string holds at most 131,071 (Linux's MAX_ARG_STRLEN): pass larger data in a file"
        " or a volume",
    ),
    "args and env over 1 MiB": (
        {"args": "x" * 100_000, "env": {f"V{i}": "y" * 100_000 for i in range(10)}},
        "$: args and env take 1,100,129 bytes together (each string counted with its NUL and"
        " pointer, as Linux does); at most 1,048,576 (1 MiB) fit: pass larger data in a file"
        " or a volume",
    ),
}


def refusal(model: type, body: dict[str, Any]) -> RequestRejected:
    with pytest.raises(RequestRejected) as caught:
        validate_request(model, body)
    return caught.value


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("case", NOT_STARTABLE)
def test_what_no_process_can_start_with_is_refused_by_every_carrier(
    case: str, carrier: str
) -> None:
    model, least = CARRIERS[carrier]
    fields, line = NOT_STARTABLE[case]
    rejected = refusal(model, {**least, **fields})
    assert (rejected.status, rejected.errors) == (422, [line])
    assert "\n" not in rejected.detail


@pytest.mark.parametrize("carrier", CARRIERS)
def test_the_largest_accepted_sizes_are_accepted(carrier: str) -> None:
    model, least = CARRIERS[carrier]
    largest = {
        "args": "x" * MAX_ARG_STRING_BYTES,
        "env": {"BIG": "y" * (MAX_ARG_STRING_BYTES - 4), "A": "1"},
        "ports": [f"{port}/http" for port in range(8000, 8000 + MAX_PORTS)],
    }
    validate_request(model, {**least, **largest})
    args = "x" * 1000
    env = filled_env(args, 100_000)
    validate_request(model, {**least, "args": args, "env": env})
    env["LAST"] += "y"
    assert (
        refusal(model, {**least, "args": args, "env": env})
        .errors[0]
        .startswith("$: args and env take 1,048,577 bytes together")
    )


def test_twenty_thousand_ports_are_refused_before_any_is_read() -> None:
    body = {"name": "p", "image": "i:1", "gpu": {"id": GPU}, "ports": ["bogus"] * 20_000}
    rejected = refusal(CreatePodRequest, body)
    # One line for the count, none of the 20,000 for the items: they were never looked at.
    assert rejected.errors == ["$.ports: has 20,000 ports; at most 64 can be exposed: remove some"]


def test_a_key_with_a_newline_is_named_on_one_line() -> None:
    rejected = refusal(CreatePodRequest, {"name": "p", "image": "i", "gpu": {"id": GPU}, "x\n": 1})
    assert rejected.errors == ['$: additional property "x\\n" not allowed']
    rejected = refusal(UpdatePodRequest, {"env": {"A\n": 1}})
    assert rejected.errors == ['$.env["A\\n"]: must be a string']


def test_the_client_refuses_before_sending() -> None:
    # Nothing listens on port 9: a request that was sent would fail to connect instead.
    with Client(api_key="pbk_unused", url="http://127.0.0.1:9") as client:
        with pytest.raises(InvalidRequest) as caught:
            client.pods.create(name="p", image="i:1", gpu=GPU, env={"A=B": "1"})
        assert caught.value.status == 422
        assert "$.env[\"A=B\"]: a variable name cannot contain '='" in str(caught.value)
        with pytest.raises(InvalidRequest, match="at most 64 can be exposed"):
            client.pods.update("pod-1", ports=[f"{p}/tcp" for p in range(1, 20_001)])
        with pytest.raises(InvalidRequest, match="NUL character"):
            client.templates.create(name="t", image="i:1", args="a\x00b")


# ------------------------------------------------------------------ the kernel agrees


linux_only = pytest.mark.skipif(
    sys.platform != "linux", reason="the limits are Linux's (MAX_ARG_STRLEN, ARG_MAX)"
)


def _starts(args: str, env: dict[str, str]) -> bool:
    """Whether ``/bin/sh -c args`` starts with ``env`` added to this process's environment."""
    try:
        subprocess.run(["/bin/sh", "-c", args], env={**os.environ, **env}, check=True)
    except OSError as exc:
        assert exc.errno == errno.E2BIG, exc
        return False
    return True


@linux_only
def test_the_largest_args_starts_and_one_byte_more_does_not() -> None:
    command = "true" + " " * (MAX_ARG_STRING_BYTES - 4)
    assert _starts(command, {})
    assert not _starts(command + " ", {})


@linux_only
def test_the_largest_variable_starts_and_one_byte_more_does_not() -> None:
    value = "y" * (MAX_ARG_STRING_BYTES - len("BIG="))
    assert _starts("true", {"BIG": value})
    assert not _starts("true", {"BIG": value + "y"})


@linux_only
def test_args_and_env_at_the_total_limit_start_beside_this_environment() -> None:
    """The largest args and 1 MiB in all of the smallest variables (where the pointers weigh
    most), beside this process's own environment, still start."""
    args = "true" + " " * (MAX_ARG_STRING_BYTES - 4)
    env = filled_env(args, 0)
    assert len(env) > 50_000
    assert _starts(args, env)
