"""The remote kernel's pieces without a server: a pod's HTTP URL, the WebSocket frames, the
typed outputs of each message, the remote error as IPython shows it, and no IPython import."""

from __future__ import annotations

import pickle
import subprocess
import sys
from types import SimpleNamespace

import pytest

from podbook.errors import RemoteExecutionError
from podbook.remote import (
    ClearOutput,
    DisplayData,
    ExecuteDone,
    ExecuteError,
    ExecuteResult,
    StreamText,
    UpdateDisplayData,
    pod_http_url,
)
from podbook.remote import _kernel_wire as wire


def test_pod_http_url_from_a_record_or_a_model() -> None:
    mapped = {"private": 8888, "public": 41234, "type": "http", "ip": "127.0.0.1"}
    record = {"id": "abc", "ports": ["8888/http", "22/tcp"], "runtime": {"ports": [mapped]}}
    assert pod_http_url(record, 8888) == "http://127.0.0.1:41234/"
    assert pod_http_url({**record, "runtime": None}, 8888) == "https://abc-8888.proxy.runpod.net"
    assert pod_http_url(record, 8080) is None, "a port the pod does not expose"
    assert pod_http_url(record, 22) is None, "not an http port"
    model = SimpleNamespace(
        id="abc",
        ports=["8888/http"],
        runtime=SimpleNamespace(ports=[SimpleNamespace(**{**mapped, "ip": "::1"})]),
    )
    assert pod_http_url(model, 8888) == "http://[::1]:41234/"
    outside = {**record, "runtime": {"ports": [{**mapped, "ip": "203.0.113.9"}]}}
    assert pod_http_url(outside, 8888) == "https://abc-8888.proxy.runpod.net"


def test_a_binary_frame_decodes_with_its_buffers() -> None:
    from jupyter_server.services.kernels.connection.base import serialize_binary_message

    msg = {
        "header": {"msg_id": "m1", "msg_type": "comm_msg"},
        "parent_header": {"msg_id": "p1"},
        "metadata": {},
        "content": {"data": {}},
        "channel": "iopub",
        "buffers": [b"first", b"\x00second"],
    }
    decoded = wire.decode(serialize_binary_message(msg))
    assert decoded is not None
    assert decoded["buffers"] == [b"first", b"\x00second"]
    assert wire.parent_id(decoded) == "p1" and wire.msg_type(decoded) == "comm_msg"
    assert wire.decode(b"\x00\x00") is None and wire.decode("not json") is None


def iopub(kind: str, content: dict[str, object]) -> dict[str, object]:
    return {"channel": "iopub", "msg_type": kind, "header": {"msg_type": kind}, "content": content}


def test_every_output_message_becomes_its_typed_output() -> None:
    png = {"image/png": "iVBOR...", "text/plain": "<Image>"}
    cases = [
        (iopub("stream", {"name": "stderr", "text": "warn\n"}), StreamText("stderr", "warn\n")),
        (
            iopub("display_data", {"data": png, "metadata": {"w": 1}, "transient": {}}),
            DisplayData(png, {"w": 1}, None),
        ),
        (
            iopub(
                "update_display_data",
                {"data": png, "metadata": {}, "transient": {"display_id": "d1"}},
            ),
            UpdateDisplayData(png, {}, "d1"),
        ),
        (
            iopub("execute_result", {"data": png, "metadata": {}, "execution_count": 3}),
            ExecuteResult(png, {}, 3),
        ),
        (iopub("clear_output", {"wait": True}), ClearOutput(wait=True)),
        (
            iopub("error", {"ename": "E", "evalue": "v", "traceback": ["\x1b[31ma", "b"]}),
            ExecuteError("E", "v", ("\x1b[31ma", "b")),
        ),
        (iopub("status", {"execution_state": "busy"}), None),
        (iopub("execute_input", {"code": "1"}), None),
    ]
    for msg, expected in cases:
        assert wire.to_output(msg) == expected


def test_a_remote_error_is_one_line_and_shows_the_remote_traceback() -> None:
    error = ExecuteError("ValueError", "first line\nsecond line", ("\x1b[31mTraceback", "..."))
    raised = error.exception("the kernel of pod abc")
    assert str(raised) == "ValueError: first line (raised in the kernel of pod abc)"
    assert raised._render_traceback_() == ["\x1b[31mTraceback", "..."]
    again = pickle.loads(pickle.dumps(raised))
    assert str(again) == str(raised) and again.traceback == raised.traceback
    with pytest.raises(RemoteExecutionError, match="^Aborted: an earlier request failed"):
        ExecuteDone(status="aborted").raise_for_error()
    ExecuteDone(status="ok").raise_for_error()


def test_the_client_side_imports_no_ipython() -> None:
    code = (
        "import sys\n"
        "from podbook.remote import connect_kernel, RemoteKernel, pod_http_url\n"
        "import podbook.remote.kernel, podbook.remote._kernel_vars\n"
        "from podbook.remote import _kernel_wire as wire\n"
        "wire.encode(wire.new_session(), 'execute_request', {'code': ''})\n"
        "import websockets.sync.client\n"
        "assert 'IPython' not in sys.modules, 'IPython imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
