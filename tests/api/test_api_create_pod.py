"""Every rule of the create-pod request, good and bad, with the exact status and error line."""

from __future__ import annotations

import json

import pytest

from podbook.api import CreatePodRequest, RequestRejected, check_rules, to_wire, validate_request

GPU = {"id": "NVIDIA GeForce RTX 4090"}
CPU = {"id": "cpu3c", "vcpuCount": 2}


def body(**fields):
    """A valid GPU pod body with ``fields`` merged over it (``None`` removes a field)."""
    base = {"name": "train", "image": "runpod/pytorch:2.8", "gpu": dict(GPU)}
    base.update(fields)
    return {key: value for key, value in base.items() if value is not None}


def rejected(data) -> RequestRejected:
    with pytest.raises(RequestRejected) as info:
        validate_request(CreatePodRequest, data)
    return info.value


# --- accepted ------------------------------------------------------------------------------


def test_minimal_gpu_pod_defaults():
    pod = validate_request(CreatePodRequest, body())
    assert pod.gpu is not None and pod.gpu.count == 1
    assert pod.cloud == "SECURE"
    assert pod.start_ssh is False and pod.start_jupyter is False and pod.global_networking is False
    assert to_wire(pod) == {"name": "train", "image": "runpod/pytorch:2.8", "gpu": GPU}


def test_every_field_round_trips_in_camel_case():
    data = body(
        args="--serve",
        disk=50,
        ports=["8888/http", "22/tcp", "5353/udp"],
        env={"MODEL": "llama"},
        registry="reg_1",
        mounts={"network": [{"volumeId": "vol_1", "path": "/runpod-volume"}]},
        gpu={"id": "NVIDIA H100 80GB HBM3", "count": 2, "allowedCudaVersions": ["12.8", "12.6"]},
        cloud="COMMUNITY",
        dataCenterIds=["US-TX-3", "EU-RO-1"],
        globalNetworking=True,
        startSsh=True,
        startJupyter=True,
        templateId="runpod-torch-v280",
    )
    pod = validate_request(CreatePodRequest, data)
    assert pod.data_center_ids == ["US-TX-3", "EU-RO-1"]
    assert pod.mounts.network[0].volume_id == "vol_1"
    assert to_wire(pod) == data


def test_cpu_pod():
    pod = validate_request(CreatePodRequest, body(gpu=None, cpu={"id": "cpu5c", "vcpuCount": 8}))
    assert pod.cpu.vcpu_count == 8 and pod.gpu is None


def test_template_replaces_image():
    pod = validate_request(CreatePodRequest, body(image=None, templateId="runpod-torch-v280"))
    assert pod.image is None and pod.template_id == "runpod-torch-v280"


def test_registry_may_be_null():
    assert validate_request(CreatePodRequest, body(registry=None)).registry is None
    data = body()
    data["registry"] = None
    assert validate_request(CreatePodRequest, data).registry is None


@pytest.mark.parametrize("floor", ["12", "12.1", "12.11", "13.0"])
def test_min_cuda_version_major_or_major_minor(floor):
    pod = validate_request(CreatePodRequest, body(gpu={**GPU, "minCudaVersion": floor}))
    assert pod.gpu.min_cuda_version == floor


def test_empty_allowed_list_may_accompany_a_floor():
    data = body(gpu={**GPU, "allowedCudaVersions": [], "minCudaVersion": "12.4"})
    pod = validate_request(CreatePodRequest, data)
    assert pod.gpu.allowed_cuda_versions == [] and pod.gpu.min_cuda_version == "12.4"


def test_seed_top_level_cuda_fields_move_into_gpu():
    pod = validate_request(CreatePodRequest, body(allowedCudaVersions=["12.4"]))
    assert pod.gpu.allowed_cuda_versions == ["12.4"]
    assert pod.allowed_cuda_versions is None
    assert to_wire(pod)["gpu"] == {**GPU, "allowedCudaVersions": ["12.4"]}
    assert "allowedCudaVersions" not in to_wire(pod)


def test_body_as_json_bytes_and_text():
    text = json.dumps(body())
    assert validate_request(CreatePodRequest, text).name == "train"
    assert validate_request(CreatePodRequest, text.encode()).name == "train"


# --- 400: rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (
            body(cpu=CPU),
            "$: gpu and cpu are mutually exclusive; send exactly one of them",
        ),
        (
            body(gpu=None),
            '$: one of gpu or cpu is required (e.g. "gpu": {"id": "NVIDIA GeForce RTX 4090"}'
            ' or "cpu": {"id": "cpu3c", "vcpuCount": 2})',
        ),
        (
            body(gpu=None, cpu=CPU, minCudaVersion="12.4"),
            "$.minCudaVersion: CUDA constraints apply to GPU pods only; remove it for a CPU pod",
        ),
        (
            body(gpu=None, cpu=CPU, allowedCudaVersions=["12.4"]),
            "$.allowedCudaVersions: CUDA constraints apply to GPU pods only;"
            " remove it for a CPU pod",
        ),
        (
            body(gpu=None, cpu={**CPU, "allowedCudaVersions": ["12.4"]}),
            "$.cpu.allowedCudaVersions: CUDA constraints apply to GPU pods only;"
            " remove it for a CPU pod",
        ),
        (
            body(gpu={**GPU, "allowedCudaVersions": ["12.4"], "minCudaVersion": "12"}),
            "$.gpu: allowedCudaVersions and minCudaVersion are mutually exclusive; send one"
            " (an empty allowedCudaVersions may accompany minCudaVersion)",
        ),
        (
            body(allowedCudaVersions=["12.4"], minCudaVersion="12"),
            "$.gpu: allowedCudaVersions and minCudaVersion are mutually exclusive; send one"
            " (an empty allowedCudaVersions may accompany minCudaVersion)",
        ),
        (
            body(gpu={**GPU, "minCudaVersion": "12"}, allowedCudaVersions=["12.4"]),
            "$.allowedCudaVersions: CUDA constraints are sent both at the top level and in gpu;"
            " send them in gpu only",
        ),
        (
            body(
                mounts={
                    "persistent": {"size": 20, "path": "/workspace"},
                    "network": [{"volumeId": "vol_1", "path": "/data"}],
                }
            ),
            "$.mounts: persistent and network mounts are mutually exclusive; send only one",
        ),
        (
            body(gpu=None, cpu=CPU, mounts={"persistent": {"size": 20, "path": "/workspace"}}),
            "$.mounts.persistent: not available on CPU pods; use a network volume"
            " (mounts.network) instead",
        ),
    ],
)
def test_rule_violations_are_400_with_the_line(data, line):
    error = rejected(data)
    assert error.status == 400
    assert error.title == "Bad Request"
    assert error.errors == [line]
    assert error.detail == line


def test_several_rule_violations_are_all_listed():
    data = body(
        gpu=None,
        cpu=CPU,
        minCudaVersion="12",
        mounts={"persistent": {"size": 20, "path": "/w"}},
    )
    error = rejected(data)
    assert error.status == 400
    assert len(error.errors) == 2
    assert error.detail == error.errors[0] + " (and 1 more)"
    assert str(error).splitlines() == [
        f"400 Bad Request: {error.detail}",
        *(f"  - {line}" for line in error.errors),
    ]


def test_cpu_pod_with_network_volume_is_fine():
    data = body(gpu=None, cpu=CPU, mounts={"network": [{"volumeId": "v", "path": "/d"}]})
    assert validate_request(CreatePodRequest, data).mounts.network[0].path == "/d"


def test_check_rules_on_a_model_built_in_python():
    from podbook.api import CreateCpuConfig, CreateGpuConfig

    model = CreatePodRequest(
        name="x",
        image="i",
        gpu=CreateGpuConfig(id="g"),
        cpu=CreateCpuConfig(id="cpu3c", vcpu_count=2),
    )
    with pytest.raises(RequestRejected) as info:
        check_rules(model)
    assert info.value.status == 400
    check_rules(CreatePodRequest(name="x", image="i", gpu=CreateGpuConfig(id="g")))


# --- 422: schema ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (body(bogus=1), "$: additional property 'bogus' not allowed"),
        (body(gpu={**GPU, "x": 1}), "$.gpu: additional property 'x' not allowed"),
        (
            body(gpu=None, cpu={**CPU, "memory": 8}),
            "$.cpu: additional property 'memory' not allowed",
        ),
        (
            body(mounts={"persistent": {"size": 20, "path": "/w", "ro": True}}),
            "$.mounts.persistent: additional property 'ro' not allowed",
        ),
        (body(mounts={"tmpfs": {}}), "$.mounts: additional property 'tmpfs' not allowed"),
        (body(name=""), "$.name: must not be empty"),
        (body(name=5), "$.name: must be a string"),
        (body(image=None), "$.image: is required unless templateId is set"),
        (body(templateId=""), "$.templateId: must not be empty"),
        (body(disk=0), "$.disk: must be >= 1"),
        (body(disk="50"), "$.disk: must be an integer"),
        (body(disk=50.0), "$.disk: must be an integer"),
        (body(disk=True), "$.disk: must be an integer"),
        (body(gpu={"id": GPU["id"], "count": 0}), "$.gpu.count: must be >= 1"),
        (body(gpu={"count": 1}), "$.gpu.id: is required"),
        (body(gpu="NVIDIA GeForce RTX 4090"), "$.gpu: must be an object"),
        (body(gpu=None, cpu={"id": "cpu3c", "vcpuCount": 1}), "$.cpu.vcpuCount: must be >= 2"),
        (
            body(gpu=None, cpu={"id": "cpu3c", "vcpuCount": 6}),
            "$.cpu.vcpuCount: must be a power of two (2, 4, 8, 16, ...)",
        ),
        (body(gpu=None, cpu={"vcpuCount": 2}), "$.cpu.id: is required"),
        (body(gpu=None, cpu={"id": "", "vcpuCount": 2}), "$.cpu.id: must not be empty"),
        (
            body(ports=["8888/http", "8888"]),
            "$.ports[1]: must be 'port/protocol' with protocol http, tcp or udp (e.g. '8888/http')",
        ),
        (body(ports=["0/tcp"]), "$.ports[0]: port must be between 1 and 65535"),
        (body(ports=["65536/tcp"]), "$.ports[0]: port must be between 1 and 65535"),
        (
            body(ports=["22/TCP"]),
            "$.ports[0]: must be 'port/protocol' with protocol http, tcp or udp (e.g. '8888/http')",
        ),
        (body(ports="8888/http"), "$.ports: must be an array"),
        (body(env={"A": 1}), "$.env.A: must be a string"),
        (body(env={"MY VAR": 1}), '$.env["MY VAR"]: must be a string'),
        (body(env=["A=1"]), "$.env: must be an object"),
        (body(cloud="PRIVATE"), "$.cloud: must be 'SECURE' or 'COMMUNITY'"),
        (body(startSsh="yes"), "$.startSsh: must be a boolean"),
        (body(globalNetworking=1), "$.globalNetworking: must be a boolean"),
        (body(dataCenterIds="US-TX-3"), "$.dataCenterIds: must be an array"),
        (
            body(gpu={**GPU, "allowedCudaVersions": ["12"]}),
            "$.gpu.allowedCudaVersions[0]: must be a CUDA version 'major.minor' (e.g. '12.8')",
        ),
        (
            body(gpu={**GPU, "minCudaVersion": "12.x"}),
            "$.gpu.minCudaVersion: must be a CUDA version 'major' or 'major.minor'"
            " (e.g. '12' or '12.4')",
        ),
        (
            body(minCudaVersion="v12"),
            "$.minCudaVersion: must be a CUDA version 'major' or 'major.minor'"
            " (e.g. '12' or '12.4')",
        ),
        (
            body(
                mounts={
                    "network": [{"volumeId": "a", "path": "/a"}, {"volumeId": "b", "path": "/b"}]
                }
            ),
            "$.mounts.network: must have at most 1 item",
        ),
        (body(mounts={"persistent": {"path": "/w"}}), "$.mounts.persistent.size: is required"),
        (body(mounts={"persistent": {"size": 20}}), "$.mounts.persistent.path: is required"),
        (
            body(mounts={"persistent": {"size": 9, "path": "/w"}}),
            "$.mounts.persistent.size: must be >= 10",
        ),
        (body(mounts={"network": [{"path": "/d"}]}), "$.mounts.network[0].volumeId: is required"),
        (body(mounts={"network": [{"volumeId": "v"}]}), "$.mounts.network[0].path: is required"),
        (
            body(mounts={"network": {"volumeId": "v", "path": "/d"}}),
            "$.mounts.network: must be an array",
        ),
        (
            body(mounts={"persistent": None}),
            "$.mounts.persistent: must not be null; omit the property instead",
        ),
        (body(disk=None) | {"disk": None}, "$.disk: must not be null; omit the property instead"),
        (body(name=None), "$.name: is required"),
        (body(start_ssh=True), "$: additional property 'start_ssh' not allowed"),
    ],
)
def test_schema_violations_are_422_with_the_line(data, line):
    error = rejected(data)
    assert error.status == 422
    assert error.title == "Unprocessable Entity"
    assert line in error.errors, error.errors
    assert error.detail.startswith(error.errors[0])


def test_all_schema_failures_are_listed_together():
    data = body(disk=0, ports=["1/ftp"], bogus=1, extra=2, gpu={"id": 1, "count": 0})
    error = rejected(data)
    assert error.status == 422
    assert sorted(error.errors) == sorted(
        [
            "$.disk: must be >= 1",
            "$.ports[0]: must be 'port/protocol' with protocol http, tcp or udp (e.g. '8888/http')",
            "$.gpu.id: must be a string",
            "$.gpu.count: must be >= 1",
            "$: additional properties 'bogus', 'extra' not allowed",
        ]
    )
    assert error.detail.endswith("(and 4 more)")


def test_schema_errors_come_before_rules():
    """A body with both a schema failure and a rule violation answers 422 first."""
    error = rejected(body(cpu=CPU, disk=0))
    assert error.status == 422 and error.errors == ["$.disk: must be >= 1"]


def test_error_lines_never_echo_values():
    secret = "hunter2-very-secret"
    error = rejected(body(env={"JUPYTER_PASSWORD": 7, "TOKEN": secret, "X": [secret]}))
    assert secret not in str(error) and secret not in json.dumps(error.to_problem().model_dump())


# --- 400: not a JSON object ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        ("[1, 2]", "$: request body must be a JSON object, not an array"),
        ('"pod"', "$: request body must be a JSON object, not a string"),
        ("42", "$: request body must be a JSON object, not a number"),
        ("null", "$: request body must be a JSON object, not null"),
        ("true", "$: request body must be a JSON object, not a boolean"),
        ("", "$: request body is empty; send a JSON object"),
        (
            '{"name": "x",}',
            "$: request body is not valid JSON: Expecting property name enclosed in double"
            " quotes at line 1 column 14",
        ),
        (b"\xff\xfe", "$: request body is not valid UTF-8"),
        ([1], "$: request body must be a JSON object, not an array"),
    ],
)
def test_non_object_bodies_are_400(raw, line):
    error = rejected(raw)
    assert (error.status, error.errors) == (400, [line])


def test_problem_body_from_a_rejection():
    problem = rejected(body(cpu=CPU)).to_problem()
    assert to_wire(problem) == {
        "title": "Bad Request",
        "status": 400,
        "detail": "$: gpu and cpu are mutually exclusive; send exactly one of them",
        "errors": ["$: gpu and cpu are mutually exclusive; send exactly one of them"],
    }
