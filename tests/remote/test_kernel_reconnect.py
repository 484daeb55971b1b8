"""The WebSocket to a pod's kernel breaks while code runs: the client opens it again on the
same session (jupyter_server replays what it buffered meanwhile), says so once in the
outputs, and the code runs on; past the bounded time it gives up in one line, and the next
request connects afresh. A real wire (``tests/faultproxy.py``) sits between the client and
the pod's Jupyter server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from faultproxy import FaultProxy
from processes import wait_for
from remote_helpers import stdout

from podbook.errors import KernelConnectionLost
from podbook.remote import (
    ExecuteDone,
    Reconnected,
    connect_kernel,
    pod_http_url,
)

pytestmark = pytest.mark.timeout(180)

COUNTING = (
    "import time\nfor i in range(30):\n    print(i, flush=True)\n    time.sleep(0.1)\nprint('done')"
)


@pytest.fixture
def proxy(jupyter_pod: Any) -> Iterator[FaultProxy]:
    """A cuttable wire to the pod's Jupyter server."""
    url = pod_http_url(jupyter_pod, 8888)
    assert url is not None
    with FaultProxy(urlsplit(url).port or 0) as wire:
        yield wire


def test_a_dropped_websocket_reconnects_and_the_code_runs_on(
    jupyter_pod: Any, proxy: FaultProxy
) -> None:
    with connect_kernel(jupyter_pod, url=proxy.url, reconnect_timeout=10) as remote:
        outputs = []
        for output in remote.execute(COUNTING, timeout=60):
            outputs.append(output)
            if len(outputs) == 1:  # the first line printed
                proxy.refuse(1.0)  # the connection is reset, and refused for 1 s
        events = [o for o in outputs if isinstance(o, Reconnected)]
        assert len(events) == 1 and events[0].attempts > 1 and 0.9 < events[0].downtime < 10
        assert outputs[-1] == ExecuteDone(status="ok", execution_count=1)
        text = stdout(outputs)
        assert text.split() == [*map(str, range(30)), "done"], "replayed: none lost, none twice"
        assert stdout(outputs[: outputs.index(events[0])]) in ("0", "0\n"), (
            "what was printed while the wire was down came after the reconnect (replayed)"
        )
        assert remote.attached and stdout(remote.run("print(i)")) == "29\n"


def test_a_wire_down_too_long_gives_up_in_one_line_and_the_next_request_reconnects(
    jupyter_pod: Any, proxy: FaultProxy
) -> None:
    remote = connect_kernel(jupyter_pod, url=proxy.url, reconnect_timeout=1.5)
    try:
        execution = remote.execute("import time\ntime.sleep(2)\nslept = True")
        wait_for(lambda: remote.busy, what="the kernel busy")
        proxy.refuse(4)
        started = time.monotonic()
        with pytest.raises(KernelConnectionLost) as raised:
            list(execution)
        assert time.monotonic() - started < 6
        message = str(raised.value)
        assert "\n" not in message and "could not reconnect within 1.5 s" in message
        assert f"kernel_id={remote.kernel_id!r}" in message
        assert remote.state == "disconnected" and not remote.attached

        wait_for(lambda: proxy._listener is not None, timeout=10, what="the wire back")
        assert remote.get("slept") == {"slept": True}, "the code ran on meanwhile"
        assert remote.attached
    finally:
        remote.close(shutdown=True)


def test_a_request_lost_with_the_wire_is_sent_again_once(
    jupyter_pod: Any, proxy: FaultProxy
) -> None:
    with connect_kernel(jupyter_pod, url=proxy.url, reconnect_timeout=10) as remote:
        remote.run("runs = 0")
        socket = remote._ws
        assert socket is not None
        send = socket.send

        def lost(message: Any, *args: Any) -> None:  # the frame dies with the wire
            socket.send = send  # type: ignore[method-assign]
            proxy.cut_all()

        socket.send = lost  # type: ignore[method-assign]
        outputs = remote.run("runs += 1\nprint(runs)", timeout=30)
        assert isinstance(outputs[0], Reconnected)
        assert stdout(outputs) == "1\n"
        assert outputs[-1] == ExecuteDone(status="ok", execution_count=2)
        assert remote.get("runs") == {"runs": 1}, "run once, not twice"
