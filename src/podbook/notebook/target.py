"""The one line ``%load_ext podbook`` prints: which service the magics talk to.

This needs configuration resolution only (never a network call, never the emulator's
start), so loading stays fast. It follows the order of ``podbook.client.config``:
``PODBOOK_LOCAL`` → ``PODBOOK_URL``/``PODBOOK_REST_URL`` → ``RUNPOD_API_KEY`` →
``~/.runpod/config.toml`` → the local emulator. The key itself is never printed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

REAL_REST_URL = "https://rest.runpod.io"
HINT = "Try %pod create --help."


def _config_file_has_key() -> str | None:
    """The profile of ``~/.runpod/config.toml`` that holds an API key, if any."""
    path = Path.home() / ".runpod" / "config.toml"
    if not path.is_file():
        return None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    profile = os.environ.get("RUNPOD_PROFILE") or "default"
    section = data.get(profile)
    return profile if isinstance(section, dict) and section.get("api_key") else None


def _local_emulator_line(reason: str) -> str:
    home = Path(os.environ.get("PODBOOK_HOME") or Path.home() / ".podbook")
    try:
        url = json.loads((home / "emulator.json").read_text(encoding="utf-8")).get("url")
    except (OSError, ValueError, AttributeError):
        url = None
    where = f"at {url}, " if url else ""
    return (
        f"podbook → the local emulator ({where}{reason}; it starts on first use if not running). "
        f"{HINT}"
    )


def describe_target() -> str:
    """One line naming the service (cloud, custom URL or local emulator) and the key's source."""
    env = os.environ
    if env.get("PODBOOK_LOCAL", "").strip().lower() in ("1", "true", "yes", "on"):
        return _local_emulator_line("PODBOOK_LOCAL is set")
    key_source = "RUNPOD_API_KEY" if env.get("RUNPOD_API_KEY") else None
    if key_source is None and (profile := _config_file_has_key()):
        key_source = f"~/.runpod/config.toml [{profile}]"
    url = env.get("PODBOOK_URL") or env.get("PODBOOK_REST_URL")
    if url:
        key = f"key from {key_source}" if key_source else "no API key set"
        return f"podbook → the service at {url} ({key}). {HINT}"
    if key_source:
        return f"podbook → the RunPod cloud at {REAL_REST_URL} (key from {key_source}). {HINT}"
    return _local_emulator_line("no API key configured")
