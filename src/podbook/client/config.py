"""Where the client points, and with which key.

Resolution, first hit wins, per field (see ``docs/architecture.md``):

1. arguments (``api_key=``, ``url=``, ``rest_url=``, ``queue_url=``, ``v1_url=``, ``local=``);
2. environment: ``RUNPOD_API_KEY``; ``PODBOOK_REST_URL`` / ``PODBOOK_QUEUE_URL`` /
   ``PODBOOK_V1_URL``, or ``PODBOOK_URL`` for all three; ``PODBOOK_LOCAL=1`` forces the
   local emulator even when a key exists;
3. ``~/.runpod/config.toml`` as the service's own CLI writes it (``[default]`` with
   ``api_key = "..."``; the profile comes from ``RUNPOD_PROFILE``);
4. nothing configured: the local emulator (started when needed).

The key is held as a :class:`Secret`, so it never shows in a repr, a str, a log line or an
error.

This module is import-light on purpose (standard library only: no httpx, no pydantic), so
``%load_ext podbook`` can describe the target with :func:`resolve_settings` in a few
milliseconds. The local emulator's module is imported only when it is needed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from podbook.client._home import default_home
from podbook.client._secret import Secret, SecretLike, reveal
from podbook.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "DEFAULT_QUEUE_URL",
    "DEFAULT_REST_URL",
    "DEFAULT_V1_URL",
    "Secret",
    "SecretLike",
    "Settings",
    "default_home",
    "env_flag",
    "resolve_settings",
    "reveal",
    "runpod_config_path",
]

DEFAULT_REST_URL = "https://rest.runpod.io"
DEFAULT_QUEUE_URL = "https://api.runpod.ai"
DEFAULT_V1_URL = "https://rest.runpod.io"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def runpod_config_path() -> Path:
    """The file the service's own CLI writes its key to: ``~/.runpod/config.toml``."""
    return Path.home() / ".runpod" / "config.toml"


@dataclass(frozen=True)
class Settings:
    """A resolved target: three base URLs, a key, and where each came from.

    ``str(settings)`` names the target in one line (the notebook's ``%load_ext`` line is
    built from it), for example ``"RunPod cloud (key from RUNPOD_API_KEY)"`` or
    ``"local emulator at http://127.0.0.1:8765"``. The key is a :class:`Secret`.
    """

    rest_url: str
    queue_url: str
    v1_url: str
    api_key: Secret | None = field(repr=False)
    key_source: str = ""
    local: bool = False
    local_reason: str = ""
    """Why the local emulator was chosen: ``"PODBOOK_LOCAL is set"``, ``"local=True"`` or
    ``"no API key configured"`` (empty when not local)."""

    def __post_init__(self) -> None:
        for name in ("rest_url", "queue_url", "v1_url"):
            object.__setattr__(self, name, _normalize_url(getattr(self, name), name))

    @property
    def is_cloud(self) -> bool:
        """True when every base is the real service's default."""
        return (
            not self.local
            and self.rest_url == DEFAULT_REST_URL
            and self.queue_url == DEFAULT_QUEUE_URL
            and self.v1_url == DEFAULT_V1_URL
        )

    def describe(self) -> str:
        """One line naming the service and where the key came from (never the key)."""
        if self.local:
            if self.api_key is None:
                return "local emulator (not running yet; it starts on first use)"
            return f"local emulator at {self.rest_url}"
        key = f"key from {self.key_source}" if self.api_key is not None else "no API key"
        if self.is_cloud:
            return f"RunPod cloud ({key})"
        bases = {self.rest_url, self.queue_url, self.v1_url}
        where = self.rest_url if len(bases) == 1 else f"{self.rest_url} (REST)"
        return f"service at {where} ({key})"

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return (
            f"Settings(rest_url={self.rest_url!r}, queue_url={self.queue_url!r}, "
            f"v1_url={self.v1_url!r}, api_key={'**********' if self.api_key else None}, "
            f"key_source={self.key_source!r}, local={self.local!r}, "
            f"local_reason={self.local_reason!r})"
        )


def _normalize_url(url: str, name: str) -> str:
    url = (url or "").strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"{name} {url!r} is not an http(s) URL; set it like https://rest.runpod.io"
        )
    return url


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """The boolean variable ``name`` of ``env`` (1/0, true/false, yes/no, on/off; unset is
    false); anything else raises :class:`ConfigError` naming it."""
    raw = env.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean; set it to 1 or 0")


def _key_from_runpod_config(env: Mapping[str, str]) -> tuple[str, str] | None:
    """The key in ``~/.runpod/config.toml`` for the active profile, with its description."""
    path = runpod_config_path()
    profile = env.get("RUNPOD_PROFILE", "").strip() or "default"
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(
            f"cannot read {path}: {reason}; fix the file or run `runpod config` again"
        ) from None
    section = data.get(profile)
    if section is None:
        if profile != "default":
            raise ConfigError(
                f"profile [{profile}] (RUNPOD_PROFILE) is not in {path}; "
                "add it or unset RUNPOD_PROFILE"
            )
        return None
    key = section.get("api_key") if isinstance(section, dict) else None
    if not isinstance(key, str) or not key.strip():
        return None
    return key.strip(), f"{_display_path(path)} [{profile}]"


def _display_path(path: Path) -> str:
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def _first(*values: str | None) -> str | None:
    for value in values:
        if value is not None and value.strip():
            return value.strip()
    return None


def resolve_settings(
    *,
    api_key: str | SecretLike | None = None,
    url: str | None = None,
    rest_url: str | None = None,
    queue_url: str | None = None,
    v1_url: str | None = None,
    local: bool | None = None,
    home: str | os.PathLike[str] | None = None,
    start_emulator: bool = True,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve the target from arguments, environment, ``~/.runpod/config.toml``, or local.

    With ``local=True`` (or ``PODBOOK_LOCAL=1``, or nothing configured at all) the local
    emulator in ``home`` (default ``$PODBOOK_HOME``) is used; it is started when
    ``start_emulator`` is true. With ``start_emulator=False`` and no emulator running, the
    result still says ``local=True`` but points at the last known (or default) address, so
    callers can describe the target without starting anything.
    """
    env = os.environ if env is None else env
    secret = reveal(api_key)

    if local is not None:
        forced_local, reason = local, f"local={local!r}"
    else:
        forced_local, reason = env_flag(env, "PODBOOK_LOCAL"), "PODBOOK_LOCAL is set"
    if forced_local:
        return _local_settings(home, env, start_emulator, reason)

    key: str | None = None
    key_source = ""
    if secret is not None and secret.strip():
        key, key_source = secret.strip(), "argument"
    elif env.get("RUNPOD_API_KEY", "").strip():
        key, key_source = env["RUNPOD_API_KEY"].strip(), "RUNPOD_API_KEY"

    rest = _first(rest_url, url, env.get("PODBOOK_REST_URL"), env.get("PODBOOK_URL"))
    queue = _first(queue_url, url, env.get("PODBOOK_QUEUE_URL"), env.get("PODBOOK_URL"))
    v1 = _first(v1_url, url, env.get("PODBOOK_V1_URL"), env.get("PODBOOK_URL"))
    any_url = any(value is not None for value in (rest, queue, v1))

    if key is None and any_url:
        # A URL naming the local emulator gets the emulator's key, never the cloud key.
        emulator_key = _key_of_known_emulator(home, env, rest or "")
        if emulator_key is not None:
            key, key_source = emulator_key, "the local emulator's key file"

    if key is None:
        found = _key_from_runpod_config(env)
        if found is not None:
            key, key_source = found

    if key is None and not any_url:
        return _local_settings(home, env, start_emulator, "no API key configured")

    if key is None:
        raise ConfigError(
            f"no API key for {rest or queue or v1}; set RUNPOD_API_KEY or pass api_key=..."
        )

    return Settings(
        rest_url=rest or DEFAULT_REST_URL,
        queue_url=queue or DEFAULT_QUEUE_URL,
        v1_url=v1 or DEFAULT_V1_URL,
        api_key=Secret(key),
        key_source=key_source,
    )


def _key_of_known_emulator(
    home: str | os.PathLike[str] | None, env: Mapping[str, str], url: str
) -> str | None:
    """The local emulator's key when ``url`` is the address recorded in its home."""
    from podbook.client._local import read_emulator_record

    record = read_emulator_record(Path(home) if home else default_home(env))
    if record is None or record.url.rstrip("/") != url.rstrip("/"):
        return None
    return record.api_key.get_secret_value() if record.api_key else None


def _local_settings(
    home: str | os.PathLike[str] | None, env: Mapping[str, str], start: bool, reason: str
) -> Settings:
    """The local emulator's settings (started when ``start``), saying ``reason`` why."""
    from podbook.client._local import DEFAULT_LOCAL_URL, ensure_emulator, read_emulator_record

    home_dir = Path(home) if home else default_home(env)
    if start:
        emulator = ensure_emulator(home_dir)
        url, key = emulator.url, emulator.api_key
    else:
        record = read_emulator_record(home_dir)
        url = record.url if record else DEFAULT_LOCAL_URL
        key = record.api_key if record else None
    return Settings(
        rest_url=url,
        queue_url=url,
        v1_url=url,
        api_key=key,
        key_source=f"{_display_path(home_dir / 'emulator.key')}",
        local=True,
        local_reason=reason,
    )
