"""A pod's main process: ``/bin/sh -c ARGS`` in its sandbox, in its own process group.

Its stdout and stderr (merged) go to a callback line by line, in order. :meth:`stop` sends
SIGTERM to the whole group, then SIGKILL after the grace period. The group leader gets
SIGTERM when the emulator dies (``PR_SET_PDEATHSIG``); whatever else of the group survives a
``kill -9`` of the emulator is killed at its next start from the ledger (:mod:`.ledger`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable

from podbook.emulator.broker.supervisor import detach_child
from podbook.emulator.podruntime.box import Box, BoxChild
from podbook.emulator.podruntime.sandbox import Sandbox

GRACE_SECONDS = 3.0
_CHUNK = 65536
_MAX_LINE = 16384


class MainProcess:
    """A running main process; see the module docstring."""

    def __init__(
        self,
        process: asyncio.subprocess.Process | BoxChild,
        on_lines: Callable[[list[str]], None],
        stream: asyncio.StreamReader | None = None,
    ):
        self.process = process
        self.pid = process.pid
        self.pgid = process.pid  # start_new_session: the leader's pid names the group
        self.stopping = False
        self._on_lines = on_lines
        self._stream = stream if stream is not None else process.stdout  # type: ignore[union-attr]
        self._pump = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(
        cls, args: str, sandbox: Sandbox, on_lines: Callable[[list[str]], None]
    ) -> MainProcess:
        """Start ``/bin/sh -c args`` in ``sandbox.workdir`` with ``sandbox.env``."""
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            args,
            cwd=sandbox.workdir,
            env=sandbox.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=sandbox.preexec or (detach_child if sys.platform == "linux" else None),
        )
        return cls(process, on_lines)

    @classmethod
    async def start_in_box(
        cls,
        args: str,
        box: Box,
        env: dict[str, str],
        cwd: str,
        on_lines: Callable[[list[str]], None],
    ) -> MainProcess:
        """Start ``/bin/sh -c args`` in the pod's box (its pid in the box is not 1: the box's
        init reaps what it leaves behind)."""
        read_end, write_end = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            child = await asyncio.to_thread(
                box.spawn,
                ["/bin/sh", "-c", args],
                env=env,
                cwd=cwd,
                stdin=null,
                stdout=write_end,
                stderr=write_end,
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
            os.close(null)
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=_CHUNK * 4)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(read_end, "rb", buffering=0)
        )
        return cls(child, on_lines, stream)

    async def _exit_code(self) -> int:
        if isinstance(self.process, BoxChild):
            code = await asyncio.to_thread(self.process.wait)
            return -int(signal.SIGKILL) if code is None else code
        return await self.process.wait()

    async def _read(self) -> None:
        stream = self._stream
        assert stream is not None
        pending = b""
        while True:
            chunk = await stream.read(_CHUNK)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            while len(pending) > _MAX_LINE:  # a very long line is cut into pieces
                lines.append(pending[:_MAX_LINE])
                pending = pending[_MAX_LINE:]
            if lines:
                self._on_lines([line.decode("utf-8", "replace").rstrip("\r") for line in lines])
        if pending:
            self._on_lines([pending.decode("utf-8", "replace").rstrip("\r")])

    async def wait(self) -> int:
        """Wait until the process has exited and its output is read; its exit code."""
        code = await self._exit_code()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self._pump), 2)
        self.kill_group(signal.SIGKILL)  # what the leader left behind ends with it
        return code

    def kill_group(self, sig: int) -> None:
        """Send ``sig`` to every process of the group (none known: nothing to send)."""
        if self.pgid <= 1:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """SIGTERM to the group, SIGKILL after ``grace`` seconds; every member ends."""
        self.stopping = True
        self.kill_group(signal.SIGTERM)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exit_code(), grace)
        self.kill_group(signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exit_code(), grace)
        self._pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._pump
