"""The magics in a real IPython shell against the emulator process: every subcommand and
flag, the returned objects, ``-o``, ``{var}`` expansion."""

from __future__ import annotations

import re
from typing import Any

import pytest
from nbhelpers import magics_of, ranked, run_cell, wait_until

RTX4090 = "NVIDIA GeForce RTX 4090"


def create(ip: Any, flags: str, name: str = "nbtest_pod") -> Any:
    """Run ``name = %pod create FLAGS`` and return the pod it assigned."""
    run = run_cell(ip, f"{name} = %pod create {flags}")
    assert run.success, run.text
    return ip.user_ns[name]


@pytest.fixture(autouse=True)
def no_panels_left(ip: Any) -> Any:
    yield
    magics_of(ip).session.refresher.stop()


def test_create_returns_the_pod_and_shows_its_panel(ip: Any, client: Any) -> None:
    run = run_cell(
        ip,
        f'nbtest_pod = %pod create --gpu "{RTX4090}" --image runpod/pytorch '
        "--ports 8888/http,22/tcp --ssh",
    )
    assert run.success, run.text
    pod = ip.user_ns["nbtest_pod"]
    assert pod.status == "PROVISIONING"
    assert pod.gpu.id == RTX4090
    assert client.pods.get(pod.id).image == "runpod/pytorch"
    assert len(run.outputs) == 1, "the panel is displayed once"
    bundle = run.outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert pod.id in bundle["text/plain"] and pod.id in bundle["text/html"]


def test_create_as_last_expression_displays_once_and_returns_the_pod(ip: Any) -> None:
    run = run_cell(ip, f'%pod create --gpu "{RTX4090}" --image runpod/pytorch')
    assert run.success, run.text
    assert len(run.outputs) == 1
    pod = ip.user_ns["_"]
    assert pod.status == "PROVISIONING"


def test_showing_the_pod_in_a_later_cell_shows_a_live_panel(ip: Any) -> None:
    pod = create(ip, f'--gpu "{RTX4090}" --image runpod/pytorch')
    run = run_cell(ip, "nbtest_pod")
    assert len(run.outputs) == 1
    assert pod.id in run.outputs[0].data["text/html"]


def test_default_name_is_readable(ip: Any) -> None:
    pod = create(ip, f'--gpu "{RTX4090}" --image runpod/pytorch')
    assert re.fullmatch(r"[a-z]+-[a-z]+-\d{3}", pod.name), pod.name


def test_every_container_flag_reaches_the_pod(ip: Any, client: Any) -> None:
    pod = create(
        ip,
        f'--gpu "{RTX4090}:2" --image runpod/pytorch --name nb-flags --disk 33 '
        "--ports 8888/http,22/tcp --env A=1 --env B=two --args 'python -m http.server' "
        "--cloud community --dc US-CA-2 --persistent 20:/workspace",
    )
    pod = client.pods.get(pod.id)
    assert pod.name == "nb-flags"
    assert pod.gpu.count == 2
    assert pod.disk == 33
    assert pod.ports == ["8888/http", "22/tcp"]
    assert pod.env["A"] == "1" and pod.env["B"] == "two"
    assert pod.args == "python -m http.server"
    assert pod.cloud == "COMMUNITY"
    assert pod.data_center_id == "US-CA-2"
    assert pod.mounts.persistent.size == 20 and pod.mounts.persistent.path == "/workspace"


def test_dc_is_repeatable_and_a_comma_list(ip: Any, client: Any) -> None:
    pod = create(ip, f'--gpu "{RTX4090}" --image x --dc EU-SE-1,EU-RO-1 --dc US-KS-2')
    assert client.pods.get(pod.id).data_center_id in {"EU-SE-1", "EU-RO-1", "US-KS-2"}


def test_cuda_flags_constrain_the_host(ip: Any, client: Any) -> None:
    pod = create(ip, f'--gpu "{RTX4090}" --image x --cuda 12.8,12.6')
    wait_until(lambda: client.pods.get(pod.id).cuda_version)
    assert client.pods.get(pod.id).cuda_version in {"12.8", "12.6"}
    pod = create(ip, f'--gpu "{RTX4090}" --image x --min-cuda 12.8')
    version = wait_until(lambda: client.pods.get(pod.id).cuda_version)
    assert tuple(map(int, version.split("."))) >= (12, 8)


def test_cpu_pod(ip: Any) -> None:
    pod = create(ip, "--cpu cpu3c:4 --image ubuntu")
    assert pod.cpu.id == "cpu3c" and pod.cpu.vcpu_count == 4
    assert getattr(pod, "gpu", None) is None


def test_global_networking(ip: Any, client: Any) -> None:
    pod = create(ip, f'--gpu "{RTX4090}" --image x --dc US-TX-3 --global-networking')
    pod = client.pods.get(pod.id)
    assert pod.global_networking.enabled is True
    assert pod.global_networking.internal_dns.startswith(pod.id)


def test_ssh_and_jupyter_inject_env(ip: Any, client: Any) -> None:
    client.account.ssh_keys.put(["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITEST nb@test"])
    pod = create(ip, f'--gpu "{RTX4090}" --image x --ports 8888/http,22/tcp --ssh --jupyter')
    env = client.pods.get(pod.id).env
    assert "ssh-ed25519" in env["PUBLIC_KEY"]
    assert env["JUPYTER_PASSWORD"]


def test_template_fills_the_pod(ip: Any, client: Any) -> None:
    pod = create(ip, f'--gpu "{RTX4090}" --template runpod-torch-v280')
    pod = client.pods.get(pod.id)
    assert pod.image.startswith("runpod/pytorch")
    assert pod.template is None


def test_registry_flag_is_sent(ip: Any, client: Any) -> None:
    registry = client.registries.create(name="nb-reg", username="me", password="pw-secret")
    ip.user_ns["nbtest_reg"] = registry.id
    pod = create(ip, f'--gpu "{RTX4090}" --image private/x --registry {{nbtest_reg}}')
    assert client.pods.get(pod.id).registry == registry.id


def test_volume_flag_is_sent_as_a_network_mount(ip: Any, client: Any) -> None:
    where = client.pods.create(name="probe", image="x", gpu=RTX4090).data_center_id
    volume = client.network_volumes.create(name="nb-vol", size=10, data_center=where)
    ip.user_ns["nbtest_vol"] = volume.id
    pod = create(ip, f'--gpu "{RTX4090}" --image x --volume {{nbtest_vol}}:/data')
    mounts = client.pods.get(pod.id).mounts
    assert mounts.network[0].volume_id == volume.id and mounts.network[0].path == "/data"
    assert mounts.persistent is None


def test_output_option_stores_the_result(ip: Any) -> None:
    run = run_cell(ip, f'%pod create --gpu "{RTX4090}" --image x -o nbtest_stored')
    assert run.success, run.text
    assert ip.user_ns["nbtest_stored"].status == "PROVISIONING"


def test_variables_are_expanded(ip: Any) -> None:
    ip.user_ns.update(nbtest_gpu=RTX4090, nbtest_image="runpod/pytorch", nbtest_disk=12)
    pod = create(ip, '--gpu "{nbtest_gpu}" --image {nbtest_image} --disk {nbtest_disk}')
    assert pod.image == "runpod/pytorch" and pod.disk == 12
    run = run_cell(ip, "nbtest_shown = %pod show {nbtest_pod.id}")
    assert run.success, run.text
    assert ip.user_ns["nbtest_shown"].id == pod.id


def test_list_show_and_the_lifecycle_actions(ip: Any, client: Any) -> None:
    pod = create(ip, f'--gpu "{RTX4090}" --image x --ports 22/tcp')
    run = run_cell(ip, "nbtest_list = %pod list")
    assert run.success, run.text
    assert pod.id in [p.id for p in ip.user_ns["nbtest_list"]]
    assert pod.id in run.outputs[0].data["text/plain"]

    client.pods.wait_for(pod.id, "RUNNING", timeout=30, poll_interval=0.05)
    run = run_cell(ip, "nbtest_stopped = %pod stop {nbtest_pod.id}")
    assert run.success, run.text
    assert ip.user_ns["nbtest_stopped"].status == "EXITED"

    run = run_cell(ip, "nbtest_started = %pod start {nbtest_pod.id}")
    assert run.success, run.text
    assert ip.user_ns["nbtest_started"].status in {"STARTING", "PROVISIONING", "RUNNING"}
    client.pods.wait_for(pod.id, "RUNNING", timeout=30, poll_interval=0.05)

    run = run_cell(ip, "nbtest_restarted = %pod restart {nbtest_pod.id}")
    assert run.success, run.text
    assert ip.user_ns["nbtest_restarted"].id == pod.id

    run = run_cell(ip, "nbtest_show = %pod show {nbtest_pod.id}")
    assert run.success and ip.user_ns["nbtest_show"].id == pod.id

    run = run_cell(ip, "nbtest_gone = %pod terminate {nbtest_pod.id}")
    assert run.success, run.text
    assert ip.user_ns["nbtest_gone"].status == "TERMINATED"
    assert pod.id not in [p.id for p in client.pods.list(include_cluster_pods=True)]


def test_ssh_prints_the_ready_commands(ip: Any, client: Any) -> None:
    client.account.ssh_keys.put(["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAISSHCMD nb@test"])
    pod = create(ip, f'--gpu "{RTX4090}" --image x --ports 22/tcp --ssh')
    client.pods.wait_for(pod.id, "RUNNING", timeout=30, poll_interval=0.05)
    run = run_cell(ip, "%pod ssh {nbtest_pod.id}")
    assert run.success, run.text
    fresh = client.pods.get(pod.id)
    text = run.outputs[0].data["text/plain"]
    assert fresh.ssh.proxy.command in text
    assert fresh.ssh.direct.command in text
    commands = ip.user_ns["_"]
    assert commands.proxy == fresh.ssh.proxy.command
    assert "note" not in text


def test_ssh_explains_what_is_missing(ip: Any) -> None:
    create(ip, f'--gpu "{RTX4090}" --image x')
    run = run_cell(ip, "%pod ssh {nbtest_pod.id}")
    assert run.success, run.text
    text = run.outputs[0].data["text/plain"]
    assert "--ssh" in text and "22/tcp" in text


def test_list_all_includes_cluster_members_and_cluster_show(ip: Any, client: Any) -> None:
    cluster = client.clusters.create(
        name="nb-cluster",
        type="SLURM",
        compute={"gpuTypeId": "NVIDIA H100 80GB HBM3", "gpuCountPerPod": 1, "podCount": 2},
        image="runpod/pytorch",
        ports=["22/tcp"],
    )
    members = [p.id for p in client.clusters.pods(cluster.id)]
    run = run_cell(ip, "nbtest_plain = %pod list")
    assert not set(members) & {p.id for p in ip.user_ns["nbtest_plain"]}
    run = run_cell(ip, "nbtest_all = %pod list --all")
    assert set(members) <= {p.id for p in ip.user_ns["nbtest_all"]}

    ip.user_ns["nbtest_cid"] = cluster.id
    wait_until(lambda: ranked(client, cluster.id))
    run = run_cell(ip, "nbtest_cluster = %cluster show {nbtest_cid}")
    assert run.success, run.text
    assert ip.user_ns["nbtest_cluster"].id == cluster.id
    html = run.outputs[0].data["text/html"]
    assert 'data-rank="0"' in html and "SLURM_CONTROLLER" in html


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("gpus", RTX4090), ("cpus", "cpu3c"), ("datacenters", "US-TX-3")],
)
def test_catalog(ip: Any, kind: str, expected: str) -> None:
    run = run_cell(ip, f"nbtest_catalog = %catalog {kind}")
    assert run.success, run.text
    rows = ip.user_ns["nbtest_catalog"]
    assert expected in [row.id for row in rows]
    assert expected in run.outputs[0].data["text/html"]
    assert expected in run.outputs[0].data["text/plain"]


def test_gpu_catalog_shows_prices_and_cuda_versions(ip: Any, client: Any) -> None:
    run = run_cell(ip, "%catalog gpus")
    assert run.success, run.text
    rtx = next(g for g in client.catalog.gpus(availability=True) if g.id == RTX4090)
    line = next(row for row in run.outputs[0].data["text/plain"].splitlines() if RTX4090 in row)
    assert f"${rtx.price.secure:.2f}" in line
    assert all(v.version in line for v in rtx.cuda_versions if v.available)


def test_show_panels_off_displays_nothing_but_returns(ip: Any) -> None:
    run_cell(ip, "%config PodMagics.show_panels = False")
    run = run_cell(ip, f'nbtest_quiet = %pod create --gpu "{RTX4090}" --image x')
    assert run.success and run.outputs == []
    assert ip.user_ns["nbtest_quiet"].status == "PROVISIONING"


def test_show_panels_off_shows_a_static_form_as_last_expression(ip: Any) -> None:
    run_cell(ip, "%config PodMagics.show_panels = False")
    run = run_cell(ip, f'%pod create --gpu "{RTX4090}" --image x --env HF_TOKEN=hf_hidden')
    assert run.success, run.text
    assert len(run.outputs) == 1
    bundle = run.outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    assert "PROVISIONING" in bundle["text/plain"] and "hf_hidden" not in bundle["text/html"]
    assert magics_of(ip).session.refresher.panels == []


def test_terminate_shows_the_pod_without_its_old_ssh_commands(ip: Any, client: Any) -> None:
    pod = create(ip, f'--gpu "{RTX4090}" --image x --ports 22/tcp')
    running = client.pods.wait_for(pod.id, "RUNNING", timeout=30, poll_interval=0.05)
    assert running.ssh.direct is not None
    run = run_cell(ip, "nbtest_gone = %pod terminate {nbtest_pod.id}")
    assert run.success, run.text
    gone = ip.user_ns["nbtest_gone"]
    assert gone.status == "TERMINATED" and gone.actions == [] and gone.cost == 0.0
    assert gone.ssh.proxy is None and gone.ssh.direct is None
    bundle = run.outputs[0].data
    for form in (bundle["text/plain"], bundle["text/html"]):
        assert "TERMINATED" in form
        assert running.ssh.direct.command not in form and running.ssh.proxy.command not in form


def test_a_magic_on_the_last_line_prints_no_empty_out_prompt(ip: Any) -> None:
    """Terminal IPython printed ``Out[N]:`` with nothing after it for a shown result."""
    pod = create(ip, f'--gpu "{RTX4090}" --image x')
    for line in ("%pod show {nbtest_pod.id}", "%catalog cpus", "%pod list"):
        run = run_cell(ip, line)
        assert run.success, run.text
        assert len(run.outputs) == 1, line
        assert "Out[" not in run.stdout, (line, run.stdout)
    run = run_cell(ip, "%pod show {nbtest_pod.id}")
    assert ip.user_ns["_"].id == pod.id, "the result is still the cell's value"
    run = run_cell(ip, "nbtest_pod.id")
    assert "Out[" in run.stdout and pod.id in run.stdout, "other results keep their prompt"
