"""The emulator's resource targets: 1,000 pods listed within 50 ms, held within 150 MB.

One pod is created over HTTP; the emulator is stopped, that stored pod is cloned 999 times
into its SQLite file (fast, and the same records the emulator writes), and the emulator is
started again on the file, so the test also covers loading 1,000 pods at start-up.
"""

from __future__ import annotations

import time

import psutil
from emu_helpers import gpu_pod

from podbook.emulator.settings import DEFAULT_ACCOUNT_ID
from podbook.emulator.store import Store


def test_thousand_pods_list_fast_and_fit_in_memory(start_emulator):
    emu = start_emulator()
    with emu.http() as http:
        body = gpu_pod(name="pod-0", ports=["8888/http", "22/tcp"], env={"INDEX": "0"})
        first = http.post("/v2/pods", json=body).json()
    emu.stop()
    store = Store(emu.db)
    template = store.pods.get(DEFAULT_ACCOUNT_ID, first["id"])
    for index in range(1, 1000):
        pod_id = f"{first['id'][:8]}{index:06d}"
        store.pods.put(
            DEFAULT_ACCOUNT_ID,
            {**template, "id": pod_id, "name": f"pod-{index}", "sshUser": f"{pod_id}-0000abcd"},
        )
    store.close()
    emu.start()
    with emu.http() as http:
        timings = []
        for _ in range(15):
            started = time.perf_counter()
            response = http.get("/v2/pods")
            timings.append(time.perf_counter() - started)
            assert response.status_code == 200
        pods = response.json()["pods"]
    assert len(pods) == 1000
    assert {p["status"] for p in pods} == {"RUNNING"}
    best = min(timings)
    assert best <= 0.050, f"listing 1,000 pods took {best * 1000:.1f} ms at best"
    rss = psutil.Process(emu.proc.pid).memory_info().rss
    assert rss <= 150 * 2**20, f"emulator holds 1,000 pods in {rss / 2**20:.0f} MB"
    emu.stop()
