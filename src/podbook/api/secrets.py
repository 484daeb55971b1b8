"""Recognising secret-looking environment variables, so they never reach a repr or a log."""

from __future__ import annotations

from collections.abc import Mapping

MASK = "••••••"
_SECRET_NAMES = frozenset({"JUPYTER_PASSWORD", "PUBLIC_KEY"})
_SECRET_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable named ``name`` holds a secret by its name alone."""
    upper = name.upper()
    return upper in _SECRET_NAMES or any(part in upper for part in _SECRET_PARTS)


def mask_env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    """A copy of ``env`` with every secret-looking value replaced by ``MASK``."""
    if env is None:
        return None
    return {key: (MASK if is_secret_name(key) else value) for key, value in env.items()}
