"""Bodies at the limits of what a process can be started with (``podbook.api.container``),
shared by the api and emulator tests."""

from __future__ import annotations

from podbook.api import MAX_ARGS_ENV_BYTES
from podbook.api.container import container_size_errors

STRING_OVERHEAD = 9
"""What Linux counts for each argument or environment string beside its bytes: its NUL and
its 8-byte pointer."""


def filled_env(args: str | None, value_size: int) -> dict[str, str]:
    """Variables with values of ``value_size`` characters (the last one shorter) that bring
    ``args`` and ``env`` to exactly :data:`~podbook.api.MAX_ARGS_ENV_BYTES`."""
    left = MAX_ARGS_ENV_BYTES - (len(args) + STRING_OVERHEAD if args else 0)
    env: dict[str, str] = {}
    while True:
        name = f"V{len(env)}"
        size = len(name) + 1 + value_size + STRING_OVERHEAD
        if left - size < 32:
            break
        env[name] = "y" * value_size
        left -= size
    env["LAST"] = "y" * (left - len("LAST=") - STRING_OVERHEAD)
    assert not container_size_errors(args, env) and container_size_errors(args, {**env, "": ""})
    return env
