"""The pod-scoped key the emulator puts in every pod (``RUNPOD_API_KEY``), as the service
does: good for its own pod (read, log, actions, delete) and refused (403) for every other
pod and every account call; never in the pod's record or the emulator's log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from guard_helpers import guarded_pod
from processes import wait_for

from podbook import Client

pytestmark = pytest.mark.timeout(120)


def key_of(emu: Any, client: Client, pod: Any) -> str:
    """The key the pod's main process found in its environment (written to its disk)."""
    path = Path(emu.home) / "podruntime" / "pods" / pod.id / "container" / "key"
    client.pods.wait_for(pod, "RUNNING", timeout=30)
    return wait_for(lambda: path.exists() and path.read_text().strip(), timeout=15)


def test_the_pod_key_acts_on_its_own_pod_only(guard_emu: Any, guard_client: Client) -> None:
    script = 'printf %s "$RUNPOD_API_KEY" > "$RUNPOD_CONTAINER_DISK/key"; exec sleep 600'
    pod = guarded_pod(guard_client, args=script)
    other = guarded_pod(guard_client, args="exec sleep 600")
    key = key_of(guard_emu, guard_client, pod)
    assert key and key != guard_emu.api_key
    with httpx.Client(
        base_url=guard_emu.url, headers={"Authorization": f"Bearer {key}"}, timeout=10
    ) as own:
        assert own.get(f"/v2/pods/{pod.id}").json()["id"] == pod.id
        with own.stream("GET", f"/v2/pods/{pod.id}/logs", params={"tail": 1}) as logs:
            assert logs.status_code == 200
        refused = {
            "list pods": own.get("/v2/pods"),
            "read another pod": own.get(f"/v2/pods/{other.id}"),
            "stop another pod": own.post(f"/v2/pods/{other.id}/action", json={"action": "stop"}),
            "delete another pod": own.delete(f"/v2/pods/{other.id}"),
            "change its own pod": own.patch(f"/v2/pods/{pod.id}", json={"name": "x"}),
            "create a pod": own.post("/v2/pods", json={"name": "x", "image": "x"}),
            "billing": own.get("/v2/billing/pods"),
            "ssh keys": own.get("/v2/account/ssh-keys"),
            "endpoints": own.get("/v2/serverless"),
            "volumes": own.get("/v2/network-volumes"),
            "templates": own.get("/v2/templates"),
            "a queue call": own.post("/v2/anyendpoint/run", json={"input": {}}),
        }
        for what, response in refused.items():
            assert response.status_code == 403, (what, response.status_code, response.text)
        assert "scoped to pod" in refused["list pods"].json()["detail"]
        stopped = own.post(f"/v2/pods/{pod.id}/action", json={"action": "stop"})
        assert stopped.status_code == 200 and stopped.json()["status"] in ("EXITED", "RUNNING")
        assert guard_client.pods.get(other.id).status == "RUNNING"
        assert own.delete(f"/v2/pods/{pod.id}").status_code == 204
        gone = own.get(f"/v2/pods/{pod.id}")
        assert gone.status_code == 401  # the key died with its pod
    record = guard_client.pods.get(other.id).model_dump_json()
    assert "rpa_pod_" not in record
    assert key not in Path(guard_emu.log_path).read_text(errors="replace")
    guard_client.pods.terminate(other.id)
