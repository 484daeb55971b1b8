"""The guard's HTTP call through python3 (an image without curl) fails as curl's does: a
request that gets no answer in time is a failure (the guard tries again at its next tick),
while a body still streaming when the time is up (a log read) is not. Real sockets on
loopback, the program text taken from ``guard.sh`` itself."""

from __future__ import annotations

import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources

GUARD = resources.files("podbook.guard").joinpath("guard.sh").read_text()
PROGRAM = re.search(r"\n    py='\n(.*?)\n'\n", GUARD, re.S).group(1)  # type: ignore[union-attr]


@contextmanager
def server(reply: bytes | None) -> Iterator[str]:
    """A loopback server that reads a request and sends ``reply`` (None: nothing), then holds
    the connection open until the test ends; its URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            conn.recv(65536)
            if reply is not None:
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        listener.close()
        for conn in held:
            conn.close()


def call(url: str, method: str = "POST") -> subprocess.CompletedProcess[str]:
    """``call METHOD PATH BODY 1`` as guard.sh runs it with python3 (1 s limit)."""
    return subprocess.run(
        ["python3", "-c", PROGRAM, "api", f"{url}/v2/pods/p1/action", method, "{}", "1"],
        capture_output=True,
        text=True,
        timeout=30,
        env={"RUNPOD_API_KEY": "k", "PATH": "/usr/bin:/bin"},
    )


def test_a_request_with_no_answer_in_time_fails() -> None:
    with server(None) as url:
        assert call(url).returncode == 22


def test_a_body_still_streaming_when_time_is_up_counts_as_read() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n"
    with server(head + b"first line\n") as url:
        result = call(url, "GET")
    assert (result.returncode, result.stdout) == (0, "first line\n")


def test_an_answer_is_success_only_when_it_is_2xx() -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}\n"
    refused = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    with server(ok) as url:
        assert call(url).returncode == 0
    with server(refused) as url:
        assert call(url).returncode == 22
