"""State survives a restart on the same file; lifecycles resume from stored timestamps."""

from __future__ import annotations

import sqlite3
import stat

from emu_helpers import GPU, create, gpu_pod, wait_status


def test_everything_survives_a_restart(start_emulator):
    emu = start_emulator(timings=("--provision-seconds", "1.0", "--start-seconds", "0.3"))
    with emu.http() as http:
        running = create(http, gpu_pod(name="runs", ports=["22/tcp"]))
        wait_status(http, running["id"], "RUNNING")
        stopped = create(http, gpu_pod(name="stopped"))
        wait_status(http, stopped["id"], "RUNNING")
        http.post(f"/v2/pods/{stopped['id']}/action", json={"action": "stop"})
        booting = create(http, gpu_pod(name="booting"))
        http.patch(f"/v2/pods/{running['id']}", json={"name": "runs-renamed"})
        cluster = http.post(
            "/v2/clusters",
            json={
                "name": "kept",
                "type": "RAY",
                "image": "i",
                "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
            },
        ).json()
        key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKept kept@host"
        http.put("/v2/account/ssh-keys", json={"keys": [key]})
        registry = http.post(
            "/v2/registries", json={"name": "r", "username": "u", "password": "p"}
        ).json()
        before = {
            p["id"]: p
            for p in http.get("/v2/pods", params={"includeClusterPods": "true"}).json()["pods"]
        }
    emu.restart()
    with emu.http() as http:
        after = {
            p["id"]: p
            for p in http.get("/v2/pods", params={"includeClusterPods": "true"}).json()["pods"]
        }
        assert list(after) == list(before)  # same pods, same order
        assert after[running["id"]]["status"] == "RUNNING"
        assert after[running["id"]]["startedAt"] == before[running["id"]]["startedAt"]
        assert after[running["id"]]["ssh"] == before[running["id"]]["ssh"]
        assert after[stopped["id"]]["status"] == "EXITED"
        # the booting pod resumes its lifecycle where the clock says it is
        wait_status(http, booting["id"], "RUNNING")
        assert http.get(f"/v2/clusters/{cluster['id']}").json()["name"] == "kept"
        assert http.get("/v2/account/ssh-keys").json() == {"keys": [key]}
        assert http.get(f"/v2/registries/{registry['id']}").json() == registry
        # keys from the config survive too (and still work)
    with emu.http(emu.readonly_key) as ro:
        assert ro.get("/v2/pods").status_code == 200
    emu.stop()


def test_db_file_is_private_and_holds_no_clear_keys(start_emulator):
    emu = start_emulator()
    with emu.http() as http:
        create(http, gpu_pod())
    emu.stop()
    assert stat.S_IMODE(emu.db.stat().st_mode) == 0o600
    with sqlite3.connect(emu.db) as db:
        dump = "\n".join(db.iterdump())
    for key in (emu.api_key, emu.readonly_key, emu.other_key):
        assert key not in dump


def test_keys_and_templates_survive_a_restart_without_the_config_file(start_emulator):
    """What the config file declared lives in the database: the file is not needed again."""
    emu = start_emulator()
    with emu.http() as http:
        own = http.get("/v2/templates/tpl-own").json()
    emu.config.write_text("", encoding="utf-8")  # the restart reads no accounts at all
    emu.restart()
    with emu.http(emu.readonly_key) as ro:
        assert ro.get("/v2/pods").status_code == 200
        assert ro.post("/v2/pods", json=gpu_pod()).status_code == 403
    with emu.http(emu.other_key) as other:
        assert other.get("/v2/pods").status_code == 200
        assert other.get("/v2/templates/tpl-own").status_code == 404
    with emu.http() as http:
        assert http.get("/v2/templates/tpl-own").json() == own
        pod = create(http, {"name": "from-template", "templateId": "tpl-own", "gpu": {"id": GPU}})
        assert pod["image"] == own["image"]
    emu.stop()
