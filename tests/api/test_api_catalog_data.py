"""The emulator's built-in catalog: shapes match the contract; placement is deterministic and
its errors say what did not match and what exists instead."""

from __future__ import annotations

import pytest

from podbook.api import (
    ListCpuTypesResponse,
    ListDataCentersResponse,
    ListGpuTypesResponse,
    ListTemplatesResponse,
    cuda_key,
    to_wire,
)
from podbook.emulator import catalog_data as catalog
from podbook.emulator.placement import (
    InvalidVcpuCount,
    NoCapacity,
    PlacementError,
    UnknownCpuFlavor,
    UnknownDataCenter,
    UnknownGpuType,
    choose_cpu_host,
    choose_gpu_host,
)

RTX4090 = "NVIDIA GeForce RTX 4090"


# --- listings ------------------------------------------------------------------------------


def test_gpu_types_match_the_contract_and_spell_ids_like_the_service():
    gpus = catalog.list_gpu_types()
    parsed = ListGpuTypesResponse.model_validate({"gpus": gpus})
    assert to_wire(parsed) == {"gpus": gpus}
    ids = [gpu.id for gpu in parsed.gpus]
    assert len(ids) >= 10 and len(set(ids)) == len(ids)
    for expected in (RTX4090, "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S"):
        assert expected in ids
    assert {gpu.manufacturer for gpu in parsed.gpus} == {"NVIDIA", "AMD"}
    assert all("availability" not in gpu for gpu in gpus)


def test_gpu_availability_lists_data_centers_and_cuda_versions():
    gpus = {g["id"]: g for g in catalog.list_gpu_types(catalog.GpuQuery(True, "POD"))}
    rtx = gpus[RTX4090]
    assert rtx["availability"] == "HIGH"
    assert [dc["id"] for dc in rtx["dataCenters"]] == [
        "US-TX-3",
        "US-KS-2",
        "EU-RO-1",
        "EU-NL-1",
        "AP-JP-1",
    ]
    versions = [v["version"] for v in rtx["cudaVersions"]]
    assert versions == sorted(versions, key=cuda_key) and len(versions) >= 3
    assert "cudaVersions" not in gpus["AMD Instinct MI300X OAM"]  # AMD hosts report none
    h200 = {v["version"]: v["available"] for v in gpus["NVIDIA H200"]["cudaVersions"]}
    assert h200 == {"12.8": True}
    ListGpuTypesResponse.model_validate({"gpus": list(gpus.values())})


def test_gpu_availability_filters():
    def one(**kwargs):
        return catalog.get_gpu_type(RTX4090, catalog.GpuQuery(True, "POD", **kwargs))

    assert [v["version"] for v in one(cuda_versions=["12.8"])["cudaVersions"]] == ["12.8"]
    assert [v["version"] for v in one(min_cuda_version="12.7")["cudaVersions"]] == ["12.8", "13.0"]
    assert [v["version"] for v in one(min_cuda_version="13")["cudaVersions"]] == ["13.0"]
    community = one(cloud="COMMUNITY")
    assert [dc["id"] for dc in community["dataCenters"]] == ["US-CA-2", "EU-RO-1", "AP-JP-1"]
    too_many = one(count=16)
    assert too_many["availability"] == "NONE" and "dataCenters" not in too_many
    assert [dc["id"] for dc in one(country_codes=["JP"])["dataCenters"]] == ["AP-JP-1"]
    only_jp = catalog.list_gpu_types(catalog.GpuQuery(True, "POD", country_codes=["JP"]))
    assert {g["id"] for g in only_jp} == {RTX4090, "NVIDIA H100 80GB HBM3"}
    assert catalog.get_gpu_type("nope") is None


def test_full_hosts_show_as_unavailable():
    h200_nl = [
        dc
        for dc in catalog.get_gpu_type("NVIDIA H200", catalog.GpuQuery(True, "POD"))["dataCenters"]
        if dc["id"] == "EU-NL-1"
    ]
    assert h200_nl == [{"id": "EU-NL-1", "name": "EU Netherlands 1", "availability": "NONE"}]


def test_cpu_types():
    cpus = catalog.list_cpu_types()
    parsed = ListCpuTypesResponse.model_validate({"cpus": cpus})
    assert {"cpu3c", "cpu3g", "cpu5c", "cpu5g"} <= {c.id for c in parsed.cpus}
    with_availability = {
        c["id"]: c for c in catalog.list_cpu_types(include_availability=True, product="POD")
    }
    assert with_availability["cpu5m"]["availability"] == "NONE"
    assert with_availability["cpu3c"]["availability"] == "HIGH"
    assert (
        catalog.get_cpu_type("cpu3c", include_availability=True, vcpu_count=64)["availability"]
        == "NONE"
    )  # beyond the flavor's maximum
    assert catalog.get_cpu_type("nope") is None


def test_data_centers_and_filters():
    dcs = catalog.list_data_centers()
    parsed = ListDataCentersResponse.model_validate({"dataCenters": dcs})
    assert len(parsed.data_centers) >= 8
    assert {True, False} == {dc.global_network for dc in parsed.data_centers}
    assert all("country" not in dc for dc in dcs)  # internal data is not leaked
    europe = [dc["id"] for dc in catalog.list_data_centers(regions=["EUROPE"])]
    assert europe == ["EU-RO-1", "EU-SE-1", "EU-NL-1"]
    hps = catalog.list_data_centers(network_volume_types=["STANDARD", "HIGH_PERFORMANCE"])
    assert [dc["id"] for dc in hps] == ["US-CA-2", "EU-NL-1"]
    gdpr_soc2 = catalog.list_data_centers(compliance=["GDPR", "SOC_2_TYPE_2"])
    assert [dc["id"] for dc in gdpr_soc2] == ["EU-RO-1", "EU-NL-1"]
    global_only = catalog.list_data_centers(global_network=True)
    assert all(dc["globalNetwork"] for dc in global_only) and len(global_only) == 4


def test_data_center_availability_includes():
    ks = catalog.get_data_center("US-KS-2", include=["GPU_AVAILABILITY", "CPU_AVAILABILITY"])
    gpus = {g["id"]: g["availability"] for g in ks["gpuAvailability"]}
    assert gpus["NVIDIA GeForce RTX 3090"] == "NONE" and gpus[RTX4090] == "HIGH"
    assert [c["id"] for c in ks["cpuAvailability"]] == ["cpu3c", "cpu3m"]
    plain = catalog.get_data_center("AP-JP-1")
    assert "gpuAvailability" not in plain and "cpuAvailability" not in plain
    no_cpus = catalog.get_data_center("AP-JP-1", include="CPU_AVAILABILITY")
    assert "cpuAvailability" not in no_cpus
    assert catalog.get_data_center("XX-1") is None


def test_public_templates():
    templates = catalog.public_templates()
    parsed = ListTemplatesResponse.model_validate({"templates": templates})
    by_id = {t.id: t for t in parsed.templates}
    assert [t.serverless for t in parsed.templates].count(True) == 1
    torch = by_id["runpod-torch-v280"]
    assert torch.start_jupyter and torch.start_ssh and "8888/http" in torch.ports
    assert torch.allowed_cuda_versions and torch.mounts.persistent.size >= 10
    templates[0]["env"]["MUTATED"] = "1"
    assert "MUTATED" not in catalog.public_templates()[0]["env"]  # fresh copies


# --- placement -----------------------------------------------------------------------------


def test_gpu_placement_prefers_requested_order_and_newest_cuda():
    first = choose_gpu_host(RTX4090)
    assert (first.data_center_id, first.cuda_version) == ("US-TX-3", "12.8")
    assert first.price_per_hour == pytest.approx(0.69)
    assert choose_gpu_host(RTX4090) == first  # deterministic
    ro = choose_gpu_host(RTX4090, count=2, data_center_ids=["EU-SE-1", "EU-RO-1"])
    assert ro.data_center_id == "EU-RO-1" and ro.price_per_hour == pytest.approx(1.38)
    assert ro.global_network is True
    assert ro.host_id.startswith("eu-ro-1-")


def test_allowed_cuda_matches_exactly():
    spot = choose_gpu_host(RTX4090, data_center_ids=["EU-RO-1"], allowed_cuda_versions=["12.4"])
    assert spot.cuda_version == "12.4"
    with pytest.raises(NoCapacity) as info:
        choose_gpu_host(RTX4090, data_center_ids=["EU-RO-1"], allowed_cuda_versions=["11.8"])
    assert str(info.value) == (
        "no SECURE host in EU-RO-1 reports CUDA 11.8 for NVIDIA GeForce RTX 4090;"
        " available there: 12.4, 12.8"
    )


def test_min_cuda_compares_numerically():
    assert choose_gpu_host(RTX4090, min_cuda_version="12.5").cuda_version == "12.8"
    assert choose_gpu_host(RTX4090, min_cuda_version="13").cuda_version == "13.0"
    assert choose_gpu_host(RTX4090, min_cuda_version="12").data_center_id == "US-TX-3"
    spot = choose_gpu_host("NVIDIA H100 80GB HBM3", min_cuda_version="12.9")
    assert (spot.data_center_id, spot.cuda_version) == ("AP-JP-1", "12.9")
    with pytest.raises(NoCapacity) as info:
        choose_gpu_host(RTX4090, data_center_ids=["US-KS-2"], min_cuda_version="12.11")
    assert str(info.value) == (
        "no SECURE host in US-KS-2 reports CUDA 12.11 or newer for NVIDIA GeForce RTX 4090;"
        " available there: 12.6, 12.8"
    )
    assert catalog.cuda_key("12.11") > catalog.cuda_key("12.2")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"gpu_id": "RTX 4090"},
            UnknownGpuType,
            "unknown GPU type 'RTX 4090'; see GET /v2/catalog/gpus for ids such as"
            " 'NVIDIA GeForce RTX 4090'",
        ),
        (
            {"gpu_id": RTX4090, "data_center_ids": ["MARS-1"]},
            UnknownDataCenter,
            "unknown data center 'MARS-1'; known: US-TX-3, US-CA-2, US-KS-2, EU-RO-1, EU-SE-1,"
            " EU-NL-1, CA-MTL-1, AP-JP-1",
        ),
        (
            {"gpu_id": "NVIDIA H200", "cloud": "COMMUNITY"},
            NoCapacity,
            "NVIDIA H200 is not offered on COMMUNITY cloud; use cloud SECURE",
        ),
        (
            {"gpu_id": RTX4090, "count": 9},
            NoCapacity,
            "9 x NVIDIA GeForce RTX 4090 exceeds the largest SECURE machine (8 GPUs);"
            " request fewer GPUs per pod",
        ),
        (
            {"gpu_id": RTX4090, "data_center_ids": ["EU-SE-1"]},
            NoCapacity,
            "no SECURE host in EU-SE-1 has NVIDIA GeForce RTX 4090; it is offered (SECURE) in"
            " US-TX-3, US-KS-2, EU-RO-1, EU-NL-1, AP-JP-1",
        ),
        (
            {"gpu_id": "NVIDIA H200", "data_center_ids": ["EU-NL-1"]},
            NoCapacity,
            "no free SECURE capacity for 1 x NVIDIA H200 in EU-NL-1 right now;"
            " try another data center or cloud",
        ),
        (
            {"gpu_id": RTX4090, "cloud": "COMMUNITY", "count": 8, "data_center_ids": ["EU-RO-1"]},
            NoCapacity,
            "no COMMUNITY machine in EU-RO-1 has 8 x NVIDIA GeForce RTX 4090 (largest there: 4);"
            " request fewer GPUs per pod",
        ),
        (
            {"gpu_id": RTX4090, "data_center_ids": ["US-KS-2"], "global_network": True},
            NoCapacity,
            "global networking is not supported where NVIDIA GeForce RTX 4090 can be placed"
            " (US-KS-2); data centers with global networking: US-TX-3, US-CA-2, EU-RO-1, EU-NL-1",
        ),
        (
            {"gpu_id": "AMD Instinct MI300X OAM", "global_network": True},
            NoCapacity,
            "global networking needs an NVIDIA GPU; AMD Instinct MI300X OAM is not one",
        ),
        (
            {"gpu_id": "NVIDIA H200", "count": 8, "pod_count": 2},
            NoCapacity,
            "no free SECURE capacity for 2 pods of 8 x NVIDIA H200 in any data center right now;"
            " try another data center or cloud",
        ),
    ],
)
def test_gpu_placement_errors_are_one_clear_line(kwargs, error, message):
    with pytest.raises(error) as info:
        choose_gpu_host(**kwargs)
    assert str(info.value) == message
    assert isinstance(info.value, PlacementError) and "\n" not in str(info.value)


def test_global_networking_picks_a_supporting_data_center():
    spot = choose_gpu_host(RTX4090, data_center_ids=["US-KS-2", "EU-RO-1"], global_network=True)
    assert spot.data_center_id == "EU-RO-1" and spot.global_network


def test_cluster_placement_keeps_all_pods_in_one_data_center():
    spot = choose_gpu_host("NVIDIA H100 80GB HBM3", count=8, pod_count=4)
    assert (spot.data_center_id, spot.cuda_version) == ("US-TX-3", "12.4")  # 32 free there


def test_cpu_placement():
    spot = choose_cpu_host("cpu3g", 8)
    assert spot.data_center_id == "US-TX-3" and spot.memory_gb == 32
    assert spot.cuda_version is None and spot.price_per_hour == pytest.approx(0.32)
    assert choose_cpu_host("cpu5c", 2, data_center_ids=["EU-SE-1"]).data_center_id == "EU-SE-1"


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (
            ("cpu9x", 2),
            {},
            UnknownCpuFlavor,
            "unknown CPU flavor 'cpu9x'; known: cpu3c, cpu3g, cpu3m, cpu5c, cpu5g, cpu5m",
        ),
        (
            ("cpu3c", 6),
            {},
            InvalidVcpuCount,
            "vcpuCount 6 is not valid for cpu3c; choose a power of two from 2 to 32",
        ),
        (
            ("cpu3m", 32),
            {},
            InvalidVcpuCount,
            "vcpuCount 32 is not valid for cpu3m; choose a power of two from 2 to 16",
        ),
        (
            ("cpu3c", 2),
            {"cloud": "COMMUNITY"},
            NoCapacity,
            "CPU pods run on SECURE cloud only; COMMUNITY has no cpu3c hosts",
        ),
        (
            ("cpu3c", 2),
            {"data_center_ids": ["AP-JP-1"]},
            NoCapacity,
            "no host in AP-JP-1 has cpu3c; it is offered in US-TX-3, US-KS-2, EU-RO-1",
        ),
        (
            ("cpu5m", 4),
            {},
            NoCapacity,
            "no free capacity for 4 vCPUs of cpu5m in any data center right now;"
            " try another data center or flavor",
        ),
    ],
)
def test_cpu_placement_errors(args, kwargs, error, message):
    with pytest.raises(error) as info:
        choose_cpu_host(*args, **kwargs)
    assert str(info.value) == message
