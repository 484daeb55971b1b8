"""The SSH key podbook connects to pods with, and its registration on the account.

:func:`find_key` picks the private key: the user's own ``~/.ssh/id_ed25519``, ``id_rsa`` or
``id_ecdsa`` (the first that has its ``.pub`` beside it and needs no passphrase), else a key
podbook makes once at ``<podbook home>/ssh/id_ed25519`` (file 0600, folder 0700; the home is
``$PODBOOK_HOME`` or ``~/.podbook``). :func:`ensure_key_registered` makes sure its public half
is one of the account's SSH keys (``client.account.ssh_keys``), which a pod receives when it
is created, and says in one line what it did.

Only public keys and fingerprints ever appear in a message, a repr or a log.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import asyncssh

from podbook.client.config import default_home

if TYPE_CHECKING:
    from podbook.client import Client

__all__ = [
    "USER_KEY_NAMES",
    "KeyRegistration",
    "SshKeyPair",
    "ensure_key_registered",
    "find_key",
    "is_registered",
    "load_key",
    "podbook_key_path",
    "same_key",
]

USER_KEY_NAMES = ("id_ed25519", "id_rsa", "id_ecdsa")
"""The user's key files tried, in order, in ``~/.ssh``."""


@dataclass(frozen=True)
class SshKeyPair:
    """A private key file and its public half (never the private key's content)."""

    private: Path
    """The private key file (``client_keys`` of the connection)."""
    public_line: str
    """The OpenSSH public key line (``ssh-ed25519 AAAA… comment``)."""
    origin: Literal["user", "podbook", "given"]
    """``user``: one of ``~/.ssh/id_*``; ``podbook``: podbook's own key; ``given``: named by
    the caller."""
    created: bool = False
    """True when this call made the key (podbook's own key, the first time)."""

    @property
    def public(self) -> Path:
        """The public key file (``<private>.pub``)."""
        return self.private.with_name(self.private.name + ".pub")

    @property
    def fingerprint(self) -> str:
        """The key's SHA-256 fingerprint, as ``ssh-keygen -l`` shows it."""
        return str(asyncssh.import_public_key(self.public_line).get_fingerprint("sha256"))

    def describe(self) -> str:
        """``~/.ssh/id_ed25519.pub (SHA256:…)``: the public file, with ``~`` for home."""
        return f"{_tilde(self.public)} ({self.fingerprint})"


@dataclass(frozen=True)
class KeyRegistration:
    """What :func:`ensure_key_registered` did; ``str()`` is one line a magic can print."""

    key: SshKeyPair
    added: bool
    """True when the key was added to the account by this call."""

    def __str__(self) -> str:
        made = f"made a podbook SSH key {self.key.describe()}; " if self.key.created else ""
        if self.added:
            return (
                f"{made}registered SSH key {self.key.describe()} on the account "
                "(pods created from now on accept it; older pods do not)"
            )
        return f"{made}SSH key {self.key.describe()} is registered on the account"


def podbook_key_path(home: Path | None = None) -> Path:
    """Where podbook's own key lives: ``<podbook home>/ssh/id_ed25519``."""
    return (home if home is not None else default_home()) / "ssh" / "id_ed25519"


def find_key(
    *,
    ssh_dir: Path | None = None,
    home: Path | None = None,
    create: bool = True,
) -> SshKeyPair:
    """The key to connect with: the user's own, else podbook's (made once when ``create``).

    ``ssh_dir`` is the user's ``~/.ssh`` (default), ``home`` the podbook home (default
    ``$PODBOOK_HOME`` or ``~/.podbook``). A user key needs its ``.pub`` beside it and no
    passphrase (podbook never prompts); keys that do not qualify are passed over.
    """
    folder = ssh_dir if ssh_dir is not None else Path.home() / ".ssh"
    for name in USER_KEY_NAMES:
        found = _usable(folder / name, "user")
        if found is not None:
            return found
    path = podbook_key_path(home)
    found = _usable(path, "podbook")
    if found is not None:
        _tighten(path)
        return found
    if not create:
        raise FileNotFoundError(
            f"no SSH key: none of ~/.ssh/{{{','.join(USER_KEY_NAMES)}}} with a .pub, and no "
            f"podbook key at {path}"
        )
    return _make_podbook_key(path)


def load_key(path: str | Path) -> SshKeyPair:
    """A key pair named by the caller (its private file; the ``.pub`` must be beside it)."""
    private = Path(path).expanduser()
    found = _usable(private, "given")
    if found is None:
        raise FileNotFoundError(
            f"{private} is not a usable SSH key: it needs its {private.name}.pub beside it "
            "and no passphrase"
        )
    return found


def same_key(a: str, b: str) -> bool:
    """True when two public key lines name the same key (type and body; comments aside)."""
    return a.split()[:2] == b.split()[:2]


def ensure_key_registered(client: Client, key: SshKeyPair | None = None) -> KeyRegistration:
    """Make sure ``key`` (default :func:`find_key`) is one of the account's SSH keys.

    Adds it, keeping the keys already there, when it is missing. A pod gets the account's
    keys when it is created, so a pod made before the key was added does not accept it.
    """
    key = key if key is not None else find_key()
    present = client.account.ssh_keys.get().keys
    if any(same_key(line, key.public_line) for line in present):
        return KeyRegistration(key=key, added=False)
    client.account.ssh_keys.put([*present, key.public_line])
    return KeyRegistration(key=key, added=True)


def is_registered(client: Client, key: SshKeyPair) -> bool:
    """True when ``key`` is one of the account's SSH keys."""
    return any(same_key(line, key.public_line) for line in client.account.ssh_keys.get().keys)


# ---------------------------------------------------------------- internals


def _tilde(path: Path) -> str:
    with contextlib.suppress(ValueError, RuntimeError):
        return "~/" + path.relative_to(Path.home()).as_posix()
    return str(path)


def _usable(private: Path, origin: Literal["user", "podbook", "given"]) -> SshKeyPair | None:
    """The pair at ``private`` when both halves exist and the private half loads unprompted."""
    public = private.with_name(private.name + ".pub")
    if not (private.is_file() and public.is_file()):
        return None
    try:
        asyncssh.read_private_key(str(private))  # a passphrase or a bad file: not usable
        line = public.read_text(encoding="utf-8").strip().splitlines()[0].strip()
        asyncssh.import_public_key(line)
    except (OSError, ValueError, IndexError, asyncssh.KeyImportError, asyncssh.KeyEncryptionError):
        return None
    return SshKeyPair(private=private, public_line=line, origin=origin)


def _tighten(path: Path) -> None:
    """Folder 0700 and private file 0600 (a looser mode left by hand is corrected)."""
    with contextlib.suppress(OSError):
        if path.parent.stat().st_mode & 0o077:
            path.parent.chmod(0o700)
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)


def _make_podbook_key(path: Path) -> SshKeyPair:
    """Make podbook's ed25519 key at ``path``, under a lock (a concurrent maker's key wins if
    it was first)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    lock = os.open(path.parent / ".keygen.lock", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _usable(path, "podbook")
        if found is not None:
            return found
        key = asyncssh.generate_private_key(
            "ssh-ed25519", comment=f"podbook@{socket.gethostname()}"
        )
        tag = secrets.token_hex(4)
        temp = path.with_name(f".{path.name}.{tag}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key.export_private_key())
        os.replace(temp, path)
        public = path.with_name(path.name + ".pub")
        temp = path.with_name(f".{path.name}.pub.{tag}")
        temp.write_bytes(key.export_public_key())
        temp.chmod(0o644)
        os.replace(temp, public)
    finally:
        os.close(lock)  # releases the lock
    found = _usable(path, "podbook")
    if found is None:  # pragma: no cover - the files were just written
        raise FileNotFoundError(f"the podbook SSH key at {path} could not be read back")
    return SshKeyPair(private=path, public_line=found.public_line, origin="podbook", created=True)
