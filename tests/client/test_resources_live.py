"""``catalog``, ``account.ssh_keys``, ``registries`` and ``clusters`` against the emulator."""

from __future__ import annotations

import time

import pytest

from podbook import Client
from podbook.api.account import Registry, SshKeys
from podbook.api.catalog import CpuType, DataCenter, GpuType, Template
from podbook.api.clusters import Cluster
from podbook.api.pods import Pod
from podbook.errors import InvalidRequest, NotFound

GPU = "NVIDIA GeForce RTX 4090"
KEY_LINE = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILXGDN/SclOozk1xsDztpmhGiKkkrfQB9SKoO8dSIQQZ me@lab"


def test_catalog_gpus_plain_and_with_availability(client: Client) -> None:
    gpus = client.catalog.gpus()
    assert gpus and all(isinstance(g, GpuType) for g in gpus)
    assert GPU in {g.id for g in gpus}
    assert all(g.availability is None for g in gpus)

    available = client.catalog.gpus(availability=True)
    rtx = next(g for g in available if g.id == GPU)
    assert rtx.availability is not None
    assert rtx.cuda_versions and all(v.version.count(".") == 1 for v in rtx.cuda_versions)

    filtered = client.catalog.gpus(min_cuda_version="12")
    assert all(g.availability is not None for g in filtered)


def test_catalog_cpus_datacenters_templates(client: Client) -> None:
    cpus = client.catalog.cpus()
    assert cpus and all(isinstance(c, CpuType) for c in cpus)
    centers = client.catalog.datacenters()
    assert centers and all(isinstance(d, DataCenter) for d in centers)
    global_only = client.catalog.datacenters(global_network=True)
    assert global_only and all(d.global_network for d in global_only)
    assert len(global_only) < len(centers)
    templates = client.catalog.templates()
    assert templates and all(isinstance(t, Template) for t in templates)


def test_ssh_keys_put_and_get(client: Client) -> None:
    stored = client.account.ssh_keys.put([KEY_LINE])
    assert isinstance(stored, SshKeys) and stored.keys == [KEY_LINE]
    assert client.account.ssh_keys.get().keys == [KEY_LINE]
    with pytest.raises(InvalidRequest) as info:
        client.account.ssh_keys.put(["not a key"])
    assert any(line.startswith("$.keys[0]") for line in info.value.errors)
    with pytest.raises(InvalidRequest, match="list of public key lines"):
        client.account.ssh_keys.put(KEY_LINE)  # a bare string, not a list
    assert client.account.ssh_keys.put([]).keys == []


def test_registries_v2_and_v1_delete(client: Client) -> None:
    created = client.registries.create(name="private", username="me", password="hunter2-secret")
    assert isinstance(created, Registry) and created.name == "private"
    assert "hunter2-secret" not in repr(created) + str(created.model_dump())
    assert client.registries.get(created.id).id == created.id
    assert created.id in {r.id for r in client.registries.list()}
    client.registries.delete(created)
    with pytest.raises(NotFound):
        client.registries.get(created.id)

    legacy = client.registries.create({"name": "legacy", "username": "u", "password": "p"})
    client.registries.delete_v1(legacy.id)
    assert legacy.id not in {r.id for r in client.registries.list()}


def test_clusters_lifecycle(client: Client) -> None:
    cluster = client.clusters.create(
        name="slurmy",
        type="SLURM",
        image="alpine",
        compute={"gpu_type_id": GPU, "gpu_count_per_pod": 1, "pod_count": 3},
    )
    assert isinstance(cluster, Cluster) and cluster.type == "SLURM"
    assert cluster.compute.pod_count == 3
    assert client.clusters.get(cluster.id).id == cluster.id
    assert cluster.id in {c.id for c in client.clusters.list()}

    members = client.clusters.pods(cluster)
    assert len(members) == 3 and all(isinstance(p, Pod) for p in members)
    deadline = time.monotonic() + 10
    while any(p.cluster is None or p.cluster.rank is None for p in members):
        assert time.monotonic() < deadline, "cluster members never got ranks"
        time.sleep(0.05)
        members = client.clusters.pods(cluster)
    roles = {p.cluster.rank: p.cluster.role for p in members if p.cluster}
    assert roles == {0: "SLURM_CONTROLLER", 1: "SLURM_COMPUTE", 2: "SLURM_COMPUTE"}

    renamed = client.clusters.update(cluster, name="renamed")
    assert renamed.name == "renamed"
    with pytest.raises(InvalidRequest):
        client.clusters.update(cluster, size=3)

    client.clusters.delete(cluster.id)
    with pytest.raises(NotFound):
        client.clusters.get(cluster.id)
