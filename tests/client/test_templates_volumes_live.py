"""``client.templates``, ``client.network_volumes`` and the registry delete rules, through the
client against a real emulator process (every rule of the slice)."""

from __future__ import annotations

import secrets

import pytest

from podbook import Client
from podbook.api.account import NetworkVolume
from podbook.api.catalog import Template
from podbook.errors import BadRequest, InvalidRequest, NotFound, ValidationFailed

GPU = "NVIDIA GeForce RTX 4090"


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def other_client(emulator: object) -> Client:
    return Client(api_key=emulator.other_key, rest_url=emulator.url, v1_url=emulator.url)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- templates


def test_template_crud(client: Client) -> None:
    name = unique("tpl")
    created = client.templates.create(
        name=name, image="me/app:1", ports=["8888/http"], env={"A": "1"}, disk=30
    )
    assert isinstance(created, Template)
    assert (created.name, created.image, created.disk) == (name, "me/app:1", 30)
    assert created.serverless is False and created.public is False
    assert created.start_ssh is True and created.start_jupyter is True  # the reference defaults
    assert created.category == "NVIDIA" and created.registry is None
    assert created.id in {t.id for t in client.templates.list()}
    assert client.templates.get(created.id) == created

    updated = client.templates.update(created, image="me/app:2", allowed_cuda_versions=["12.8"])
    assert updated.image == "me/app:2" and updated.allowed_cuda_versions == ["12.8"]
    assert updated.env == {"A": "1"} and updated.name == name  # untouched fields stay
    client.templates.delete(created)
    with pytest.raises(NotFound):
        client.templates.get(created.id)
    assert created.id not in {t.id for t in client.templates.list()}


def test_is_serverless_is_taken_for_serverless(client: Client) -> None:
    worker = client.templates.create({"name": unique("w"), "image": "w:1", "isServerless": True})
    assert worker.serverless is True
    also = client.templates.create(name=unique("w"), image="w:1", serverless=True)
    assert also.serverless is True
    flipped = client.templates.update(worker, is_serverless=False)
    assert flipped.serverless is False
    with pytest.raises(InvalidRequest, match="isServerless"):
        client.templates.create(name="x", image="y", serverless=True, is_serverless=False)


def test_a_serverless_template_cannot_create_a_pod(client: Client) -> None:
    worker = client.templates.create(name=unique("w"), image="w:1", serverless=True)
    with pytest.raises(ValidationFailed, match="serverless"):
        client.pods.create(name="p", template_id=worker.id, gpu=GPU)


def test_public_templates_are_readable_but_read_only(client: Client) -> None:
    public = client.catalog.templates()[0]
    assert client.templates.get(public.id).image == public.image
    assert public.id not in {t.id for t in client.templates.list()}  # only own ones listed
    with pytest.raises(NotFound, match="public catalog template"):
        client.templates.update(public.id, name="mine now")
    with pytest.raises(NotFound, match="public catalog template"):
        client.templates.delete(public.id)
    assert client.templates.get(public.id).name == public.name


def test_another_accounts_template_is_not_found(client: Client, emulator: object) -> None:
    mine = client.templates.create(name=unique("mine"), image="me:1")
    with other_client(emulator) as other:
        with pytest.raises(NotFound):
            other.templates.get(mine.id)
        with pytest.raises(NotFound):
            other.templates.update(mine.id, name="stolen")
        with pytest.raises(NotFound):
            other.templates.delete(mine.id)
        assert mine.id not in {t.id for t in other.templates.list()}


def test_template_requests_are_strict(client: Client) -> None:
    with pytest.raises(InvalidRequest):
        client.templates.create(name="no image")
    with pytest.raises(InvalidRequest):
        client.templates.create(name="x", image="y", allowed_cuda_versions=["twelve"])
    mine = client.templates.create(name=unique("t"), image="y")
    with pytest.raises(InvalidRequest):
        client.templates.update(mine)  # nothing to change
    with pytest.raises(NotFound, match="registry"):
        client.templates.create(name="x", image="y", registry="reg_nope")


def test_a_pod_created_from_an_own_template_keeps_its_copy(client: Client) -> None:
    tpl = client.templates.create(name=unique("t"), image="me/base:1", env={"K": "v"})
    pod = client.pods.create(name="from-own", template_id=tpl.id, gpu=GPU)
    client.templates.update(tpl, image="me/base:2")
    assert client.pods.get(pod).image == "me/base:1"
    assert pod.env["K"] == "v"
    client.pods.terminate(pod)


# ---------------------------------------------------------------------------- volumes


def test_volume_crud(client: Client) -> None:
    name = unique("data")
    volume = client.network_volumes.create(name=name, size=50, data_center="EU-RO-1")
    assert isinstance(volume, NetworkVolume)
    assert (volume.name, volume.size, volume.data_center) == (name, 50, "EU-RO-1")
    assert volume.type == "STANDARD"  # the data center's primary type
    assert volume.id in {v.id for v in client.network_volumes.list()}
    assert client.network_volumes.get(volume.id) == volume
    grown = client.network_volumes.update(volume, size=80, name=name + "-big")
    assert (grown.size, grown.name, grown.data_center) == (80, name + "-big", "EU-RO-1")
    client.network_volumes.delete(volume)
    with pytest.raises(NotFound):
        client.network_volumes.get(volume.id)


def test_volume_size_only_grows(client: Client) -> None:
    volume = client.network_volumes.create(name=unique("v"), size=100, data_center="EU-RO-1")
    with pytest.raises(BadRequest, match="cannot shrink") as info:
        client.network_volumes.update(volume, size=60)
    assert "at least 100" in str(info.value)
    assert client.network_volumes.update(volume, size=100).size == 100
    with pytest.raises(InvalidRequest):
        client.network_volumes.update(volume, size=5000)


def test_volume_data_center_and_type_are_immutable(client: Client) -> None:
    volume = client.network_volumes.create(name=unique("v"), size=20, data_center="EU-RO-1")
    with pytest.raises(InvalidRequest, match="fixed at creation"):
        client.network_volumes.update(volume, {"dataCenter": "US-TX-3"})
    with pytest.raises(InvalidRequest, match="fixed at creation"):
        client.network_volumes.update(volume, {"type": "HIGH_PERFORMANCE"})
    assert client.network_volumes.get(volume).data_center == "EU-RO-1"


def test_volume_type_and_data_center_are_checked(client: Client) -> None:
    from podbook.emulator import catalog_data

    hps = next(
        dc["id"]
        for dc in catalog_data.DATA_CENTERS
        if "HIGH_PERFORMANCE" in dc["networkVolumeTypes"]
    )
    plain = next(
        dc["id"] for dc in catalog_data.DATA_CENTERS if dc["networkVolumeTypes"] == ["STANDARD"]
    )
    fast = client.network_volumes.create(
        name=unique("fast"), size=10, data_center=hps, type="HIGH_PERFORMANCE"
    )
    assert fast.type == "HIGH_PERFORMANCE"
    with pytest.raises(BadRequest, match="offers no HIGH_PERFORMANCE"):
        client.network_volumes.create(name="x", size=10, data_center=plain, type="HIGH_PERFORMANCE")
    with pytest.raises(BadRequest, match="does not exist"):
        client.network_volumes.create(name="x", size=10, data_center="MOON-1")
    with pytest.raises(InvalidRequest):
        client.network_volumes.create(name="x", size=5, data_center=plain)


def test_a_pod_with_a_network_volume_is_placed_in_its_data_center(client: Client) -> None:
    from podbook.emulator.placement import choose_gpu_host

    where = choose_gpu_host(GPU, count=1, cloud="SECURE").data_center_id
    volume = client.network_volumes.create(name=unique("v"), size=20, data_center=where)
    mounts = {"network": [{"volume_id": volume.id, "path": "/data"}]}
    for _ in range(3):
        pod = client.pods.create(name="with-volume", image="a", gpu=GPU, mounts=mounts)
        assert pod.data_center_id == where
        assert pod.mounts.network[0].volume_id == volume.id
        client.pods.terminate(pod)


def test_a_pod_network_volume_must_exist_and_match_the_data_centers(
    client: Client, emulator: object
) -> None:
    from podbook.emulator import catalog_data
    from podbook.emulator.placement import choose_gpu_host

    where = choose_gpu_host(GPU, count=1, cloud="SECURE").data_center_id
    elsewhere = next(dc["id"] for dc in catalog_data.DATA_CENTERS if dc["id"] != where)
    volume = client.network_volumes.create(name=unique("v"), size=20, data_center=where)
    mounts = {"network": [{"volume_id": volume.id, "path": "/data"}]}
    with pytest.raises(BadRequest, match=f"is in {where}, not in the requested"):
        client.pods.create(name="p", image="a", gpu=GPU, mounts=mounts, data_center_ids=[elsewhere])
    missing = {"network": [{"volume_id": "nope123", "path": "/data"}]}
    with pytest.raises(BadRequest, match="does not exist in your account"):
        client.pods.create(name="p", image="a", gpu=GPU, mounts=missing)
    with other_client(emulator) as other:  # another account's volume is as good as none
        with pytest.raises(BadRequest, match="does not exist in your account"):
            other.pods.create(name="p", image="a", gpu=GPU, mounts=mounts)
        with pytest.raises(NotFound):
            other.network_volumes.get(volume.id)


# ---------------------------------------------------------------------------- registries


def test_registry_delete_is_refused_while_a_pod_uses_it(client: Client) -> None:
    registry = client.registries.create(name=unique("reg"), username="me", password="s3cret-pw")
    pod = client.pods.create(
        name="private-pod", image="me/private:1", gpu=GPU, registry=registry.id
    )
    with pytest.raises(BadRequest) as info:
        client.registries.delete(registry)
    assert pod.id in str(info.value) and "terminate that pod" in str(info.value)
    assert "s3cret-pw" not in str(info.value)
    with pytest.raises(BadRequest, match=pod.id):
        client.registries.delete_v1(registry)
    client.pods.terminate(pod)
    client.registries.delete(registry)
    assert registry.id not in {r.id for r in client.registries.list()}


def test_templates_lose_a_deleted_registry(client: Client) -> None:
    registry = client.registries.create(name=unique("reg"), username="me", password="pw")
    tpl = client.templates.create(name=unique("t"), image="me/private:1", registry=registry.id)
    assert tpl.registry == registry.id
    client.registries.delete(registry)
    assert client.templates.get(tpl).registry is None


def test_registry_credentials_are_write_only(client: Client) -> None:
    registry = client.registries.create(name=unique("reg"), username="who", password="pw-xyz")
    read = client.registries.get(registry)
    assert set(read.model_dump()) == {"id", "name"}
    assert "pw-xyz" not in repr(read) and "pw-xyz" not in repr(client.registries.list())


def test_templates_volumes_and_registry_rules_survive_a_restart(start_emulator: object) -> None:
    emu = start_emulator()  # type: ignore[operator]

    def connect() -> Client:
        return Client(api_key=emu.api_key, rest_url=emu.url, v1_url=emu.url)

    with connect() as client:
        tpl = client.templates.create(name="kept", image="me/kept:1", serverless=True)
        volume = client.network_volumes.create(name="kept", size=30, data_center="EU-RO-1")
        grown = client.network_volumes.update(volume, size=40)
        registry = client.registries.create(name="kept", username="u", password="p")
        pod = client.pods.create(name="uses", image="me/x:1", gpu=GPU, registry=registry.id)
    emu.restart()
    with connect() as client:
        assert client.templates.get(tpl.id) == tpl
        assert client.network_volumes.get(volume.id) == grown
        with pytest.raises(BadRequest, match="cannot shrink"):
            client.network_volumes.update(volume, size=30)
        with pytest.raises(BadRequest, match=pod.id):
            client.registries.delete(registry)


def test_the_async_client_has_the_same_faces(emulator: object) -> None:
    import asyncio

    from podbook import AsyncClient

    async def scenario() -> None:
        async with AsyncClient(api_key=emulator.api_key, url=emulator.url) as aclient:  # type: ignore[attr-defined]
            tpl = await aclient.templates.create(name=unique("async"), image="a:1")
            assert (await aclient.templates.update(tpl, disk=40)).disk == 40
            assert tpl.id in {t.id for t in await aclient.templates.list()}
            await aclient.templates.delete(tpl)
            volume = await aclient.network_volumes.create(
                name=unique("async"), size=10, data_center="EU-RO-1"
            )
            assert (await aclient.network_volumes.update(volume, size=20)).size == 20
            assert (await aclient.network_volumes.get(volume.id)).size == 20
            assert volume.id in {v.id for v in await aclient.network_volumes.list()}
            await aclient.network_volumes.delete(volume)
            with pytest.raises(NotFound):
                await aclient.templates.get(tpl.id)

    asyncio.run(scenario())
