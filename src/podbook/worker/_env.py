"""``podbook worker-env``: the ``RUNPOD_*`` variables that point an unmodified ``runpod``
worker at a broker (the local emulator)."""

from __future__ import annotations

import shlex
from pathlib import Path

from podbook.worker._config import DEFAULT_PING_INTERVAL_MS, new_worker_id, webhook_templates

__all__ = ["format_exports", "runpod_config_note", "worker_env"]


def worker_env(
    queue_url: str,
    endpoint_id: str,
    worker_key: str,
    *,
    worker_id: str | None = None,
    ping_interval_ms: int = DEFAULT_PING_INTERVAL_MS,
) -> dict[str, str]:
    """Every variable a ``runpod.serverless.start`` worker needs to serve ``endpoint_id``."""
    env = webhook_templates(queue_url, endpoint_id)
    env.update(
        {
            "RUNPOD_AI_API_KEY": worker_key,
            "RUNPOD_POD_ID": worker_id or new_worker_id(),
            "RUNPOD_ENDPOINT_ID": endpoint_id,
            "RUNPOD_PING_INTERVAL": str(ping_interval_ms),
            "RUNPOD_SKIP_GPU_CHECK": "true",
            "RUNPOD_SKIP_AUTO_SYSTEM_CHECKS": "true",
        }
    )
    return env


def runpod_config_note(home: Path | None = None) -> str:
    """The warning about ``~/.runpod/config.toml``, stronger when the file exists."""
    path = (home or Path.home()) / ".runpod" / "config.toml"
    if path.is_file():
        return (
            f"# WARNING: {path} exists: the runpod SDK sends the api_key found there instead of\n"
            "# RUNPOD_AI_API_KEY, and the emulator refuses it. Start the worker with\n"
            "# HOME pointing at another directory (e.g. HOME=$(mktemp -d) python handler.py)."
        )
    return (
        "# Note: the runpod SDK prefers an api_key in ~/.runpod/config.toml over\n"
        "# RUNPOD_AI_API_KEY; keep that file away from workers that use these variables."
    )


def format_exports(env: dict[str, str]) -> str:
    """``export NAME='value'`` lines (quoted so ``$ID`` placeholders stay literal)."""
    return "\n".join(f"export {name}={shlex.quote(value)}" for name, value in env.items())
