"""Property tests for the numeric ranges and patterns of requests (hypothesis)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from podbook.api import CreatePodRequest, RequestRejected, parse_port, validate_request

POWERS_OF_TWO = {2**n for n in range(1, 64)}


def outcome(data) -> tuple[int, list[str]]:
    """``(201-like 0, [])`` when accepted, else ``(status, errors)``."""
    try:
        validate_request(CreatePodRequest, data)
    except RequestRejected as error:
        return error.status, error.errors
    return 0, []


def gpu_pod(**fields):
    return {"name": "p", "image": "i", "gpu": {"id": "NVIDIA GeForce RTX 4090"}, **fields}


@given(st.integers(min_value=-(2**40), max_value=2**40))
def test_disk_at_least_one(disk):
    expected = (0, []) if disk >= 1 else (422, ["$.disk: must be >= 1"])
    assert outcome(gpu_pod(disk=disk)) == expected


@given(st.integers(min_value=-1000, max_value=100_000))
def test_persistent_size_at_least_ten(size):
    data = gpu_pod(mounts={"persistent": {"size": size, "path": "/workspace"}})
    expected = (0, []) if size >= 10 else (422, ["$.mounts.persistent.size: must be >= 10"])
    assert outcome(data) == expected


@given(st.integers(min_value=-100, max_value=1000))
def test_gpu_count_at_least_one(count):
    data = gpu_pod(gpu={"id": "NVIDIA GeForce RTX 4090", "count": count})
    expected = (0, []) if count >= 1 else (422, ["$.gpu.count: must be >= 1"])
    assert outcome(data) == expected


@given(st.integers(min_value=-(2**20), max_value=2**40))
def test_vcpu_count_at_least_two_and_a_power_of_two(vcpus):
    data = {"name": "p", "image": "i", "cpu": {"id": "cpu3c", "vcpuCount": vcpus}}
    status, errors = outcome(data)
    if vcpus in POWERS_OF_TWO:
        assert (status, errors) == (0, [])
    elif vcpus < 2:
        assert status == 422 and "$.cpu.vcpuCount: must be >= 2" in errors
    else:
        assert (status, errors) == (
            422,
            ["$.cpu.vcpuCount: must be a power of two (2, 4, 8, 16, ...)"],
        )


@given(
    st.integers(min_value=0, max_value=200_000),
    st.sampled_from(["http", "tcp", "udp", "ftp", "HTTP", "", "tcp "]),
)
def test_ports(port, protocol):
    spec = f"{port}/{protocol}"
    status, errors = outcome(gpu_pod(ports=["22/tcp", spec]))
    valid = protocol in ("http", "tcp", "udp") and 1 <= port <= 65535
    duplicate = valid and (port, protocol) == (22, "tcp")
    assert (status == 0) is (valid and not duplicate)
    if duplicate:
        assert errors == ["$.ports: '22/tcp' is listed twice; list each port/protocol once"]
    elif valid:
        assert parse_port(spec) == (port, protocol)
    else:
        assert status == 422 and len(errors) == 1 and errors[0].startswith("$.ports[1]: ")


@given(st.text(max_size=20))
def test_any_port_text_is_accepted_or_named(spec):
    status, errors = outcome(gpu_pod(ports=[spec]))
    assert status in (0, 422)
    if status:
        assert errors[0].startswith("$.ports[0]: ")


@given(st.text(max_size=12) | st.from_regex(r"[0-9]{1,6}(\.[0-9]{1,6})?\n?", fullmatch=True))
@example("12.8\n")  # "$" matched before a final newline
@example("1" * 5000)  # int() refuses it: placement answered 500
def test_cuda_version_patterns(version):
    status, errors = outcome(gpu_pod(gpu={"id": "g", "allowedCudaVersions": [version]}))
    parts = version.split(".")
    numbers = all(p.isascii() and p.isdigit() and len(p) <= 4 for p in parts)
    exact = len(parts) == 2 and numbers
    assert (status == 0) is exact
    status, errors = outcome(gpu_pod(gpu={"id": "g", "minCudaVersion": version}))
    floor = 1 <= len(parts) <= 2 and numbers
    assert (status == 0) is floor


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
POD_KEYS = st.sampled_from(
    ["name", "image", "gpu", "cpu", "disk", "ports", "env", "mounts", "cloud", "minCudaVersion"]
)


@given(JSON | st.dictionaries(POD_KEYS, JSON, max_size=6))
def test_arbitrary_json_never_crashes(value):
    """Any JSON value is either accepted or rejected with 400/422 and path-prefixed lines."""
    status, errors = outcome(value)
    assert status in (0, 400, 422)
    assert all(line.startswith("$") and ": " in line for line in errors)
