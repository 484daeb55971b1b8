"""``templateId`` on serverless endpoint create and update, through the client against a real
emulator: the template's container settings are applied once (body wins, ``env`` merged per
key), CUDA constraints seeded on a GPU create only, unknown → 404, a pod template → 422."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from podbook import Client
from podbook.errors import NotFound, ValidationFailed


def _unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def _wire(endpoint: Any) -> dict[str, Any]:
    return endpoint.model_dump(by_alias=True)


@pytest.fixture
def serverless_template(client: Client) -> Any:
    """An own serverless template with every container setting filled."""
    template = client.templates.create(
        name=_unique("worker-tpl"),
        image="me/worker-from-template:3",
        args="--serve",
        disk=44,
        ports=["8000/http"],
        env={"FROM_TEMPLATE": "yes", "SHARED": "template"},
        allowed_cuda_versions=["12.8"],
        serverless=True,
    )
    yield template
    client.templates.delete(template)


def test_create_resolves_the_template_and_body_fields_win(
    client: Client, serverless_template: Any
) -> None:
    name = _unique("from-tpl")
    created = client.endpoints.create(
        name=name,
        template_id=serverless_template.id,
        disk=60,
        env={"SHARED": "body", "OWN": "1"},
    )
    wire = _wire(created)
    assert wire["image"] == "me/worker-from-template:3"
    assert (created.args, created.disk, created.ports) == ("--serve", 60, ["8000/http"])
    assert created.registry is None
    assert wire["env"] == {"FROM_TEMPLATE": "yes", "SHARED": "body", "OWN": "1"}
    assert "templateId" not in wire  # settings are copied, no link is kept
    assert _wire(client.endpoints.get(name)) == wire

    # Later template edits do not reach the endpoint.
    client.templates.update(serverless_template, image="me/worker-from-template:4")
    assert client.endpoints.get(name).image == "me/worker-from-template:3"
    client.endpoints.delete(name)


def test_template_cuda_seeds_a_gpu_create_only_when_the_body_names_none(
    client: Client, serverless_template: Any
) -> None:
    seeded = client.endpoints.create(
        name=_unique("cuda"), template_id=serverless_template.id, gpu={"pools": ["ADA_24"]}
    )
    assert seeded.gpu["pools"] == ["ADA_24"] and seeded.gpu["allowedCudaVersions"] == ["12.8"]
    floor = client.endpoints.create(
        name=_unique("floor"),
        template_id=serverless_template.id,
        gpu={"pools": ["ADA_24"], "minCudaVersion": "12.4"},
    )
    assert floor.gpu["minCudaVersion"] == "12.4"
    assert not floor.gpu.get("allowedCudaVersions")  # a floor is not joined by the template's set
    no_gpu = client.endpoints.create(name=_unique("nogpu"), template_id=serverless_template.id)
    assert no_gpu.gpu is None
    for endpoint in (seeded, floor, no_gpu):
        client.endpoints.delete(endpoint)


def test_update_applies_a_template_once(client: Client, serverless_template: Any) -> None:
    name = _unique("upd-tpl")
    client.endpoints.create(name=name, image="me/plain:1", env={"OLD": "x", "SHARED": "old"})
    updated = client.endpoints.update(
        name, template_id=serverless_template.id, env={"SHARED": "patch"}
    )
    wire = _wire(updated)
    assert wire["image"] == "me/worker-from-template:3" and wire["disk"] == 44
    # env: template + body merged (body wins), replacing the endpoint's env (PATCH semantics).
    assert wire["env"] == {"FROM_TEMPLATE": "yes", "SHARED": "patch"}
    assert "templateId" not in wire
    assert updated.version == 2  # the container configuration changed: a release
    client.endpoints.delete(name)


def test_the_account_serverless_template_and_public_pod_templates(client: Client) -> None:
    # tpl-serverless is account A's (tests/conftest.py).
    created = client.endpoints.create(name=_unique("acct"), template_id="tpl-serverless")
    assert created.image == "me/worker:1"
    client.endpoints.delete(created)
    with pytest.raises(ValidationFailed, match="pod template") as err:
        client.endpoints.create(name=_unique("pod-tpl"), template_id="tpl-own")
    assert "\n" not in err.value.detail
    public_pod_template = client.catalog.templates()[0]
    with pytest.raises(ValidationFailed, match="serverless template"):
        client.endpoints.create(name=_unique("pub"), template_id=public_pod_template.id)


def test_unknown_or_other_accounts_template_is_not_found(
    client: Client, emulator: Any, serverless_template: Any
) -> None:
    with pytest.raises(NotFound, match="no-such-template"):
        client.endpoints.create(name=_unique("unknown"), template_id="no-such-template")
    other = Client(api_key=emulator.other_key, rest_url=emulator.url, queue_url=emulator.url)
    with other, pytest.raises(NotFound):
        other.endpoints.create(name=_unique("other"), template_id=serverless_template.id)
    name = _unique("upd-unknown")
    client.endpoints.create(name=name)
    with pytest.raises(NotFound):
        client.endpoints.update(name, template_id="no-such-template")
    assert client.endpoints.get(name).version == 1  # nothing changed
    client.endpoints.delete(name)
