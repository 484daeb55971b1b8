"""ECR delegations (``client.registries.*_delegation``) against a real emulator: create from an
ARN, list, revoke, per-account, strict bodies, a bad ARN refused in one line, persistence."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from podbook import AsyncClient, Client
from podbook.api.delegations import EcrDelegation
from podbook.errors import BadRequest, InvalidRequest, NotFound, ValidationFailed

ARN = "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment"


def test_create_list_revoke(client: Client) -> None:
    made = client.registries.create_delegation(resource=ARN, name="deploy")
    assert isinstance(made, EcrDelegation)
    assert made.id.startswith("deleg_") and made.name == "deploy"
    assert (made.aws_user, made.aws_region) == ("418399314813", "us-east-2")
    assert (made.repository, made.tag) == ("runpod/deployment", "latest")
    assert made.docker_registry_uri == "418399314813.dkr.ecr.us-east-2.amazonaws.com"
    assert made.delegator_user_id and made.created_at
    tagged = client.registries.create_delegation({"resource": ARN + ":v2"})
    assert tagged.tag == "v2" and tagged.name is None
    listed = {d.id: d for d in client.registries.list_delegations()}
    assert listed[made.id] == made and tagged.id in listed

    client.registries.revoke_delegation(made)
    client.registries.revoke_delegation(tagged.id)
    remaining = {d.id for d in client.registries.list_delegations()}
    assert made.id not in remaining and tagged.id not in remaining
    with pytest.raises(NotFound, match=made.id):
        client.registries.revoke_delegation(made.id)
    # The credentials list is not confused by the delegations path.
    assert all(r.id != "delegations" for r in client.registries.list())


def test_delegations_are_per_account(client: Client, emulator: Any) -> None:
    made = client.registries.create_delegation(resource=ARN)
    other = Client(api_key=emulator.other_key, rest_url=emulator.url)
    with other:
        assert made.id not in {d.id for d in other.registries.list_delegations()}
        with pytest.raises(NotFound):
            other.registries.revoke_delegation(made.id)
    client.registries.revoke_delegation(made)


def test_bad_bodies_are_refused(client: Client, emulator: Any) -> None:
    with pytest.raises(InvalidRequest, match="not an ECR repository ARN") as err:
        client.registries.create_delegation(resource="docker.io/me/app")
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidRequest, match="bogus"):
        client.registries.create_delegation(resource=ARN, bogus=1)
    # The emulator applies the same rules to a raw body.
    with emulator.http() as http:
        raw = http.post("/v2/registries/delegations", json={"resource": "arn:aws:s3:::bucket"})
        assert raw.status_code == 400 and "ECR repository ARN" in raw.json()["detail"]
        raw = http.post("/v2/registries/delegations", json={"resource": ARN, "bogus": True})
        assert raw.status_code == 422
    with pytest.raises((BadRequest, ValidationFailed, InvalidRequest)):
        client.registries.create_delegation(resource="")


def test_delegations_survive_a_restart(start_emulator: Any) -> None:
    emu = start_emulator()
    with Client(api_key=emu.api_key, rest_url=emu.url) as c:
        made = c.registries.create_delegation(resource=ARN, name="kept")
    emu.restart()
    with Client(api_key=emu.api_key, rest_url=emu.url) as c:
        assert [d.id for d in c.registries.list_delegations()] == [made.id]


def test_the_async_face(emulator: Any) -> None:
    async def run() -> None:
        async with AsyncClient(api_key=emulator.api_key, rest_url=emulator.url) as c:
            made = await c.registries.create_delegation(resource=ARN)
            assert made.id in {d.id for d in await c.registries.list_delegations()}
            await c.registries.revoke_delegation(made)

    asyncio.run(run())
