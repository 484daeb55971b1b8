"""``client.pods`` against a real emulator process: every method, typed results, the lifecycle."""

from __future__ import annotations

import pytest

from podbook import Client
from podbook.api.pods import CreatePodRequest, Pod
from podbook.client import RetryPolicy
from podbook.errors import Conflict, InvalidRequest, NotFound, WaitFailed, WaitTimeout

GPU = "NVIDIA GeForce RTX 4090"
FAST_POLL = {"poll_interval": 0.05, "timeout": 15}


def gpu_pod(client: Client, **extra: object) -> Pod:
    fields = {"name": "trainer", "image": "runpod/pytorch", "gpu": GPU, **extra}
    return client.pods.create(**fields)


def test_create_answers_a_typed_provisioning_pod(client: Client) -> None:
    pod = gpu_pod(client, ports=["8888/http", "22/tcp"], env={"MY_VAR": "1"}, start_ssh=True)
    assert isinstance(pod, Pod)
    assert pod.status == "PROVISIONING"
    assert sorted(pod.actions) == ["start", "terminate"]
    assert pod.started_at is None
    assert pod.gpu is not None and pod.gpu.id == GPU and pod.gpu.count == 1
    assert pod.ports == ["8888/http", "22/tcp"]
    assert pod.env["MY_VAR"] == "1"
    client.pods.terminate(pod)


def test_create_from_a_request_model_or_a_mapping(client: Client) -> None:
    request = CreatePodRequest(name="from-model", image="alpine", gpu={"id": GPU, "count": 2})
    from_model = client.pods.create(request)
    assert from_model.gpu is not None and from_model.gpu.count == 2
    cpu = client.pods.create(
        {"name": "cpu-box", "image": "alpine", "cpu": {"id": "cpu3c", "vcpu_count": 4}}
    )
    assert cpu.gpu is None and cpu.cpu is not None and cpu.cpu.vcpu_count == 4
    assert cpu.cpu.memory >= 1
    for pod in (from_model, cpu):
        client.pods.terminate(pod)


def test_wait_for_reports_each_status_until_running(paced_emulator) -> None:
    client = Client(api_key=paced_emulator.api_key, url=paced_emulator.url)
    pod = gpu_pod(client, ports=["22/tcp"], start_ssh=True)
    seen: list[str] = []
    running = client.pods.wait_for(pod, on_change=lambda p: seen.append(p.status), **FAST_POLL)
    assert seen == ["PROVISIONING", "STARTING", "RUNNING"]
    assert running.status == "RUNNING"
    assert running.runtime is not None and running.started_at is not None
    assert running.ssh.proxy is not None and running.ssh.direct is not None
    assert sorted(running.actions) == ["restart", "stop", "terminate"]
    client.pods.terminate(running)
    client.close()


def test_get_and_list(client: Client) -> None:
    pod = gpu_pod(client, name="listed")
    fetched = client.pods.get(pod.id)
    assert isinstance(fetched, Pod) and fetched.id == pod.id and fetched.name == "listed"
    assert client.pods.get(pod).id == pod.id  # a Pod object works as well as its id
    listed = client.pods.list()
    assert all(isinstance(p, Pod) for p in listed)
    assert pod.id in {p.id for p in listed}
    client.pods.terminate(pod)


def test_update_is_a_merge_patch(client: Client) -> None:
    pod = gpu_pod(client, env={"A": "1"}, ports=["8888/http"])
    updated = client.pods.update(pod, name="renamed")
    assert updated.name == "renamed"
    assert updated.image == pod.image and updated.ports == ["8888/http"]
    assert updated.env == {"A": "1"}
    again = client.pods.update(pod.id, {"env": {"B": "2"}})
    assert again.name == "renamed" and again.env == {"B": "2"}
    client.pods.terminate(pod)


def test_stop_start_restart_terminate(client: Client) -> None:
    pod = client.pods.wait_for(gpu_pod(client, ports=["22/tcp"]), **FAST_POLL)
    stopped = client.pods.stop(pod)
    assert stopped.status == "EXITED"
    assert stopped.cost == 0.0 and stopped.runtime is None and stopped.ssh.direct is None
    with pytest.raises(Conflict) as info:
        client.pods.stop(pod)
    assert info.value.status == 409 and "\n" not in str(info.value)

    started = client.pods.start(pod)
    assert started.status in {"STARTING", "RUNNING"}
    running = client.pods.wait_for(pod, **FAST_POLL)
    restarted = client.pods.restart(running)
    assert restarted.status in {"STARTING", "RUNNING"}
    assert client.pods.wait_for(pod, **FAST_POLL).status == "RUNNING"

    assert client.pods.terminate(pod) is None
    with pytest.raises(NotFound):
        client.pods.get(pod.id)
    assert pod.id not in {p.id for p in client.pods.list()}
    gone = client.pods.wait_for(pod, "TERMINATED", **FAST_POLL)
    assert gone.status == "TERMINATED"


def test_wait_for_times_out_naming_the_last_status(client: Client) -> None:
    pod = client.pods.wait_for(gpu_pod(client), **FAST_POLL)
    with pytest.raises(WaitTimeout) as info:
        client.pods.wait_for(pod, "EXITED", timeout=0.3, poll_interval=0.05)
    assert info.value.last_status == "RUNNING"
    assert str(info.value) == (
        f"pod {pod.id} did not reach EXITED within 0.3 s (last status RUNNING); "
        "wait longer with timeout=..."
    )
    client.pods.terminate(pod)


def test_wait_for_stops_early_when_the_pod_is_gone(client: Client) -> None:
    pod = gpu_pod(client)
    client.pods.terminate(pod)
    with pytest.raises(WaitFailed) as info:
        client.pods.wait_for(pod, "RUNNING", **FAST_POLL)
    assert info.value.landed == "TERMINATED"
    assert str(info.value).startswith(f"pod {pod.id} is TERMINATED and will not reach RUNNING")


def test_wait_for_unknown_pod_is_not_found(client: Client) -> None:
    with pytest.raises(NotFound):
        client.pods.wait_for("no-such-pod", **FAST_POLL)


def test_bad_requests_are_refused_before_sending(emulator: object) -> None:
    # Pointed at a port nobody listens on: only a refusal *before* sending can answer.
    offline = Client(api_key="k", url="http://127.0.0.1:9", retry=RetryPolicy(max_attempts=1))
    with offline as c:
        with pytest.raises(InvalidRequest) as both:
            c.pods.create(name="x", image="alpine", gpu=GPU, cpu={"id": "cpu3c", "vcpuCount": 4})
        assert both.value.status == 400
        with pytest.raises(InvalidRequest) as schema:
            c.pods.create(name="x", image="alpine", gpu={"id": GPU, "count": 0}, ports=["8888"])
        assert schema.value.status == 422
        assert any(line.startswith("$.gpu.count:") for line in schema.value.errors)
        assert any(line.startswith("$.ports[0]:") for line in schema.value.errors)
        with pytest.raises(InvalidRequest) as unknown:
            c.pods.create(name="x", image="alpine", gpu=GPU, bogus=1)
        assert any("bogus" in line for line in unknown.value.errors)
        assert str(unknown.value).startswith("Invalid request (not sent): ")
        assert isinstance(unknown.value, ValueError)
        with pytest.raises(InvalidRequest, match="nothing to update"):
            c.pods.update("some-pod")


def test_patch_mount_rules(client: Client) -> None:
    pod = gpu_pod(client)  # created without a mount
    patch = {"network": [{"volume_id": "vol1", "path": "/data"}]}
    with pytest.raises(InvalidRequest) as local:
        client.pods.update(pod, mounts=patch)  # the Pod object lets the client check locally
    assert local.value.status == 400
    assert local.value.errors[0].startswith("$.mounts.network:")
    with pytest.raises(InvalidRequest) as cleared:
        client.pods.update(pod.id, mounts={"network": []})
    assert cleared.value.status == 400
    client.pods.terminate(pod)


def test_include_cluster_pods(client: Client) -> None:
    cluster = client.clusters.create(
        name="pair",
        type="TRAINING",
        image="alpine",
        compute={"gpu_type_id": GPU, "gpu_count_per_pod": 1, "pod_count": 2},
    )
    members = {p.id for p in client.clusters.pods(cluster)}
    assert len(members) == 2
    assert not members & {p.id for p in client.pods.list()}
    assert members <= {p.id for p in client.pods.list(include_cluster_pods=True)}
    with pytest.raises(Conflict):
        client.pods.stop(next(iter(members)))
    client.clusters.delete(cluster)
