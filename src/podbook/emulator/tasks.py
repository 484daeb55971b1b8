"""Small asyncio helpers shared by the emulator's background loops (no Starlette)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel_and_wait(task: asyncio.Future[Any] | None) -> None:
    """Cancel ``task`` (``None``: nothing to do) and wait until it has ended.

    Its cancellation is not an error; any other exception it ended with is raised.
    """
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
