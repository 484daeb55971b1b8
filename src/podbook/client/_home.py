"""Where podbook keeps its local files (the local emulator's record, key, log and state).

Standard library only; :mod:`podbook.client.config` re-exports :func:`default_home`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["default_home"]


def default_home(env: Mapping[str, str] | None = None) -> Path:
    """The directory of the local emulator's files: ``$PODBOOK_HOME`` or ``~/.podbook``."""
    env = os.environ if env is None else env
    raw = env.get("PODBOOK_HOME", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".podbook"
