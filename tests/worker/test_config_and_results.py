"""Worker configuration from RUNPOD_* variables, worker-env output, result payloads."""

from __future__ import annotations

import json
import shlex

import pytest

from podbook.errors import ConfigError
from podbook.worker._config import WorkerConfig, webhook_templates
from podbook.worker._env import format_exports, runpod_config_note, worker_env
from podbook.worker._results import Chunk, chunk_body, error_payload, result_payload

URL = "http://127.0.0.1:8765"


def test_templates_end_in_a_question_mark_as_the_sdk_needs():
    templates = webhook_templates(URL, "demo")
    assert templates["RUNPOD_WEBHOOK_GET_JOB"] == f"{URL}/v2/demo/job-take/$ID?"
    for value in templates.values():
        assert value.endswith("?")


def test_config_from_the_sdk_variables_fills_in_the_worker_id():
    env = {**webhook_templates(URL, "demo"), "RUNPOD_AI_API_KEY": "wk_x", "RUNPOD_POD_ID": "w1"}
    config = WorkerConfig.from_env(env)
    assert config.take_url == f"{URL}/v2/demo/job-take/w1?"
    assert config.batch_take_url(3) == f"{URL}/v2/demo/job-take-batch/w1?&batch_size=3"
    assert config.stop_url == f"{URL}/v2/demo/job-stop/w1?"
    assert config.result_url("j 1", is_stream=True) == (
        f"{URL}/v2/demo/job-done/w1/j%201?&isStream=true"
    )
    assert config.chunk_url("j1") == f"{URL}/v2/demo/job-stream/w1/j1?&isStream=false"
    assert config.ping_url == f"{URL}/v2/demo/ping/w1?"
    assert config.ping_interval == 10.0
    assert "wk_x" not in repr(config)


def test_config_errors_name_the_variable():
    with pytest.raises(ConfigError, match="RUNPOD_WEBHOOK_GET_JOB is not set"):
        WorkerConfig.from_env({})
    env = {**webhook_templates(URL, "demo"), "RUNPOD_AI_API_KEY": "wk_x"}
    with pytest.raises(ConfigError, match="RUNPOD_PING_INTERVAL='soon'"):
        WorkerConfig.from_env({**env, "RUNPOD_PING_INTERVAL": "soon"})
    with pytest.raises(ConfigError, match="no worker key: set RUNPOD_AI_API_KEY"):
        WorkerConfig.from_env({**env, "RUNPOD_AI_API_KEY": ""})


def test_worker_env_exports_keep_placeholders_literal():
    env = worker_env(URL, "demo", "wk_abc", worker_id="w9", ping_interval_ms=2000)
    text = format_exports(env)
    parsed = dict(
        line[len("export ") :].split("=", 1)
        for line in text.splitlines()
        if line.startswith("export ")
    )
    assert shlex.split(parsed["RUNPOD_WEBHOOK_GET_JOB"])[0].endswith("/job-take/$ID?")
    assert "'" in parsed["RUNPOD_WEBHOOK_GET_JOB"]  # single-quoted: the shell keeps $ID
    assert parsed["RUNPOD_POD_ID"] == "w9"
    assert parsed["RUNPOD_PING_INTERVAL"] == "2000"
    assert parsed["RUNPOD_SKIP_GPU_CHECK"] == "true"


def test_config_toml_note_gets_louder_when_the_file_exists(tmp_path):
    assert runpod_config_note(tmp_path).startswith("# Note:")
    (tmp_path / ".runpod").mkdir()
    (tmp_path / ".runpod" / "config.toml").write_text('[default]\napi_key = "x"\n')
    assert runpod_config_note(tmp_path).startswith("# WARNING:")


def test_result_payloads_follow_runpod_semantics():
    assert result_payload(5) == ({"output": 5}, False)
    assert result_payload({"a": 1}) == ({"output": {"a": 1}}, False)
    assert result_payload({"error": "no", "a": 1}) == ({"output": {"a": 1}, "error": "no"}, False)
    assert result_payload({"error": "no"}) == ({"error": "no"}, False)
    assert result_payload({"x": 1, "refresh_worker": True}) == ({"output": {"x": 1}}, True)
    assert result_payload({}) == ({}, False)


def test_chunks_carry_metrics_beside_their_output():
    assert chunk_body("tok") == ("tok", {"output": "tok"})
    assert chunk_body(Chunk({"t": 1}, {"stream_index": 0})) == (
        {"t": 1},
        {"output": {"t": 1}, "metrics": {"stream_index": 0}},
    )


def test_error_payload_is_json_text_with_type_message_and_traceback():
    try:
        raise KeyError("missing")
    except KeyError as exc:
        payload = error_payload(exc, "w1")
    info = json.loads(payload["error"])
    assert info["error_type"] == "KeyError"
    assert info["error_message"] == "'missing'"
    assert "raise KeyError" in info["error_traceback"]
    assert info["worker_id"] == "w1"
