"""Emulator settings: where it listens, where it keeps state, who may call it.

Accounts beyond the default one come from a TOML file (``--config``)::

    [rate_limits]          # optional; per account, per window
    minute = 600
    hour = 20000
    day = 200000

    [[accounts]]
    id = "team-b"                      # optional; derived from the first key otherwise
    keys = ["pb-full-key"]             # full access
    readonly_keys = ["pb-ro-key"]      # GET only; writes answer 403
    ssh_keys = ["ssh-ed25519 AAAA... me@host"]

    [[accounts.templates]]             # the account's own templates (stored)
    id = "tpl-mine"
    name = "mine"
    image = "me/image:1"
    env = { A = "1" }

The default account (id ``default``) holds the ``--api-key`` (or the generated key); a config
entry with ``id = "default"`` adds keys, SSH keys and templates to it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podbook.emulator.broker.config import BrokerSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_ACCOUNT_ID = "default"
WINDOWS: dict[str, int] = {"minute": 60, "hour": 3600, "day": 86400}
DEFAULT_QUOTAS: dict[str, int] = {"minute": 6000, "hour": 200_000, "day": 2_000_000}


class SettingsError(ValueError):
    """A configuration file or flag is invalid; the message names it and the fix."""


@dataclass
class AccountSpec:
    """One account as declared in configuration."""

    id: str
    keys: list[str] = field(default_factory=list)
    readonly_keys: list[str] = field(default_factory=list)
    ssh_keys: list[str] | None = None
    templates: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class EmulatorSettings:
    """Everything ``create_app`` needs; the CLI fills it from flags and the config file."""

    db_path: Path
    api_key: str
    accounts: list[AccountSpec] = field(default_factory=list)
    provision_seconds: float = 2.0
    start_seconds: float = 2.0
    log_interval_seconds: float = 5.0  # a RUNNING pod writes a periodic log line this often
    quotas: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_QUOTAS))
    ssh_proxy_host: str = "ssh.podbook.local"
    internal_domain: str = "podbook.internal"
    broker: BrokerSettings = field(default_factory=BrokerSettings)
    url: str = ""  # where the server listens (set by ``serve``; supervised workers use it)
    runtime: str = "none"  # "local": pods run for real (podbook.emulator.podruntime)
    home: Path | None = None  # the emulator's home (the local runtime keeps its trees there)
    sandbox: str = "none"  # local runtime: "bwrap" (podruntime/box.py) or "none"
    sandbox_note: str = ""  # why ``--sandbox auto`` fell back to the process runtime
    share_ro: tuple[Path, ...] = ()  # host folders every box shows read-only (--share-ro)
    max_running_pods: int = 16  # local runtime: more running pods answer the capacity error
    config_path: Path | None = None  # the --config file (account keys): hidden from pods

    def private_files(self) -> list[Path]:
        """The files no pod or worker may read, wherever they are: the database (with its
        ``-wal`` and ``-shm``) and the ``--config`` file, which hold the accounts' keys."""
        db = self.db_path
        files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
        return [*files, self.config_path] if self.config_path is not None else files

    def __repr__(self) -> str:  # never show keys
        return (
            f"EmulatorSettings(db_path={str(self.db_path)!r}, accounts={len(self.accounts) + 1}, "
            f"provision_seconds={self.provision_seconds}, start_seconds={self.start_seconds}, "
            f"quotas={self.quotas})"
        )


def parse_quota(text: str) -> tuple[str, int]:
    """Parse ``WINDOW=N`` (``minute=60``) from the command line."""
    name, sep, value = text.partition("=")
    name = name.strip().lower()
    if not sep or name not in WINDOWS or not value.strip().isdigit() or int(value) < 1:
        raise SettingsError(
            f"--rate-limit {text!r} is invalid: use WINDOW=N with WINDOW one of "
            f"{', '.join(WINDOWS)} and N a positive integer, e.g. --rate-limit minute=60"
        )
    return name, int(value)


def load_config(path: Path) -> tuple[list[AccountSpec], dict[str, int]]:
    """Read accounts and rate-limit quotas from a TOML config file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(
            f"--config {path}: file not found; pass an existing TOML file"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"--config {path}: not valid TOML ({exc}); fix the file") from None
    quotas: dict[str, int] = {}
    for name, value in (data.get("rate_limits") or {}).items():
        if name not in WINDOWS or not isinstance(value, int) or value < 1:
            raise SettingsError(
                f"--config {path}: [rate_limits] {name} = {value!r} is invalid; "
                f"use {', '.join(WINDOWS)} with positive integers"
            )
        quotas[name] = value
    accounts: list[AccountSpec] = []
    seen_keys: set[str] = set()
    for index, entry in enumerate(data.get("accounts") or []):
        keys = list(entry.get("keys") or [])
        readonly = list(entry.get("readonly_keys") or [])
        if not all(isinstance(k, str) and k for k in keys + readonly):
            raise SettingsError(
                f"--config {path}: accounts[{index}] keys must be non-empty strings"
            )
        if seen_keys & set(keys + readonly) or len(set(keys + readonly)) != len(keys + readonly):
            raise SettingsError(
                f"--config {path}: accounts[{index}] repeats an API key; each key may belong "
                "to one account with one scope"
            )
        seen_keys.update(keys + readonly)
        account_id = entry.get("id") or (f"acct-{index + 1}")
        ssh_keys = entry.get("ssh_keys")
        templates = list(entry.get("templates") or [])
        for tpl in templates:
            if not isinstance(tpl, dict) or not tpl.get("id") or not tpl.get("image"):
                raise SettingsError(
                    f"--config {path}: accounts[{index}].templates entries need 'id' and 'image'"
                )
        accounts.append(
            AccountSpec(
                id=str(account_id),
                keys=keys,
                readonly_keys=readonly,
                ssh_keys=list(ssh_keys) if ssh_keys is not None else None,
                templates=templates,
            )
        )
    return accounts, quotas
