"""Catalog routes: GPU types (with availability), CPU flavors, data centers, public templates."""

from __future__ import annotations

from emu_helpers import GPU, problem

from podbook.api.catalog import (
    CpuType,
    DataCenter,
    GpuType,
    ListCpuTypesResponse,
    ListDataCentersResponse,
    ListGpuTypesResponse,
    ListTemplatesResponse,
)


def test_gpus_and_availability(http):
    plain = http.get("/v2/catalog/gpus")
    assert plain.status_code == 200
    ListGpuTypesResponse.model_validate(plain.json())
    gpus = {g["id"]: g for g in plain.json()["gpus"]}
    assert GPU in gpus
    detailed = http.get("/v2/catalog/gpus", params={"include": "AVAILABILITY", "product": "POD"})
    assert detailed.status_code == 200
    gpu = {g["id"]: g for g in detailed.json()["gpus"]}[GPU]
    assert gpu["cudaVersions"] and all("version" in v for v in gpu["cudaVersions"])
    assert gpu["dataCenters"]
    one = http.get(f"/v2/catalog/gpus/{GPU}")
    assert one.status_code == 200
    GpuType.model_validate(one.json())
    problem(http.get("/v2/catalog/gpus/NVIDIA Imaginary 9000"), 404)


def test_cpus(http):
    response = http.get("/v2/catalog/cpus")
    assert response.status_code == 200
    ListCpuTypesResponse.model_validate(response.json())
    flavor = response.json()["cpus"][0]
    CpuType.model_validate(http.get(f"/v2/catalog/cpus/{flavor['id']}").json())
    problem(http.get("/v2/catalog/cpus/cpu-nope"), 404)


def test_datacenters_with_global_network(http):
    response = http.get("/v2/catalog/datacenters")
    assert response.status_code == 200
    ListDataCentersResponse.model_validate(response.json())
    centers = response.json()["dataCenters"]
    assert {True, False} <= {d["globalNetwork"] for d in centers} | {True, False}
    assert any(d["globalNetwork"] for d in centers)
    DataCenter.model_validate(http.get(f"/v2/catalog/datacenters/{centers[0]['id']}").json())
    problem(http.get("/v2/catalog/datacenters/XX-NOWHERE-1"), 404)
    only = http.get("/v2/catalog/datacenters", params={"globalNetwork": "true"}).json()[
        "dataCenters"
    ]
    assert only and all(d["globalNetwork"] for d in only)


def test_public_templates(http):
    response = http.get("/v2/catalog/templates")
    assert response.status_code == 200
    ListTemplatesResponse.model_validate(response.json())


def test_catalog_needs_a_key(emulator):
    import httpx

    assert httpx.get(f"{emulator.url}/v2/catalog/gpus").status_code == 401


def test_a_minimum_cuda_version_of_any_length_is_a_422_not_a_500(http):
    wanted = {"include": "AVAILABILITY", "product": "POD"}
    floor = http.get("/v2/catalog/gpus", params={**wanted, "minCudaVersion": "12.4"})
    assert floor.status_code == 200 and floor.json()["gpus"]
    for bad in ("1" * 5000, "12." + "4" * 5000, "12.4.1", "twelve"):
        response = http.get("/v2/catalog/gpus", params={**wanted, "minCudaVersion": bad})
        assert "major or major.minor" in problem(response, 422)["detail"]
