"""Variables between this Python and a pod's kernel: ``put`` and ``get`` round trips (a dict,
a 10 MB payload in chunks under the server's 10 MiB WebSocket message limit), and one clear
line for what cannot travel."""

from __future__ import annotations

import os
import re
import threading
import time

import pytest
from remote_helpers import stdout

from podbook.errors import TransferError
from podbook.remote import CHUNK_BYTES, RemoteKernel
from podbook.remote import _kernel_vars as kernel_vars

pytestmark = pytest.mark.timeout(180)


def test_put_and_get_a_dict_and_a_10_mb_payload(kernel: RemoteKernel) -> None:
    record = {"name": "run-1", "values": [1.5, 2.5], "nested": {"ok": True, "n": None}}
    payload = os.urandom(10 * 1024 * 1024)
    assert len(payload) > 4 * CHUNK_BYTES, "several chunks"
    started = time.monotonic()
    kernel.put(record=record, payload=payload)
    sent = time.monotonic() - started
    outputs = kernel.run("print(len(payload), record['values'][1])")
    assert stdout(outputs) == "10485760 2.5\n"

    started = time.monotonic()
    back = kernel.get("record", "payload")
    got = time.monotonic() - started
    assert back == {"record": record, "payload": payload}
    print(f"put 10 MB {sent:.2f} s, get {got:.2f} s")
    assert kernel.remote_python is not None
    helpers = kernel.run("print(sorted(k for k in globals() if 'podbook' in k))")
    assert stdout(helpers) == "[]\n", "no helper names in the user's namespace"


def test_values_that_cannot_travel_get_one_line_each(
    kernel: RemoteKernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(TransferError) as raised:
        kernel.put(ok=1, lock=threading.Lock())
    message = str(raised.value)
    assert "\n" not in message and "'lock'" in message and "cannot be pickled" in message
    assert stdout(kernel.run("print('ok' in globals())")) == "False\n", "nothing was set"

    kernel.run("import threading\nremote_lock = threading.Lock()")
    with pytest.raises(TransferError) as raised:
        kernel.get("remote_lock")
    message = str(raised.value)
    assert "\n" not in message and "'remote_lock'" in message and "cannot be pickled" in message

    with pytest.raises(TransferError, match="name 'missing' is not defined in the pod's kernel"):
        kernel.get("missing")

    monkeypatch.setattr(kernel_vars, "MAX_TRANSFER_BYTES", 1000)
    with pytest.raises(TransferError) as raised:
        kernel.put(big=b"x" * 5000)
    message = str(raised.value)
    assert re.fullmatch(
        r"the values to send take at least 5,0\d\d bytes pickled, over the 1,000 bytes limit; "
        r"move fewer or smaller values, or write them to a file on the pod",
        message,
    ), message
    kernel.run("big = b'x' * 5000")
    with pytest.raises(TransferError) as raised:
        kernel.get("big")
    message = str(raised.value)
    assert "\n" not in message and "'big'" in message and "limit of 1,000 bytes" in message

    monkeypatch.setattr(kernel_vars.platform, "python_version", lambda: "3.2.1")
    with pytest.raises(TransferError) as raised:
        kernel.put(small=1)
    message = str(raised.value)
    assert "\n" not in message
    assert f"runs Python {kernel.remote_python} and this one Python 3.2.1" in message
