"""``/v2/serverless`` answers (endpoint, list, update, workers, releases) have the shapes of
the reference OpenAPI document (skipped without it, like ``test_reference_schemas``)."""

from __future__ import annotations

import secrets
from typing import Any

from test_queue_helpers import RawWorker, queue_emulator, run, worker_key  # noqa: F401
from test_reference_schemas import conforms  # noqa: F401  (the fixture)


def test_serverless_answers_match_the_reference(start_emulator: Any, conforms: Any) -> None:  # noqa: F811
    emu = queue_emulator(start_emulator)
    name = "schema-" + secrets.token_hex(3)
    with emu.http() as http:
        created = http.post(
            "/v2/serverless",
            json={"name": name, "type": "QUEUE", "image": "me/w:1", "env": {"A": "1"}},
        )
        assert created.status_code == 201
        assert conforms("Endpoint", created.json()) == []
        assert conforms("Endpoint", http.get("/v2/serverless/echo").json()) == []
        assert conforms("ListEndpointsResponse", http.get("/v2/serverless").json()) == []
        patched = http.patch(
            f"/v2/serverless/{name}",
            json={"image": "me/w:2", "scaling": {"type": "REQUEST_COUNT", "requestCount": 3}},
        )
        assert patched.status_code == 200, patched.text
        assert conforms("Endpoint", patched.json()) == []
        run(http, name, {"input": {}})
        worker = RawWorker(emu.url, name, worker_key(http, name))
        try:
            assert worker.take().status_code == 200
            workers = http.get(f"/v2/serverless/{name}/workers").json()
            assert conforms("ListEndpointWorkersResponse", workers) == []
            assert workers["summary"]["running"] == 1
        finally:
            worker.close()
        releases = http.get(f"/v2/serverless/{name}/releases").json()
        assert conforms("ListEndpointReleasesResponse", releases) == []
        assert [r["version"] for r in releases["releases"]] == [2, 1]
        missing = http.patch(f"/v2/serverless/no-such-{name}", json={"image": "x/y:1"})
        assert missing.status_code == 404
        assert conforms("ErrorResponse", missing.json()) == []
