"""``client.pods.logs``: typed lines, follow, and resuming a cut stream without loss or repeats."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from typing import Any

import pytest

from podbook import AsyncClient, Client
from podbook.api.logs import LogLine
from podbook.errors import InvalidRequest, NotFound

GPU = "NVIDIA GeForce RTX 4090"


class CuttingProxy:
    """A loopback TCP proxy that drops each connection after ``cut_after`` bytes downstream
    (None: never), and holds the first connection's answer back ``hold_first`` seconds."""

    def __init__(self, upstream_port: int, cut_after: int | None, hold_first: float = 0.0) -> None:
        self.upstream_port = upstream_port
        self.cut_after = cut_after
        self.hold_first = hold_first
        self.connections = 0
        self.cuts = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop:
            try:
                down, _ = self._server.accept()
            except OSError:
                return
            self.connections += 1
            up = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._pipe, args=(down, up, None), daemon=True).start()
            hold = self.hold_first if self.connections == 1 else 0.0
            threading.Thread(
                target=self._pipe, args=(up, down, self.cut_after, hold), daemon=True
            ).start()

    def _pipe(
        self, src: socket.socket, dst: socket.socket, limit: int | None, hold: float = 0.0
    ) -> None:
        sent = 0
        try:
            while True:
                data = src.recv(4096)
                if not data:
                    break
                if hold and not sent:
                    time.sleep(hold)  # a slow first answer
                if limit is not None and sent + len(data) >= limit:
                    dst.sendall(data[: limit - sent])
                    self.cuts += 1
                    break
                dst.sendall(data)
                sent += len(data)
        except OSError:
            pass
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self._stop = True
        self._server.close()


@pytest.fixture(scope="module")
def logemu(start_emulator: Any) -> Any:
    """An emulator whose RUNNING pods write a periodic line every 0.05 s."""
    return start_emulator(extra_args=("--log-interval-seconds", "0.05"))


@pytest.fixture
def lclient(logemu: Any) -> Any:
    with Client(api_key=logemu.api_key, url=logemu.url) as client:
        yield client


def running_pod(client: Client) -> Any:
    pod = client.pods.create(name="logs", image="img:1", gpu=GPU)
    return client.pods.wait_for(pod, "RUNNING", timeout=30, poll_interval=0.05)


def test_lines_are_typed_and_backfill_ends(lclient: Client) -> None:
    pod = running_pod(lclient)
    time.sleep(0.3)
    with lclient.pods.logs(pod, tail=5000) as stream:
        lines = list(stream)
    assert lines and all(isinstance(line, LogLine) for line in lines)
    assert lines[0].line.startswith(f"pod {pod.id} scheduled")
    assert [line.seq for line in lines] == sorted({line.seq for line in lines})
    assert str(lines[0]).startswith(lines[0].ts + " [system] ")
    system = list(lclient.pods.logs(pod.id, source="system", tail=5000))
    assert system and {line.source for line in system} == {"system"}
    assert len(list(lclient.pods.logs(pod, tail=3))) >= 3


def test_a_backfill_waits_for_a_slow_first_answer(lclient: Client, logemu: Any) -> None:
    pod = running_pod(lclient)
    time.sleep(0.3)
    proxy = CuttingProxy(int(logemu.url.rsplit(":", 1)[1]), cut_after=None, hold_first=1.0)
    try:
        with Client(api_key=logemu.api_key, url=proxy.url) as slow:
            # idle bounds the gaps between lines, not the wait for the server's first answer
            lines = list(slow.pods.logs(pod, tail=5000, idle=0.3))
    finally:
        proxy.close()
    assert lines and lines[0].line.startswith(f"pod {pod.id} scheduled")
    assert proxy.connections == 2  # the first answer came too late: asked once more


def test_follow_sees_new_lines_and_ends_when_the_pod_is_terminated(lclient: Client) -> None:
    pod = running_pod(lclient)
    seen: list[LogLine] = []
    with lclient.pods.logs(pod, tail=0, follow=True) as stream:
        for line in stream:
            seen.append(line)
            if len(seen) == 5:
                lclient.pods.terminate(pod)
    assert seen[-1].line == "pod terminated"
    assert any(line.line.startswith("heartbeat") for line in seen)


def test_a_cut_stream_resumes_without_loss_or_repeats(lclient: Client, logemu: Any) -> None:
    pod = running_pod(lclient)
    time.sleep(1.0)  # about 20 heartbeat lines, plus start-up
    direct = [line.id for line in lclient.pods.logs(pod, tail=5000)]
    proxy = CuttingProxy(logemu.port, cut_after=1500)
    try:
        with Client(api_key=logemu.api_key, url=proxy.url) as cut:
            got: list[LogLine] = []
            with cut.pods.logs(pod, tail=5000, follow=True) as stream:
                for line in stream:
                    got.append(line)
                    if len(got) >= len(direct) + 20:
                        break
    finally:
        proxy.close()
    assert proxy.cuts >= 3 and proxy.connections >= 4
    ids = [line.id for line in got]
    assert len(ids) == len(set(ids)), "a line was repeated"
    assert ids[: len(direct)] == direct
    seqs = [line.seq for line in got]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "a line was lost"
    lclient.pods.terminate(pod)


def test_async_follow_resumes_through_cuts(logemu: Any) -> None:
    async def main() -> list[LogLine]:
        async with AsyncClient(api_key=logemu.api_key, url=logemu.url) as direct:
            pod = await direct.pods.create(name="alogs", image="img:1", gpu=GPU)
            await direct.pods.wait_for(pod, "RUNNING", timeout=30, poll_interval=0.05)
        proxy = CuttingProxy(logemu.port, cut_after=1200)
        try:
            async with AsyncClient(api_key=logemu.api_key, url=proxy.url) as client:
                got: list[LogLine] = []
                async with client.pods.logs(pod, tail=5000, follow=True) as stream:
                    async for line in stream:
                        got.append(line)
                        if len(got) >= 40:
                            break
        finally:
            proxy.close()
        assert proxy.cuts >= 2
        return got

    got = asyncio.run(main())
    seqs = [line.seq for line in got]
    assert seqs == list(range(1, len(seqs) + 1))


def test_bad_arguments_are_refused_before_sending(lclient: Client) -> None:
    with pytest.raises(InvalidRequest, match="source must be one of container, system"):
        lclient.pods.logs("abc", source="stdout")
    with pytest.raises(InvalidRequest, match="tail must be an integer from 0 to 5000"):
        lclient.pods.logs("abc", tail=9000)
    with pytest.raises(InvalidRequest, match="since must be an RFC 3339"):
        lclient.pods.logs("abc", since="yesterday")
    with pytest.raises(NotFound):
        list(lclient.pods.logs("no-such-pod"))


def test_follow_rides_out_an_emulator_restart(start_emulator: Any) -> None:
    emu = start_emulator(extra_args=("--log-interval-seconds", "0.1"))
    with Client(api_key=emu.api_key, url=emu.url) as client:
        pod = running_pod(client)
        got: list[LogLine] = []
        with client.pods.logs(pod, tail=5000, follow=True) as stream:
            for line in stream:
                got.append(line)
                if len(got) == 10:
                    emu.restart()  # same port and database: the stream resumes after line 10
                if len(got) >= 40:
                    break
    seqs = [line.seq for line in got]
    assert seqs == list(range(1, len(seqs) + 1))
