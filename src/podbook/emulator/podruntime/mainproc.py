"""A pod's main process: ``/bin/sh -c ARGS`` in its sandbox, in its own process group.

Its stdout and stderr (merged) go to a callback line by line, in order. :meth:`stop` sends
SIGTERM to the whole group, then SIGKILL after the grace period. The group leader gets
SIGTERM when the emulator dies (``PR_SET_PDEATHSIG``); whatever else of the group survives a
``kill -9`` of the emulator is killed at its next start from the ledger (:mod:`.processledger`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable

from podbook.emulator.podruntime.box import AsyncBoxProcess, Box
from podbook.emulator.podruntime.children import detach_child
from podbook.emulator.podruntime.sandbox import Sandbox

GRACE_SECONDS = 3.0
_CHUNK = 65536
_MAX_LINE = 16384


class MainProcess:
    """A running main process; see the module docstring."""

    def __init__(
        self,
        process: asyncio.subprocess.Process | AsyncBoxProcess,
        on_lines: Callable[[list[str]], None],
    ):
        self.process = process
        self.pid = process.pid
        self.pgid = process.pid  # start_new_session: the leader's pid names the group
        self.stopping = False
        self._on_lines = on_lines
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
        """Start ``/bin/sh -c args`` in the pod's box (the box's init reaps what it leaves)."""
        process = await AsyncBoxProcess.start(
            box, ["/bin/sh", "-c", args], env=env, cwd=cwd, limit=_CHUNK * 4
        )
        return cls(process, on_lines)  # type: ignore[arg-type]

    async def _read(self) -> None:
        stream = self.process.stdout
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
        code = await self.process.wait()
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
            await asyncio.wait_for(self.process.wait(), grace)
        self.kill_group(signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), grace)
        self._pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._pump
