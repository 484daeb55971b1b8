"""The one line ``%load_ext podbook`` prints: which service the magics talk to.

The target is resolved by the client's own :func:`podbook.client.config.resolve_settings`
(with ``start_emulator=False``: no network call, no emulator start), which imports only the
standard library, so loading stays fast. This module only formats the line; the key itself
is never printed.
"""

from __future__ import annotations

from collections.abc import Mapping

from podbook.client.config import Settings, resolve_settings
from podbook.errors import PodbookError

HINT = "Try %pod create --help."


def target_line(settings: Settings) -> str:
    """The load line for resolved ``settings``."""
    if settings.local:
        # A recorded emulator (its key file exists) may or may not still run; nothing is
        # checked at load time.
        where = f"at {settings.rest_url}, " if settings.api_key is not None else ""
        reason = settings.local_reason or "no API key configured"
        return (
            f"podbook → the local emulator ({where}{reason}; it starts on first use if not"
            f" running). {HINT}"
        )
    return f"podbook → the {settings.describe()}. {HINT}"


def describe_target(env: Mapping[str, str] | None = None) -> str:
    """One line naming the service (cloud, custom URL or local emulator) and the key's source.

    A configuration the client would refuse is named too, rather than failing the load.
    """
    try:
        settings = resolve_settings(start_emulator=False, env=env)
    except PodbookError as exc:
        return f"podbook → cannot tell where the magics point: {exc}"
    return target_line(settings)
